package leaderelection

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kdyn/kdyn/internal/lease"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The tests in this file run whole electors (Run) on a fake clock and the
// fake dynamic client. The elector's goroutines park on the clock's
// timers: a leader has two armed (the next renewal and the deadline
// watchdog), a candidate that does not lead one (its next attempt). Tests
// step the clock only once the electors are parked.

const (
	ld = DefaultLeaseDuration
	rd = DefaultRenewDeadline
	rp = DefaultRetryPeriod
)

// holderIs reports whether the Lease in c names id.
func holderIs(t *testing.T, c *faultyClient, id string) bool {
	objs := c.Objects(lease.GVR)
	if len(objs) == 0 {
		return false
	}
	r, err := lease.Read(objs[0])
	if err != nil {
		t.Error(err)
	}
	return r.HolderIdentity == id
}

// settle waits until the electors are parked: want returns how many
// timers that takes, given the state it sees (it is read after the count,
// so a candidate caught between its write and arming its timers is seen
// as the leader it has become).
func settle(t *testing.T, clk *fakeClock, want func() int) {
	t.Helper()
	waitFor(t, "electors to park on the clock", func() bool {
		p := clk.pending()
		return p == want()
	})
}

func TestRunLeadsRenewsAndStopsWhenCancelled(t *testing.T) {
	for _, release := range []bool{false, true} {
		name := map[bool]string{false: "keep lease", true: "ReleaseOnCancel"}[release]
		t.Run(name, func(t *testing.T) {
			c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
			cfg := testConfig("a", ev)
			cfg.ReleaseOnCancel = release
			t0 := clk.Now()
			cd := start(t, c, clk, cfg, ev)
			ctx := ev.waitStarted(t)
			if !cd.e.IsLeader() || cd.e.GetLeader() != "a" {
				t.Fatalf("IsLeader %v, GetLeader %q", cd.e.IsLeader(), cd.e.GetLeader())
			}
			waitTimers(t, clk, 2)
			for i := 1; i <= 5; i++ {
				clk.Step(rp)
				waitFor(t, "renewal", func() bool {
					_, r := getLease(t, c, testNS, testName)
					return r.RenewTime.Equal(lease.MicroTime(clk.Now()))
				})
				waitTimers(t, clk, 2)
			}
			if isDone(ctx) || !cd.e.IsLeader() {
				t.Fatal("not leading after renewals")
			}
			cd.cancel()
			if err := cd.wait(t); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !isDone(ctx) || cd.e.IsLeader() {
				t.Error("still leading after Run returned")
			}
			stopped, leaders, metrics := ev.snapshot()
			if stopped != 1 || !cmp.Equal(leaders, []string{"a"}) || !cmp.Equal(metrics, []bool{false, true, false}) {
				t.Errorf("stopped %d, OnNewLeader %q, metrics %v", stopped, leaders, metrics)
			}
			_, rec := getLease(t, c, testNS, testName)
			want := lease.Record{HolderIdentity: "a", LeaseDurationSeconds: 15, AcquireTime: lease.MicroTime(t0), RenewTime: lease.MicroTime(clk.Now())}
			if release {
				now := lease.MicroTime(clk.Now())
				want = lease.Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now}
			}
			if d := cmp.Diff(want, rec); d != "" {
				t.Errorf("lease (-want +got):\n%s", d)
			}
		})
	}
}

func TestLeadershipLostAtRenewDeadline(t *testing.T) {
	c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
	cd := start(t, c, clk, testConfig("a", ev), ev)
	ctx := ev.waitStarted(t)
	waitTimers(t, clk, 2)
	clk.Step(rp) // a successful renewal at t0+2s
	lastRenew := clk.Now()
	waitTimers(t, clk, 2)
	c.failUpdates.Store(true)
	c.failGets.Store(true)
	// Renewals fail at t0+4s … t0+10s; the term lasts until the deadline,
	// lastRenew+RenewDeadline = t0+12s.
	for range 4 {
		clk.Step(rp)
		waitTimers(t, clk, 2)
	}
	clk.Step(lastRenew.Add(rd).Sub(clk.Now()) - time.Nanosecond)
	waitTimers(t, clk, 2)
	if isDone(ctx) || !cd.e.IsLeader() {
		t.Fatal("stopped leading before the renew deadline")
	}
	clk.Step(time.Nanosecond)
	waitFor(t, "the term's context to be cancelled", func() bool { return isDone(ctx) })
	if lost := clk.Now(); !lost.Before(lastRenew.Add(ld)) {
		t.Errorf("lost at %v, not before the lease could expire (%v)", lost, lastRenew.Add(ld))
	}
	err := cd.wait(t)
	if !errors.Is(err, ErrLeadershipLost) || !apierrors.IsInternalError(err) {
		t.Fatalf("Run: %v; want ErrLeadershipLost wrapping the server's 500", err)
	}
	if !strings.Contains(err.Error(), "kube-system/ctrl") {
		t.Errorf("error %q does not name the lease", err)
	}
	if _, _, metrics := ev.snapshot(); !cmp.Equal(metrics, []bool{false, true, false}) {
		t.Errorf("metrics %v", metrics)
	}
}

func TestLeadershipLostWhileRenewalHangs(t *testing.T) {
	// The deadline is kept by its own timer: a renewal request that never
	// answers does not delay it.
	c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
	t0 := clk.Now()
	cd := start(t, c, clk, testConfig("a", ev), ev)
	ctx := ev.waitStarted(t)
	waitTimers(t, clk, 2)
	c.blockUpdates.Store(true)
	clk.Step(rp)
	waitFor(t, "the renewal to hang", func() bool { return c.updates.Load() == 1 })
	waitTimers(t, clk, 1) // the watchdog
	clk.Step(t0.Add(rd).Sub(clk.Now()) - time.Nanosecond)
	if isDone(ctx) {
		t.Fatal("stopped leading before the renew deadline")
	}
	clk.Step(time.Nanosecond)
	waitFor(t, "the term's context to be cancelled", func() bool { return isDone(ctx) })
	if err := cd.wait(t); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("Run: %v", err)
	}
}

// A renewal request that hangs (a dead connection) ends at RequestTimeout
// instead of taking the rest of the term: the next attempt renews, and
// the term goes on.
func TestHungRenewalEndsAtRequestTimeout(t *testing.T) {
	c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
	cfg := testConfig("a", ev)
	cfg.RequestTimeout = 20 * time.Millisecond // real time; the election runs on clk
	cd := start(t, c, clk, cfg, ev)
	ctx := ev.waitStarted(t)
	waitTimers(t, clk, 2)
	c.blockUpdates.Store(true)
	clk.Step(rp)
	waitFor(t, "the renewal to hang and time out", func() bool { return c.updates.Load() >= 2 })
	waitTimers(t, clk, 2) // the attempt failed: the next one and the watchdog are armed
	c.blockUpdates.Store(false)
	before := c.updates.Load()
	clk.Step(rp)
	waitFor(t, "the next renewal", func() bool { return c.updates.Load() > before })
	waitTimers(t, clk, 2)
	_, rec := getLease(t, c, testNS, testName)
	if !rec.RenewTime.Equal(lease.MicroTime(clk.Now())) {
		t.Fatalf("renewTime %v, want the second attempt's %v", rec.RenewTime, clk.Now())
	}
	if isDone(ctx) || !cd.e.IsLeader() {
		t.Fatal("a hung request ended the term")
	}
}

func TestLeadershipLostToAnotherHolder(t *testing.T) {
	c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
	cd := start(t, c, clk, testConfig("a", ev), ev)
	ctx := ev.waitStarted(t)
	waitTimers(t, clk, 2)
	waitFor(t, "OnNewLeader(a)", func() bool {
		_, leaders, _ := ev.snapshot()
		return len(leaders) == 1
	})
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "b", LeaseDurationSeconds: 15, LeaseTransitions: 1})
	clk.Step(rp) // well before the deadline: the read shows b
	waitFor(t, "the term's context to be cancelled", func() bool { return isDone(ctx) })
	err := cd.wait(t)
	if !errors.Is(err, ErrLeadershipLost) || !strings.Contains(err.Error(), `held by "b"`) {
		t.Fatalf("Run: %v", err)
	}
	if _, leaders, _ := ev.snapshot(); !cmp.Equal(leaders, []string{"a", "b"}) {
		t.Errorf("OnNewLeader %q", leaders)
	}
}

func TestTakeoverOnExpiryAndOnRelease(t *testing.T) {
	for _, release := range []bool{false, true} {
		name := map[bool]string{false: "killed leader", true: "released"}[release]
		t.Run(name, func(t *testing.T) {
			c, clk := newFaultyClient(), newFakeClock()
			evA, evB := newEvents(), newEvents()
			cfgA := testConfig("a", evA)
			cfgA.ReleaseOnCancel = release
			a := start(t, c, clk, cfgA, evA)
			evA.waitStarted(t)
			waitTimers(t, clk, 2)
			b := start(t, c, clk, testConfig("b", evB), evB)
			waitTimers(t, clk, 3)
			for range 5 { // a renews, b watches
				clk.Step(rp)
				waitTimers(t, clk, 3)
			}
			if holderIs(t, c, "b") || b.e.IsLeader() {
				t.Fatal("b took a valid lease")
			}
			_, last := getLease(t, c, testNS, testName)
			a.cancel() // without release, as good as a killed process
			if err := a.wait(t); err != nil {
				t.Fatal(err)
			}
			stoppedAt := clk.Now()
			// Step from timer to timer until b leads.
			for !holderIs(t, c, "b") {
				settle(t, clk, func() int {
					if holderIs(t, c, "b") {
						return 2
					}
					return 1
				})
				if holderIs(t, c, "b") {
					break
				}
				next, _ := clk.next()
				clk.Step(next.Sub(clk.Now()))
				if clk.Now().Sub(stoppedAt) > ld+rp {
					t.Fatalf("b did not take over within %v", ld+rp)
				}
			}
			evB.waitStarted(t)
			_, rec := getLease(t, c, testNS, testName)
			took := rec.AcquireTime
			if release {
				if d := took.Sub(stoppedAt); d > rp {
					t.Errorf("b took a released lease %v after the release, want within RetryPeriod %v", d, rp)
				}
			} else {
				if took.Before(last.RenewTime.Add(ld)) || took.After(last.RenewTime.Add(ld+rp)) {
					t.Errorf("b took over %v after a's last renewal, want within [%v, %v]", took.Sub(last.RenewTime), ld, ld+rp)
				}
			}
			if rec.LeaseTransitions != 1 {
				t.Errorf("leaseTransitions %d, want 1", rec.LeaseTransitions)
			}
			// OnNewLeader calls are made in order, coalescing changes seen
			// while one runs: the last is b.
			waitFor(t, "b's OnNewLeader(b)", func() bool {
				_, leaders, _ := evB.snapshot()
				return len(leaders) > 0 && leaders[len(leaders)-1] == "b"
			})
		})
	}
}

func TestHealthCheck(t *testing.T) {
	c, clk := newFaultyClient(), newFakeClock()
	ev := newEvents()
	cfg := testConfig("a", ev)
	// Leader work that ignores its context until the test lets it go.
	letGo := make(chan struct{})
	cfg.Callbacks.OnStartedLeading = func(ctx context.Context) {
		ev.started <- ctx
		<-letGo
	}
	cd := start(t, c, clk, cfg, ev)
	hc := cd.e.HealthCheck(5 * time.Second)
	if hc.Name() != "leaderElection" {
		t.Errorf("Name %q", hc.Name())
	}
	ctx := ev.waitStarted(t)
	t0 := clk.Now()
	waitTimers(t, clk, 2)
	if err := hc.Check(nil); err != nil {
		t.Fatalf("healthy leader: %v", err)
	}
	c.failUpdates.Store(true)
	c.failGets.Store(true)
	for range 4 {
		clk.Step(rp)
		waitTimers(t, clk, 2)
	}
	clk.Step(rd - 4*rp) // the deadline: t0+10s
	waitFor(t, "loss", func() bool { return isDone(ctx) })
	if err := hc.Check(nil); err != nil {
		t.Fatalf("within lease duration + grace: %v", err)
	}
	clk.Step(t0.Add(ld + 5*time.Second).Sub(clk.Now()))
	if err := hc.Check(nil); err != nil {
		t.Fatalf("at lease duration + grace: %v", err)
	}
	clk.Step(time.Millisecond)
	err := hc.Check(nil)
	if err == nil || !strings.Contains(err.Error(), "kube-system/ctrl") {
		t.Fatalf("work still running past lease duration + grace: %v", err)
	}
	close(letGo)
	if err := cd.wait(t); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("Run: %v", err)
	}
	if err := hc.Check(nil); err != nil {
		t.Errorf("after the work stopped: %v", err)
	}
}

func TestRunOnceAtATimeAndAgain(t *testing.T) {
	c, clk, ev := newFaultyClient(), newFakeClock(), newEvents()
	cd := start(t, c, clk, testConfig("a", ev), ev)
	ev.waitStarted(t)
	if err := cd.e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Run: %v", err)
	}
	waitTimers(t, clk, 2)
	putLease(t, c, testNS, testName, lease.Record{HolderIdentity: "b", LeaseDurationSeconds: 15, LeaseTransitions: 1})
	clk.Step(rp)
	if err := cd.wait(t); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("Run: %v", err)
	}
	// Standing again: the candidate waits for b's lease to expire, then
	// leads a second term.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cd.e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitTimers(t, clk, 1)
	clk.Step(ld)
	ev.waitStarted(t)
	if _, rec := getLease(t, c, testNS, testName); rec.HolderIdentity != "a" || rec.LeaseTransitions != 2 {
		t.Errorf("lease %+v", rec)
	}
}
