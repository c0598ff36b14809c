package informer

// The algebra of hash ranges, in one place: what a Shard selects and what
// a shard.Member holds, claims and hands over are all []HashRange, sorted
// and merged as MergeRanges returns them.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// HashRange is a range of the 64-bit hash space, both ends included: the
// whole space is {0, math.MaxUint64}.
type HashRange struct {
	From, To uint64
}

// String formats r as two hexadecimal bounds.
func (r HashRange) String() string {
	return fmt.Sprintf("[%#016x, %#016x]", r.From, r.To)
}

// MergeRanges returns ranges sorted, with overlapping and adjacent ones
// merged; a range that ends before it starts is an error.
func MergeRanges(ranges []HashRange) ([]HashRange, error) {
	rs := slices.Clone(ranges)
	for _, r := range rs {
		if r.From > r.To {
			return nil, fmt.Errorf("informer: shard range %v ends before it starts", r)
		}
	}
	slices.SortFunc(rs, func(a, b HashRange) int {
		switch {
		case a.From < b.From:
			return -1
		case a.From > b.From:
			return 1
		}
		return 0
	})
	var out []HashRange
	for _, r := range rs {
		if n := len(out); n > 0 && (out[n-1].To == math.MaxUint64 || r.From <= out[n-1].To+1) {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// SplitRanges splits the whole hash space into n equal ranges, in order:
// the simplest assignment of a resource to n shards.
func SplitRanges(n int) []HashRange {
	if n <= 0 {
		return nil
	}
	out := make([]HashRange, n)
	step := math.MaxUint64/uint64(n) + 1
	for i := range n {
		from := uint64(i) * step
		to := from + step - 1
		if i == n-1 {
			to = math.MaxUint64
		}
		out[i] = HashRange{From: from, To: to}
	}
	return out
}

// FormatRanges writes ranges as "from-to" in hex, both ends included,
// separated by commas ("" for none): how a shard.Member publishes the
// ranges it holds.
func FormatRanges(ranges []HashRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = strconv.FormatUint(r.From, 16) + "-" + strconv.FormatUint(r.To, 16)
	}
	return strings.Join(parts, ",")
}

// ParseRanges reads ranges as FormatRanges writes them.
func ParseRanges(s string) ([]HashRange, error) {
	if s == "" {
		return nil, nil
	}
	var out []HashRange
	for _, part := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(part, "-")
		if !ok {
			return nil, fmt.Errorf("range %q is not FROM-TO", part)
		}
		f, err := strconv.ParseUint(from, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("range %q: %w", part, err)
		}
		t, err := strconv.ParseUint(to, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("range %q: %w", part, err)
		}
		out = append(out, HashRange{From: f, To: t})
	}
	return MergeRanges(out)
}

// IntersectRanges returns the parts of a that are also in b (both sorted and
// merged, as MergeRanges returns them).
func IntersectRanges(a, b []HashRange) []HashRange {
	var out []HashRange
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		from, to := max(a[i].From, b[j].From), min(a[i].To, b[j].To)
		if from <= to {
			out = append(out, HashRange{From: from, To: to})
		}
		if a[i].To < b[j].To {
			i++
		} else {
			j++
		}
	}
	return out
}

// SubtractRanges returns the parts of a not in b (both sorted and merged).
func SubtractRanges(a, b []HashRange) []HashRange {
	var out []HashRange
	j := 0
	for _, r := range a {
		from := r.From
		done := false
		for j < len(b) && b[j].To < from {
			j++
		}
		for k := j; k < len(b) && b[k].From <= r.To; k++ {
			if b[k].From > from {
				out = append(out, HashRange{From: from, To: b[k].From - 1})
			}
			if b[k].To >= r.To {
				done = true
				break
			}
			from = b[k].To + 1
		}
		if !done {
			out = append(out, HashRange{From: from, To: r.To})
		}
	}
	return out
}

// UnionRanges returns the merged union of a and b. Ranges that end before
// they start are left out.
func UnionRanges(a, b []HashRange) []HashRange {
	var ok []HashRange
	for _, r := range slices.Concat(a, b) {
		if r.From <= r.To {
			ok = append(ok, r)
		}
	}
	out, _ := MergeRanges(ok)
	return out
}

// RangesSize returns how much of the 2^64 hash space ranges cover, as a
// fraction of it.
func RangesSize(ranges []HashRange) float64 {
	var total float64
	for _, r := range ranges {
		total += float64(r.To-r.From) + 1
	}
	return total / math.Exp2(64)
}
