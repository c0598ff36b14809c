package leaderelection

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kdyn/kdyn/internal/lease"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tests in this file drive single attempts (tryAcquireOrRenew) on a
// fake clock, with no goroutine: the state machine of acquisition,
// renewal, expiry and release, step by step.

func newStepElector(t *testing.T, c *faultyClient, clk *fakeClock, id string) *Elector {
	t.Helper()
	e, err := newElector(c, Config{Namespace: testNS, Name: testName, Identity: id,
		Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}}}, clk)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func attempt(t *testing.T, e *Elector, renewing bool) outcome {
	t.Helper()
	out, err := e.tryAcquireOrRenew(context.Background(), e.clock.Now(), renewing)
	if out == failed {
		t.Logf("%s: attempt failed: %v", e.cfg.Identity, err)
	}
	return out
}

func TestAcquireCreatesTheLease(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	a := newStepElector(t, c, clk, "a")
	if out := attempt(t, a, false); out != acquired {
		t.Fatalf("outcome %v, want acquired", out)
	}
	u, rec := getLease(t, c, testNS, testName)
	now := lease.MicroTime(clk.Now())
	want := lease.Record{HolderIdentity: "a", LeaseDurationSeconds: 15, AcquireTime: now, RenewTime: now}
	if !rec.Equal(want) {
		t.Errorf("lease lease.Record %+v, want %+v", rec, want)
	}
	spec := u.Object["spec"].(map[string]any)
	if got := spec["renewTime"]; got != "2026-01-02T03:04:05.123456Z" {
		t.Errorf("renewTime %v, want microseconds in UTC", got)
	}
	if a.GetLeader() != "a" {
		t.Errorf("GetLeader %q", a.GetLeader())
	}
}

func TestRenewKeepsAcquireTimeAndTransitions(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 15, LeaseTransitions: 4})
	a := newStepElector(t, c, clk, "a")
	attempt(t, a, false) // observes x's lease
	clk.Step(15 * time.Second)
	if out := attempt(t, a, false); out != acquired {
		t.Fatalf("takeover: outcome %v", out)
	}
	_, first := getLease(t, c, testNS, testName)
	if first.LeaseTransitions != 5 {
		t.Errorf("transitions after takeover %d, want 5", first.LeaseTransitions)
	}
	gets, updates := c.gets.Load(), c.updates.Load()
	clk.Step(2 * time.Second)
	if out := attempt(t, a, true); out != acquired {
		t.Fatalf("renew: outcome %v", out)
	}
	if g, u := c.gets.Load()-gets, c.updates.Load()-updates; g != 0 || u != 1 {
		t.Errorf("renewal made %d gets and %d updates; want the optimistic path: 0 and 1", g, u)
	}
	_, second := getLease(t, c, testNS, testName)
	want := first
	want.RenewTime = lease.MicroTime(clk.Now())
	if !second.Equal(want) {
		t.Errorf("after renewal %+v, want %+v", second, want)
	}
}

func TestHeldLeaseExpiresByLocalObservation(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	// The holder's renewTime is a day off: a skewed clock elsewhere must
	// not matter, only when this candidate saw the record change.
	skewed := lease.MicroTime(clk.Now().Add(-24 * time.Hour))
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 15, AcquireTime: skewed, RenewTime: skewed})
	a := newStepElector(t, c, clk, "a")
	if out := attempt(t, a, false); out != held {
		t.Fatalf("fresh observation: outcome %v, want held", out)
	}
	clk.Step(10 * time.Second)
	// x renews: the record changes, so the local expiry clock restarts.
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 15, AcquireTime: skewed, RenewTime: skewed.Add(time.Second)})
	if out := attempt(t, a, false); out != held {
		t.Fatalf("after renewal: outcome %v, want held", out)
	}
	clk.Step(15*time.Second - time.Nanosecond)
	if out := attempt(t, a, false); out != held {
		t.Fatalf("1ns before expiry: outcome %v, want held", out)
	}
	clk.Step(time.Nanosecond)
	if out := attempt(t, a, false); out != acquired {
		t.Fatalf("at expiry: outcome %v, want acquired", out)
	}
	_, rec := getLease(t, c, testNS, testName)
	if rec.HolderIdentity != "a" || rec.LeaseTransitions != 1 || !rec.AcquireTime.Equal(lease.MicroTime(clk.Now())) {
		t.Errorf("after takeover %+v", rec)
	}
}

func TestLeaseDurationIsTheRecords(t *testing.T) {
	// Expiry uses the holder's leaseDurationSeconds, not this candidate's.
	c, clk := newFaultyClient(), newFakeClock()
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 3})
	a := newStepElector(t, c, clk, "a")
	attempt(t, a, false)
	clk.Step(3 * time.Second)
	if out := attempt(t, a, false); out != acquired {
		t.Fatalf("outcome %v, want acquired after x's 3s", out)
	}
}

func TestReleasedLeaseIsTakenAtOnce(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	putLease(t, c, testNS, testName, lease.Record{LeaseDurationSeconds: 1, LeaseTransitions: 7})
	a := newStepElector(t, c, clk, "a")
	if out := attempt(t, a, false); out != acquired {
		t.Fatalf("outcome %v, want acquired", out)
	}
	if _, rec := getLease(t, c, testNS, testName); rec.LeaseTransitions != 8 {
		t.Errorf("transitions %d, want 8", rec.LeaseTransitions)
	}
}

func TestConflictMeansNotAcquiredThisRound(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 15})
	a := newStepElector(t, c, clk, "a")
	b := newStepElector(t, c, clk, "b")
	attempt(t, a, false)
	attempt(t, b, false)
	clk.Step(15 * time.Second)
	// b reads the expired lease, but a writes it between b's read and b's
	// update.
	hook := func() {
		c.beforeUpdate.Store(nil)
		if out := attempt(t, a, false); out != acquired {
			t.Errorf("a: outcome %v", out)
		}
	}
	c.beforeUpdate.Store(&hook)
	out, err := b.tryAcquireOrRenew(context.Background(), clk.Now(), false)
	if out != failed || !apierrors.IsConflict(err) {
		t.Fatalf("b: outcome %v, err %v; want failed with a Conflict", out, err)
	}
	if got := err.Error(); got[:len("leaderelection: update lease kube-system/ctrl: ")] != "leaderelection: update lease kube-system/ctrl: " {
		t.Errorf("error %q does not name the lease", got)
	}
	// Next round b sees a's fresh lease: held.
	if out := attempt(t, b, false); out != held {
		t.Errorf("b next round: outcome %v, want held", out)
	}
	if _, rec := getLease(t, c, testNS, testName); rec.HolderIdentity != "a" || rec.LeaseTransitions != 1 {
		t.Errorf("lease %+v", rec)
	}
}

func TestRenewalFindsAnotherHolder(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	a := newStepElector(t, c, clk, "a")
	attempt(t, a, false)
	// Someone overwrites the lease (an operator, or a candidate whose
	// clock ran fast): a's optimistic update conflicts, its read shows b.
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "b", LeaseDurationSeconds: 15, LeaseTransitions: 1})
	clk.Step(2 * time.Second)
	if out := attempt(t, a, true); out != held {
		t.Fatalf("renewal: outcome %v, want held", out)
	}
	// Even once b's lease has expired, a renewal does not take it: the
	// term is over.
	clk.Step(20 * time.Second)
	if out := attempt(t, a, true); out != held {
		t.Fatalf("renewal of an expired lease of b: outcome %v, want held", out)
	}
}

func TestRenewalAfterUnrelatedChange(t *testing.T) {
	// A label added to the Lease changes its resourceVersion, not its
	// holder: the optimistic update conflicts, the slow path renews.
	c, clk := newFaultyClient(), newFakeClock()
	a := newStepElector(t, c, clk, "a")
	attempt(t, a, false)
	ri := c.Resource(lease.GVR).Namespace(testNS)
	u, _ := getLease(t, c, testNS, testName)
	u.SetLabels(map[string]string{"team": "x"})
	if _, err := ri.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Second)
	gets := c.gets.Load()
	if out := attempt(t, a, true); out != acquired {
		t.Fatalf("outcome %v, want acquired", out)
	}
	if c.gets.Load() != gets+1 {
		t.Error("no read after the conflict")
	}
	u, rec := getLease(t, c, testNS, testName)
	if rec.HolderIdentity != "a" || !rec.RenewTime.Equal(lease.MicroTime(clk.Now())) || u.GetLabels()["team"] != "x" {
		t.Errorf("lease %+v labels %v", rec, u.GetLabels())
	}
}

func TestReleaseWritesClientGosReleasedRecord(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "x", LeaseDurationSeconds: 15, LeaseTransitions: 2})
	a := newStepElector(t, c, clk, "a")
	attempt(t, a, false)
	clk.Step(15 * time.Second)
	attempt(t, a, false)
	clk.Step(time.Second)
	a.release(context.Background())
	_, rec := getLease(t, c, testNS, testName)
	now := lease.MicroTime(clk.Now())
	if d := cmp.Diff(lease.Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, LeaseTransitions: 3}, rec); d != "" {
		t.Errorf("released lease.Record (-want +got):\n%s", d)
	}

	// A lease someone else holds is left alone.
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "b", LeaseDurationSeconds: 15, LeaseTransitions: 4})
	u1, _ := getLease(t, c, testNS, testName)
	a.release(context.Background())
	if u2, _ := getLease(t, c, testNS, testName); u2.GetResourceVersion() != u1.GetResourceVersion() {
		t.Error("release wrote a lease held by another candidate")
	}
}

func TestFailedRequestsNameTheLeaseAndKeepTheStatus(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	c.failGets.Store(true)
	a := newStepElector(t, c, clk, "a")
	out, err := a.tryAcquireOrRenew(context.Background(), clk.Now(), false)
	if out != failed || !apierrors.IsInternalError(err) {
		t.Fatalf("outcome %v, err %v; want failed with the server's 500", out, err)
	}
	if want := "leaderelection: get lease kube-system/ctrl: "; err.Error()[:len(want)] != want {
		t.Errorf("err %q", err)
	}
}
