package shard

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/informer"
)

type hr = informer.HashRange

func TestRangesRoundTrip(t *testing.T) {
	in := []hr{{From: 0, To: 0xff}, {From: 0x1000, To: math.MaxUint64}}
	s := FormatRanges(in)
	if s != "0-ff,1000-ffffffffffffffff" {
		t.Fatalf("FormatRanges = %q", s)
	}
	out, err := ParseRanges(s)
	if err != nil || !cmp.Equal(in, out) {
		t.Fatalf("ParseRanges = %v, %v", out, err)
	}
	for _, bad := range []string{"1", "x-2", "1-y", "5-4"} {
		if _, err := ParseRanges(bad); err == nil {
			t.Errorf("ParseRanges(%q) accepted", bad)
		}
	}
	if out, err := ParseRanges(""); err != nil || out != nil {
		t.Errorf("ParseRanges(\"\") = %v, %v", out, err)
	}
}

// Intersect and Subtract agree with a point-by-point check on random sets.
func TestIntersectSubtract(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randRanges := func() []hr {
		var rs []hr
		for range rng.IntN(6) {
			a, b := rng.Uint64N(1000), rng.Uint64N(1000)
			rs = append(rs, hr{From: min(a, b), To: max(a, b)})
		}
		out, _ := informer.MergeRanges(rs)
		return out
	}
	in := func(rs []hr, v uint64) bool {
		for _, r := range rs {
			if v >= r.From && v <= r.To {
				return true
			}
		}
		return false
	}
	for range 500 {
		a, b := randRanges(), randRanges()
		i, s := Intersect(a, b), Subtract(a, b)
		for v := uint64(0); v < 1000; v++ {
			if in(i, v) != (in(a, v) && in(b, v)) {
				t.Fatalf("Intersect(%v, %v) = %v wrong at %d", a, b, i, v)
			}
			if in(s, v) != (in(a, v) && !in(b, v)) {
				t.Fatalf("Subtract(%v, %v) = %v wrong at %d", a, b, s, v)
			}
		}
	}
	full := []hr{{From: 0, To: math.MaxUint64}}
	if got := Subtract(full, []hr{{From: 0, To: 10}, {From: math.MaxUint64 - 1, To: math.MaxUint64}}); !cmp.Equal(got, []hr{{From: 11, To: math.MaxUint64 - 2}}) {
		t.Fatalf("Subtract at the ends = %v", got)
	}
}
