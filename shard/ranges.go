package shard

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kdyn/kdyn/informer"
)

// FormatRanges writes ranges as HeldAnnotation holds them.
func FormatRanges(ranges []informer.HashRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = strconv.FormatUint(r.From, 16) + "-" + strconv.FormatUint(r.To, 16)
	}
	return strings.Join(parts, ",")
}

// ParseRanges reads ranges as FormatRanges writes them.
func ParseRanges(s string) ([]informer.HashRange, error) {
	if s == "" {
		return nil, nil
	}
	var out []informer.HashRange
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
		out = append(out, informer.HashRange{From: f, To: t})
	}
	return informer.MergeRanges(out)
}

// Intersect returns the parts of a that are also in b (both sorted and
// merged, as MergeRanges returns them).
func Intersect(a, b []informer.HashRange) []informer.HashRange {
	var out []informer.HashRange
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		from, to := max(a[i].From, b[j].From), min(a[i].To, b[j].To)
		if from <= to {
			out = append(out, informer.HashRange{From: from, To: to})
		}
		if a[i].To < b[j].To {
			i++
		} else {
			j++
		}
	}
	return out
}

// Subtract returns the parts of a not in b (both sorted and merged).
func Subtract(a, b []informer.HashRange) []informer.HashRange {
	var out []informer.HashRange
	j := 0
	for _, r := range a {
		from := r.From
		done := false
		for j < len(b) && b[j].To < from {
			j++
		}
		for k := j; k < len(b) && b[k].From <= r.To; k++ {
			if b[k].From > from {
				out = append(out, informer.HashRange{From: from, To: b[k].From - 1})
			}
			if b[k].To >= r.To {
				done = true
				break
			}
			from = b[k].To + 1
		}
		if !done {
			out = append(out, informer.HashRange{From: from, To: r.To})
		}
	}
	return out
}
