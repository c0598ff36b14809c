package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdyn/kdyn/dynamic/fake"
)

// fakeCache syncs when told.
type fakeCache struct {
	synced  chan struct{}
	running atomic.Bool
	stopped atomic.Bool
}

func newFakeCache() *fakeCache { return &fakeCache{synced: make(chan struct{})} }

func (c *fakeCache) Run(ctx context.Context) error {
	c.running.Store(true)
	<-ctx.Done()
	c.stopped.Store(true)
	return nil
}

func (c *fakeCache) WaitForSync(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// alwaysRunnable runs in every replica.
type alwaysRunnable struct{ RunnableFunc }

func (alwaysRunnable) NeedLeaderElection() bool { return false }

func get(t *testing.T, base, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The manager serves the probes and metrics on one address, runs caches
// first, controllers once they synced, runnables that need no leader from
// the start, and stops controllers before caches.
func TestManagerLifecycleAndProbes(t *testing.T) {
	m, err := NewManager(ManagerOptions{BindAddress: "127.0.0.1:0",
		MetricsHandler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "# metrics\n") })})
	if err != nil {
		t.Fatal(err)
	}
	cache := newFakeCache()
	m.AddCache(cache)
	var ctrlStarted, ctrlStopped, alwaysStarted atomic.Bool
	var cacheRunningAtCtrlStop atomic.Bool
	m.Add(RunnableFunc(func(ctx context.Context) error {
		ctrlStarted.Store(true)
		<-ctx.Done()
		cacheRunningAtCtrlStop.Store(!cache.stopped.Load())
		ctrlStopped.Store(true)
		return nil
	}))
	m.Add(alwaysRunnable{func(ctx context.Context) error { alwaysStarted.Store(true); <-ctx.Done(); return nil }})
	m.AddHealthCheck("custom", func(*http.Request) error { return nil })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	base := "http://" + m.Addr(t.Context()).String()
	waitFor(t, "the cache to run", cache.running.Load)
	waitFor(t, "the runnable that needs no leader", alwaysStarted.Load)
	if code, body := get(t, base, "/readyz"); code != http.StatusInternalServerError || !strings.Contains(body, "caches not synced") {
		t.Fatalf("/readyz before sync: %d %q", code, body)
	}
	if ctrlStarted.Load() {
		t.Fatal("a controller started before the caches synced")
	}
	close(cache.synced)
	waitFor(t, "the controller to start", ctrlStarted.Load)
	if code, body := get(t, base, "/readyz"); code != http.StatusOK || body != "ok" {
		t.Fatalf("/readyz after sync: %d %q", code, body)
	}
	if code, body := get(t, base, "/healthz?verbose"); code != http.StatusOK || !strings.Contains(body, "[+]custom ok") {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base, "/metrics"); code != http.StatusOK || body != "# metrics\n" {
		t.Fatalf("/metrics: %d %q", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if !ctrlStopped.Load() || !cacheRunningAtCtrlStop.Load() || !cache.stopped.Load() {
		t.Fatalf("stop order: controller stopped %v (cache still running then: %v), cache stopped %v", ctrlStopped.Load(), cacheRunningAtCtrlStop.Load(), cache.stopped.Load())
	}
}

// A failing health check makes /healthz fail, naming it.
func TestManagerHealthCheckFails(t *testing.T) {
	m, _ := NewManager(ManagerOptions{BindAddress: "127.0.0.1:0"})
	m.AddHealthCheck("disk", func(*http.Request) error { return errors.New("full") })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	base := "http://" + m.Addr(t.Context()).String()
	if code, body := get(t, base, "/healthz"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]disk failed: full") {
		t.Fatalf("/healthz: %d %q", code, body)
	}
}

// With leader election, of two managers on one Lease only the leader runs
// its controllers and is ready; cancelling it hands over (it releases).
// A cold standby (the default) runs no cache until it leads; a warm one
// runs its caches from the start.
func TestManagerLeaderElection(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) { testLeaderElection(t, warm) })
	}
}

func testLeaderElection(t *testing.T, warm bool) {
	client := fake.NewClient()
	type replica struct {
		m       *Manager
		cache   *fakeCache
		running atomic.Bool
		cancel  context.CancelFunc
		done    chan error
	}
	start := func(id string) *replica {
		r := &replica{done: make(chan error, 1)}
		m, err := NewManager(ManagerOptions{BindAddress: "127.0.0.1:0", LeaderElection: &LeaderElection{
			Client:    client,
			Namespace: "kube-system", Name: "gc", Identity: id, ReleaseOnCancel: true, WarmStandby: warm,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond,
		}})
		if err != nil {
			t.Fatal(err)
		}
		c := newFakeCache()
		close(c.synced)
		m.AddCache(c)
		r.cache = c
		m.Add(RunnableFunc(func(ctx context.Context) error {
			r.running.Store(true)
			<-ctx.Done()
			r.running.Store(false)
			return nil
		}))
		r.m = m
		ctx, cancel := context.WithCancel(t.Context())
		r.cancel = cancel
		go func() { r.done <- m.Run(ctx) }()
		return r
	}
	a, b := start("a"), start("b")
	var mu sync.Mutex
	waitFor(t, "a leader", func() bool { mu.Lock(); defer mu.Unlock(); return a.running.Load() != b.running.Load() })
	leader, standby := a, b
	if b.running.Load() {
		leader, standby = b, a
	}
	base := "http://" + standby.m.Addr(t.Context()).String()
	if code, body := get(t, base, "/readyz"); code != http.StatusInternalServerError || !strings.Contains(body, "not leading") {
		t.Fatalf("standby /readyz: %d %q", code, body)
	}
	if warm {
		waitFor(t, "the warm standby's cache to run", standby.cache.running.Load)
	} else if standby.cache.running.Load() {
		t.Fatal("a cold standby runs its cache before it leads")
	}
	if !leader.cache.running.Load() {
		t.Fatal("the leader's controllers run without its cache")
	}
	leader.cancel()
	if err := <-leader.done; err != nil {
		t.Fatalf("the leader's Run = %v", err)
	}
	waitFor(t, "the standby to take over", standby.running.Load)
	if !standby.cache.running.Load() {
		t.Fatal("the new leader's controllers run without its cache")
	}
	standby.cancel()
	if err := <-standby.done; err != nil {
		t.Fatalf("the new leader's Run = %v", err)
	}
	if !leader.cache.stopped.Load() || !standby.cache.stopped.Load() {
		t.Fatal("Run returned with a cache still running")
	}
}

// A runnable that ignores its context does not keep Run from returning:
// after ShutdownTimeout, Run's error names it (and what else did not
// stop), and everything that did stop has stopped.
func TestManagerNamesWhatDidNotStop(t *testing.T) {
	m, err := NewManager(ManagerOptions{ShutdownTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := newFakeCache()
	close(c.synced)
	m.AddCache(c)
	release := make(chan struct{})
	defer close(release)
	stuck, err := New("stuck", func(context.Context, string) (Result, error) { <-release; return Result{}, nil },
		Options[string]{ShutdownGracePeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	stuck.Add("k")
	m.Add(stuck)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitFor(t, "the reconcile to start", func() bool { return stuck.Queue().Stats().Processing == 1 })
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after ShutdownTimeout")
	}
	if err == nil || !strings.Contains(err.Error(), `runnable "stuck"`) || !strings.Contains(err.Error(), "ShutdownTimeout") {
		t.Fatalf("Run = %v; want an error naming the controller that did not stop", err)
	}
	if !c.stopped.Load() {
		t.Fatal("the cache was not stopped")
	}
}

// A runnable that fails ends the manager with its error, named.
func TestManagerStopsOnARunnablesError(t *testing.T) {
	m, err := NewManager(ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := make(chan struct{})
	m.Add(RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); close(other); return nil }))
	m.Add(RunnableFunc(func(context.Context) error { return errors.New("boom") }))
	err = m.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "runnable 1") {
		t.Fatalf("Run = %v", err)
	}
	select {
	case <-other:
	default:
		t.Fatal("the other runnable was not stopped")
	}
}

// The election needs a client of its own in its options, and its
// options are checked by NewManager.
func TestNewManagerChecksTheElection(t *testing.T) {
	if _, err := NewManager(ManagerOptions{LeaderElection: &LeaderElection{Namespace: "n", Name: "l", Identity: "a"}}); err == nil || !strings.Contains(err.Error(), "Client") {
		t.Errorf("no client: %v", err)
	}
	if _, err := NewManager(ManagerOptions{LeaderElection: &LeaderElection{Client: fake.NewClient(), Namespace: "n", Name: "l"}}); err == nil || !strings.Contains(err.Error(), "Identity") {
		t.Errorf("no identity: %v", err)
	}
}
