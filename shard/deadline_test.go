package shard

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/lease"
)

// These tests run a Member with Run, its watchdog and drain loop on the
// fake clock of testing/synctest, against the fake server, with requests
// delayed or hung through fake.Client.Intercept.

// direct is the context of the test's own requests, which the intercepts
// let through: only the member's requests are slowed or hung.
var direct = context.WithValue(context.Background(), directKey{}, true)

type directKey struct{}

func fromTest(ctx context.Context) bool { return ctx.Value(directKey{}) != nil }

// hang waits until ctx ends, as a request on a dead connection does.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// drainer is a Drainer the test controls: while block is set, Drain waits
// for its context, as a drain of a reconcile that overruns does.
type drainer struct {
	mu      sync.Mutex
	block   bool
	calls   int
	expired int // calls whose context ended before they returned
}

func (d *drainer) Drain(ctx context.Context) error {
	d.mu.Lock()
	d.calls++
	block := d.block
	d.mu.Unlock()
	if !block && ctx.Err() == nil {
		return nil
	}
	<-ctx.Done()
	d.mu.Lock()
	d.expired++
	d.mu.Unlock()
	return ctx.Err()
}

func (d *drainer) set(block bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.block = block
}

func (d *drainer) counts() (calls, expired int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls, d.expired
}

// runMember starts m.Run in the bubble; the returned func stops it and
// waits for Run to return.
func runMember(t *testing.T, m *Member) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

const testNS = "kube-system"

// lease reads a member's Lease from the fake server.
func readLease(t *testing.T, c dynamic.Interface, ring, id string) (held []informer.HashRange, renew time.Time) {
	t.Helper()
	u, err := c.Resource(lease.GVR).Namespace(testNS).Get(direct, leaseName(ring, id), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := readPeer(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.held, p.record.RenewTime
}

// writePeer creates or renews the Lease of a peer the test plays, holding
// held.
func writePeer(t *testing.T, c dynamic.Interface, ring, id string, held []informer.HashRange) {
	t.Helper()
	leases := c.Resource(lease.GVR).Namespace(testNS)
	now := time.Now().UTC().Format(metav1.RFC3339Micro)
	u, err := leases.Get(direct, leaseName(ring, id), metav1.GetOptions{})
	if err != nil {
		u = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": leaseName(ring, id), "namespace": testNS, "labels": map[string]any{RingLabel: ring}},
		}}
	}
	_ = unstructured.SetNestedField(u.Object, id, "spec", "holderIdentity")
	_ = unstructured.SetNestedField(u.Object, int64(15), "spec", "leaseDurationSeconds")
	_ = unstructured.SetNestedField(u.Object, now, "spec", "renewTime")
	u.SetAnnotations(map[string]string{HeldAnnotation: informer.FormatRanges(held)})
	if err != nil {
		_, err = leases.Create(direct, u, metav1.CreateOptions{})
	} else {
		_, err = leases.Update(direct, u, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// renewPeer renews the Lease of peer id of ring "r", holding held, every
// period, until the returned stop is called; stop waits for the last
// renewal.
func renewPeer(t *testing.T, c dynamic.Interface, id string, held []informer.HashRange, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
			writePeer(t, c, "r", id, held)
		}
	}()
	return func() { cancel(); <-done }
}

// startWhole runs a member "a" of ring "r" with opts (Shard and the ring
// filled in) until it processes the whole space; stop ends it.
func startWhole(t *testing.T, c dynamic.Interface, opts Options) (m *Member, sh *informer.Shard, stop func()) {
	t.Helper()
	opts.Namespace, opts.Ring, opts.Identity = testNS, "r", "a"
	opts.Shard = newTestShard(t)
	m, err := New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	stop = runMember(t, m)
	waitFor(t, time.Minute, "a to process the whole space", func() bool { return slices.Equal(m.Processing(), whole) })
	return m, opts.Shard, stop
}

var whole = []informer.HashRange{{From: 0, To: math.MaxUint64}}

// waitFor advances the bubble's clock in small steps until cond holds,
// failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// When every request hangs, the watchdog closes the fence exactly
// RenewDeadline after the last accepted renewal was sent — the renewTime
// the server holds — stops all work (the Shard has no range, the drain is
// told at once), and no request outlives RequestTimeout.
func TestWatchdogStopsWorkWhileRequestsHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fake.NewClient()
		d := &drainer{}
		m, sh, stop := startWhole(t, c, Options{Drainers: []Drainer{d}})
		defer stop()
		uid := "5f0c4b8e-0000-4000-8000-000000000001"
		if !sh.HoldsValue(uid) {
			t.Fatal("Holds is false while the member processes everything")
		}

		var mu sync.Mutex
		var longest time.Duration
		c.Intercept(func(ctx context.Context, _ fake.Action) error {
			if fromTest(ctx) {
				return nil
			}
			start := time.Now()
			err := hang(ctx)
			mu.Lock()
			longest = max(longest, time.Since(start))
			mu.Unlock()
			return err
		})
		_, renew := readLease(t, c, "r", "a")
		deadline := renew.Add(m.opts.RenewDeadline)
		time.Sleep(time.Until(deadline) - time.Microsecond)
		if !sh.HoldsValue(uid) {
			t.Fatalf("the fence closed before the deadline (%v before it)", time.Until(deadline))
		}
		time.Sleep(time.Microsecond)
		if sh.HoldsValue(uid) {
			t.Fatal("Holds is still true at the renew deadline")
		}
		synctest.Wait()
		if got := sh.Ranges(); len(got) != 0 {
			t.Fatalf("the shard still has ranges %v after the deadline", got)
		}
		if calls, expired := d.counts(); calls == 0 || expired == 0 {
			t.Fatalf("drain: %d calls, %d with an ended context (want the drain told at the deadline, with its context already ended)", calls, expired)
		}
		time.Sleep(3 * m.opts.RequestTimeout)
		mu.Lock()
		defer mu.Unlock()
		if longest == 0 || longest > m.opts.RequestTimeout {
			t.Fatalf("the longest hung request lasted %v; RequestTimeout is %v", longest, m.opts.RequestTimeout)
		}
	})
}

// A peer's Lease change is dated when the read that saw it returned. Here
// a peer's last renewal lands just before a slow read (6 s, more than
// LeaseDuration − RenewDeadline) is served, and the reads after it are
// fast: dated from when that read was sent, the peer would be taken for
// gone while it may still process (until RenewDeadline after its
// renewal); dated from when it returned, not before LeaseDuration after
// the renewal.
func TestPeerChangeDatedAfterASlowRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fake.NewClient()
		writePeer(t, c, "r", "b", whole)
		var mu sync.Mutex
		slowNext := false
		var lastPeerRenewal time.Time
		c.Intercept(func(ctx context.Context, a fake.Action) error {
			if fromTest(ctx) {
				return nil
			}
			mu.Lock()
			slow := a.Verb == "list" && slowNext
			slowNext = false
			mu.Unlock()
			if !slow {
				return nil
			}
			select {
			case <-time.After(6 * time.Second):
			case <-ctx.Done():
				return ctx.Err()
			}
			// b's last renewal lands just before the read is served.
			writePeer(t, c, "r", "b", whole)
			mu.Lock()
			lastPeerRenewal = time.Now()
			mu.Unlock()
			return nil
		})
		stopPeer := renewPeer(t, c, "b", whole, time.Second)
		sh := newTestShard(t)
		m, err := New(c, Options{Namespace: testNS, Ring: "r", Identity: "a", Shard: sh, RequestTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		stop := runMember(t, m)
		defer stop()
		time.Sleep(20 * time.Second)
		if got := m.Processing(); len(got) != 0 {
			t.Fatalf("a processes %v while b renews", informer.FormatRanges(got))
		}
		stopPeer()
		mu.Lock()
		slowNext = true
		mu.Unlock()
		waitFor(t, 2*time.Minute, "a to take b's ranges", func() bool { return len(m.Processing()) > 0 })
		mu.Lock()
		last := lastPeerRenewal
		mu.Unlock()
		if last.IsZero() {
			t.Fatal("the slow read never happened")
		}
		if took := time.Since(last); took < 15*time.Second {
			t.Fatalf("a took b's ranges %v after b's last renewal landed, less than LeaseDuration (b may process until RenewDeadline, 10 s)", took)
		}
	})
}

// A drain that overruns neither stops the renewals nor blocks the member:
// the Lease is renewed every round meanwhile, the ranges kept stay fenced
// open, the drain's context ends at the deadline the member had when the
// drain began, and the release is published only after a drain succeeds.
func TestDrainDoesNotBlockRenewals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fake.NewClient()
		d := &drainer{}
		m, sh, stop := startWhole(t, c, Options{Drainers: []Drainer{d}})
		defer stop()

		// b joins (the test renews its Lease): a must let half go, and
		// its drain overruns.
		d.set(true)
		writePeer(t, c, "r", "b", nil)
		defer renewPeer(t, c, "b", nil, 2*time.Second)()
		waitFor(t, time.Minute, "a to let half of the space go", func() bool { return informer.RangesSize(sh.Ranges()) < 0.9 })
		kept := sh.Ranges()
		releasedAt := time.Now()
		var renewals []time.Time
		for time.Since(releasedAt) < 25*time.Second {
			time.Sleep(time.Second)
			held, renew := readLease(t, c, "r", "a")
			renewals = append(renewals, renew)
			if calls, expired := d.counts(); expired == 0 && informer.RangesSize(held) < 0.99 {
				t.Fatalf("a published the release of ranges whose drain has not finished (%d drains)", calls)
			}
			if !slices.Equal(sh.Ranges(), kept) {
				t.Fatalf("a's ranges moved from %v to %v during the drain", informer.FormatRanges(kept), informer.FormatRanges(sh.Ranges()))
			}
			if !sh.HoldsValue("x") && sh.ContainsValue("x") {
				t.Fatal("the fence closed during the drain")
			}
		}
		for i := 1; i < len(renewals); i++ {
			if gap := renewals[i].Sub(renewals[i-1]); gap > m.opts.RetryPeriod+time.Second {
				t.Fatalf("no renewal for %v during the drain", gap)
			}
		}
		if _, expired := d.counts(); expired == 0 {
			t.Fatal("the overrunning drain was never ended")
		}
		d.set(false)
		waitFor(t, time.Minute, "the release to be published", func() bool {
			held, _ := readLease(t, c, "r", "a")
			return slices.Equal(held, kept)
		})
	})
}

// A renewal answered only after the deadline it would extend does not
// extend it: the member stops everything, its next accepted write
// publishes no range, and only then does it claim again.
func TestLateRenewalStartsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := fake.NewClient()
		m, _, stop := startWhole(t, c, Options{RequestTimeout: 10 * time.Second})
		defer stop()
		var mu sync.Mutex
		slow := true
		var published []string // held annotation of each accepted write after the slow one
		c.Intercept(func(ctx context.Context, a fake.Action) error {
			if a.Verb != "update" || fromTest(ctx) {
				return nil
			}
			mu.Lock()
			s := slow
			slow = false
			mu.Unlock()
			if s {
				time.Sleep(m.opts.RenewDeadline) // answered after the deadline
			}
			return nil
		})
		// Record what every accepted write publishes from now on.
		l, err := c.Resource(lease.GVR).Namespace(testNS).List(direct, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.Resource(lease.GVR).Namespace(testNS).Watch(direct, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		recorded := make(chan struct{})
		go func() {
			defer close(recorded)
			for ev := range w.ResultChan() {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Modified && u.GetName() == "r-a" {
					mu.Lock()
					published = append(published, u.GetAnnotations()[HeldAnnotation])
					mu.Unlock()
				}
			}
		}()
		waitFor(t, time.Minute, "a to stop", func() bool { return len(m.Processing()) == 0 })
		waitFor(t, time.Minute, "a to claim again", func() bool { return slices.Equal(m.Processing(), whole) })
		synctest.Wait() // the watch has delivered the claim
		w.Stop()
		<-recorded
		mu.Lock()
		defer mu.Unlock()
		i := slices.Index(published, "")
		if i < 0 {
			t.Fatalf("after the deadline, no accepted write published no range: %q", published)
		}
		if !slices.Contains(published[i:], informer.FormatRanges(whole)) {
			t.Fatalf("no claim of the whole space after the write that published none: %q", published)
		}
		if slices.Contains(published[:i], "") {
			t.Fatalf("published %q", published)
		}
	})
}
