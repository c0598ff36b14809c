package informer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type hr = HashRange

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

// IntersectRanges and SubtractRanges agree with a point-by-point check on random sets.
func TestIntersectSubtract(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randRanges := func() []hr {
		var rs []hr
		for range rng.IntN(6) {
			a, b := rng.Uint64N(1000), rng.Uint64N(1000)
			rs = append(rs, hr{From: min(a, b), To: max(a, b)})
		}
		out, _ := MergeRanges(rs)
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
		i, s := IntersectRanges(a, b), SubtractRanges(a, b)
		for v := uint64(0); v < 1000; v++ {
			if in(i, v) != (in(a, v) && in(b, v)) {
				t.Fatalf("IntersectRanges(%v, %v) = %v wrong at %d", a, b, i, v)
			}
			if in(s, v) != (in(a, v) && !in(b, v)) {
				t.Fatalf("SubtractRanges(%v, %v) = %v wrong at %d", a, b, s, v)
			}
		}
	}
	full := []hr{{From: 0, To: math.MaxUint64}}
	if got := SubtractRanges(full, []hr{{From: 0, To: 10}, {From: math.MaxUint64 - 1, To: math.MaxUint64}}); !cmp.Equal(got, []hr{{From: 11, To: math.MaxUint64 - 2}}) {
		t.Fatalf("Subtract at the ends = %v", got)
	}
}

// UnionRanges merges and leaves out ill-formed ranges; RangesSize is the
// fraction of the space covered.
func TestUnionAndSize(t *testing.T) {
	got := UnionRanges([]hr{{From: 10, To: 20}, {From: 5, To: 1}}, []hr{{From: 21, To: 30}, {From: 0, To: 2}})
	if !cmp.Equal(got, []hr{{From: 0, To: 2}, {From: 10, To: 30}}) {
		t.Fatalf("UnionRanges = %v", got)
	}
	if s := RangesSize(SplitRanges(4)[:1]); s != 0.25 {
		t.Fatalf("RangesSize of a quarter = %v", s)
	}
	if s := RangesSize([]hr{{From: 0, To: math.MaxUint64}}); s != 1 {
		t.Fatalf("RangesSize of the space = %v", s)
	}
}
