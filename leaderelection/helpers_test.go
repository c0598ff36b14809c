package leaderelection

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/internal/lease"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness bounds how long a test waits for something that must happen
// promptly (a goroutine reacting); it never decides a measured figure.
const liveness = 10 * time.Second

// fakeClock is a manual clock: time moves only on Step, which fires the
// timers whose deadline it reaches.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

var _ clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), timers: map[*fakeTimer]struct{}{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) TimerAt(deadline time.Time) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, deadline: deadline, c: make(chan time.Time, 1)}
	if !deadline.After(c.now) {
		t.c <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	return t
}

// Step advances the clock by d and fires the timers now due.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.deadline.After(c.now) {
			delete(c.timers, t)
			t.c <- c.now
		}
	}
}

// pending returns the number of armed timers.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// next returns the earliest armed deadline.
func (c *fakeClock) next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for t := range c.timers {
		if first.IsZero() || t.deadline.Before(first) {
			first = t.deadline
		}
	}
	return first, !first.IsZero()
}

type fakeTimer struct {
	clock    *fakeClock
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	_, pending := t.clock.timers[t]
	delete(t.clock.timers, t)
	return pending
}

// waitFor polls cond until it holds, failing the test if it does not.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitTimers waits until n timers are armed: the elector goroutines are
// parked, waiting for the clock.
func waitTimers(t *testing.T, c *fakeClock, n int) {
	t.Helper()
	waitFor(t, "armed timers", func() bool { return c.pending() == n })
}

// faultyClient is a fake client whose Lease requests can be made to fail
// or to block until their context is done, and with a hook that runs
// before an update reaches the store (through fake.Client.Intercept).
type faultyClient struct {
	*fake.Client
	failGets     atomic.Bool
	failUpdates  atomic.Bool
	blockUpdates atomic.Bool
	gets         atomic.Int64
	updates      atomic.Int64
	beforeUpdate atomic.Pointer[func()]
}

func newFaultyClient(objs ...*unstructured.Unstructured) *faultyClient {
	c := &faultyClient{Client: fake.NewClient()}
	for _, o := range objs {
		if err := c.Add(o); err != nil {
			panic(err)
		}
	}
	c.Intercept(c.intercept)
	return c
}

// errServer is what a failing request returns: a 500 from the server.
var errServer = apierrors.NewInternalError(errors.New("boom"))

func (c *faultyClient) intercept(ctx context.Context, a fake.Action) error {
	if a.Resource != lease.GVR {
		return nil
	}
	switch a.Verb {
	case "get":
		c.gets.Add(1)
		if c.failGets.Load() {
			return errServer
		}
	case "update":
		c.updates.Add(1)
		if c.blockUpdates.Load() {
			<-ctx.Done()
			return ctx.Err()
		}
		if c.failUpdates.Load() {
			return errServer
		}
		if f := c.beforeUpdate.Load(); f != nil {
			(*f)()
		}
	}
	return nil
}

// getLease reads the Lease straight from the store.
func getLease(t *testing.T, c dynamic.Interface, ns, name string) (*unstructured.Unstructured, lease.Record) {
	t.Helper()
	u, err := c.Resource(lease.GVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := lease.Read(u)
	if err != nil {
		t.Fatal(err)
	}
	return u, r
}

// putLease writes rec into the Lease (creating it if need be), as another
// candidate would.
func putLease(t *testing.T, c dynamic.Interface, ns, name string, rec lease.Record) {
	t.Helper()
	ri := c.Resource(lease.GVR).Namespace(ns)
	u, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		u = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": name, "namespace": ns},
		}}
		lease.Write(u, rec)
		if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	lease.Write(u, rec)
	if _, err := ri.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// events records what an elector's callbacks and metrics were told.
type events struct {
	started chan context.Context // one per OnStartedLeading call

	mu      sync.Mutex
	stopped int
	leaders []string
	metrics []bool
}

func newEvents() *events { return &events{started: make(chan context.Context, 16)} }

func (ev *events) Leading(_ string, leading bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.metrics = append(ev.metrics, leading)
}

func (ev *events) callbacks() Callbacks {
	return Callbacks{
		OnStartedLeading: func(ctx context.Context) {
			ev.started <- ctx
			<-ctx.Done()
		},
		OnStoppedLeading: func() {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			ev.stopped++
		},
		OnNewLeader: func(id string) {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			ev.leaders = append(ev.leaders, id)
		},
	}
}

func (ev *events) snapshot() (stopped int, leaders []string, metrics []bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.stopped, append([]string(nil), ev.leaders...), append([]bool(nil), ev.metrics...)
}

// waitStarted returns the context OnStartedLeading was given.
func (ev *events) waitStarted(t *testing.T) context.Context {
	t.Helper()
	select {
	case ctx := <-ev.started:
		return ctx
	case <-time.After(liveness):
		t.Fatal("OnStartedLeading was not called")
		return nil
	}
}

// candidate is an elector under test, running.
type candidate struct {
	e      *Elector
	ev     *events
	cancel context.CancelFunc
	done   chan error
}

const testNS, testName = "kube-system", "ctrl"

func testConfig(id string, ev *events) Config {
	return Config{Namespace: testNS, Name: testName, Identity: id, Callbacks: ev.callbacks(), Metrics: ev}
}

// start runs an elector on clk until the test ends.
func start(t *testing.T, c dynamic.Interface, clk *fakeClock, cfg Config, ev *events) *candidate {
	t.Helper()
	e, err := newElector(c, cfg, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cd := &candidate{e: e, ev: ev, cancel: cancel, done: make(chan error, 1)}
	go func() { cd.done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-cd.done:
		case <-time.After(liveness):
			t.Error("Run did not return")
		}
	})
	return cd
}

// wait returns Run's result.
func (cd *candidate) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-cd.done:
		cd.done <- err // for the cleanup
		return err
	case <-time.After(liveness):
		t.Fatal("Run did not return")
		return nil
	}
}

// isDone reports whether ctx is done, without waiting.
func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}
