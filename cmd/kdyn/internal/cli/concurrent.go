package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultConcurrency is how many objects apply sends at once unless
// --concurrency says otherwise.
const DefaultConcurrency = 8

// foundationKinds are kinds that other objects name and that admission
// may require to exist first (a Pod's ServiceAccount, the quota and limit
// ranges that apply to it, the claims, classes and roles others refer to).
// EachConcurrent sends them, all at once, before the other objects.
var foundationKinds = map[schema.GroupKind]bool{
	{Kind: "ServiceAccount"}:                                                   true,
	{Kind: "Secret"}:                                                           true,
	{Kind: "ConfigMap"}:                                                        true,
	{Kind: "LimitRange"}:                                                       true,
	{Kind: "ResourceQuota"}:                                                    true,
	{Kind: "PersistentVolume"}:                                                 true,
	{Kind: "PersistentVolumeClaim"}:                                            true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                            true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                        true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                               true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                  true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                         true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}: true,
}

// wave is when EachConcurrent sends an entry: 0 Namespaces and CRDs, one
// at a time; 1 foundation kinds; 2 everything else (bad documents too).
func wave(e *ManifestEntry) int {
	switch {
	case e.obj == nil:
		return 2
	case isNamespaceOrCRD(e.obj):
		return 0
	case foundationKinds[e.obj.GroupVersionKind().GroupKind()]:
		return 1
	}
	return 2
}

// slot is the outcome of one entry of EachConcurrent.
type slot struct {
	done   chan struct{}
	out    bytes.Buffer // what do printed, flushed to stdout in order
	res    *unstructured.Unstructured
	object string // the object's name in a failure message
	err    error
}

// EachConcurrent is Each with up to workers entries in flight at once, for
// commands whose objects do not depend on each other's order beyond what
// it keeps: Namespaces and CRDs are sent first, one at a time (objects of
// a CRD of the run still wait for it to be Established); then the
// foundation kinds (ServiceAccounts, Secrets, ConfigMaps, quotas, claims,
// classes, roles), concurrently; then every other object, concurrently.
// What do writes to out and the failures are printed in the order of
// entries, as Each would print them. With workers ≤ 1 or FailFast it is
// Each (one at a time, in order). It returns the objects do returned, in
// the order of entries.
func (r *ManifestRun) EachConcurrent(ctx context.Context, entries []*ManifestEntry, workers int, do func(ctx context.Context, t *ManifestTarget, out io.Writer) (*unstructured.Unstructured, error)) []*unstructured.Unstructured {
	if workers <= 1 || r.opts.FailFast {
		return r.Each(ctx, entries, func(ctx context.Context, t *ManifestTarget) (*unstructured.Unstructured, error) {
			return do(ctx, t, r.f.Streams.Out)
		})
	}
	slots := make([]*slot, len(entries))
	var waves [3][]int
	for i, e := range entries {
		slots[i] = &slot{done: make(chan struct{})}
		w := wave(e)
		waves[w] = append(waves[w], i)
	}
	one := func(i int) {
		s, e := slots[i], entries[i]
		defer close(s.done)
		if err := ctx.Err(); err != nil {
			s.err = err
			return
		}
		s.object, s.res, s.err = r.sendOne(ctx, e, func(ctx context.Context, t *ManifestTarget) (*unstructured.Unstructured, error) {
			return do(ctx, t, &s.out)
		})
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for w, idx := range waves {
			n := workers
			if w == 0 {
				n = 1
			}
			ForEach(len(idx), n, func(k int) { one(idx[k]) })
		}
	})
	defer wg.Wait()

	var results []*unstructured.Unstructured
	stopped := false
	for i, s := range slots {
		<-s.done
		if stopped {
			continue
		}
		if s.out.Len() > 0 {
			_, _ = r.f.Streams.Out.Write(s.out.Bytes())
		}
		if s.err != nil {
			r.report(entries[i], s.object, s.err)
			// Like Each, one report for a canceled run, not one per entry.
			stopped = ctx.Err() != nil && errors.Is(s.err, ctx.Err())
			continue
		}
		if s.res != nil {
			results = append(results, s.res)
		}
	}
	return results
}

// ForEach calls fn(i) for every i in [0, count) with at most limit calls
// at a time (at least one), and returns when all have returned.
func ForEach(count, limit int, fn func(int)) {
	var g errgroup.Group
	g.SetLimit(max(limit, 1))
	for i := range count {
		g.Go(func() error { fn(i); return nil })
	}
	_ = g.Wait()
}

// SummaryTo prints "configmap/x created" to w unless -o was given (the
// form of Summary for EachConcurrent's do).
func SummaryTo(w io.Writer, quiet bool, name, op string) {
	if !quiet {
		fmt.Fprintf(w, "%s %s\n", name, op)
	}
}

// LockedWriter serializes writes to W, so that lines written whole by
// concurrent goroutines (followed logs, evictions) do not mix.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes p to W while holding the lock.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
