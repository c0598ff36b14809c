package shard

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/informer"
)

// leaseGVR is the resource members announce themselves with.
var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// The labels and annotations of a member's Lease.
const (
	// RingLabel names the ring a member's Lease belongs to; the members of
	// a ring find each other by it.
	RingLabel = "shard.kdyn.io/ring"
	// HeldAnnotation lists the hash ranges the member may be processing:
	// it adds a range here before it starts on it, and removes one only
	// after it has stopped. Ranges are "from-to" in hex, both ends
	// included, separated by commas; empty for none.
	HeldAnnotation = "shard.kdyn.io/held"
	// WeightAnnotation is the member's weight (1 when absent).
	WeightAnnotation = "shard.kdyn.io/weight"
)

// leaseName is the name of identity's Lease in ring.
func leaseName(ring, identity string) string { return ring + "-" + identity }

// peer is a member as read from its Lease.
type peer struct {
	identity string
	weight   int
	held     []informer.HashRange
	duration time.Duration
	renew    time.Time // spec.renewTime as written (for change detection)
	rv       string
}

// readPeer reads a member's Lease.
func readPeer(u *unstructured.Unstructured) (peer, error) {
	p := peer{rv: u.GetResourceVersion(), weight: 1}
	holder, _, err := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	if err != nil {
		return p, fmt.Errorf("lease %s: spec.holderIdentity: %w", u.GetName(), err)
	}
	p.identity = holder
	secs, _, err := unstructured.NestedInt64(u.Object, "spec", "leaseDurationSeconds")
	if err != nil {
		return p, fmt.Errorf("lease %s: spec.leaseDurationSeconds: %w", u.GetName(), err)
	}
	p.duration = time.Duration(secs) * time.Second
	if rt, _, _ := unstructured.NestedString(u.Object, "spec", "renewTime"); rt != "" {
		t, err := time.Parse(metav1.RFC3339Micro, rt)
		if err != nil {
			return p, fmt.Errorf("lease %s: spec.renewTime: %w", u.GetName(), err)
		}
		p.renew = t
	}
	ann := u.GetAnnotations()
	if w := ann[WeightAnnotation]; w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			return p, fmt.Errorf("lease %s: annotation %s=%q is not a positive integer", u.GetName(), WeightAnnotation, w)
		}
		p.weight = n
	}
	if p.held, err = ParseRanges(ann[HeldAnnotation]); err != nil {
		return p, fmt.Errorf("lease %s: annotation %s: %w", u.GetName(), HeldAnnotation, err)
	}
	return p, nil
}

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
