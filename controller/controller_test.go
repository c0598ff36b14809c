package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdyn/kdyn/workqueue"
)

// run starts c and returns a stop that cancels it and waits for Run.
func run[K comparable](t *testing.T, c *Controller[K]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// countingMetrics records a controller's metrics.
type countingMetrics struct {
	mu       sync.Mutex
	workers  int
	active   int
	results  map[string]int
	panics   int
	maxAlive int
}

func (m *countingMetrics) Workers(_ string, n int) { m.mu.Lock(); m.workers = n; m.mu.Unlock() }
func (m *countingMetrics) Started(string) {
	m.mu.Lock()
	m.active++
	m.maxAlive = max(m.maxAlive, m.active)
	m.mu.Unlock()
}
func (m *countingMetrics) Finished(_, result string, _ time.Duration) {
	m.mu.Lock()
	m.active--
	if m.results == nil {
		m.results = map[string]int{}
	}
	m.results[result]++
	m.mu.Unlock()
}
func (m *countingMetrics) Panicked(string) { m.mu.Lock(); m.panics++; m.mu.Unlock() }

func (m *countingMetrics) get(result string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.results[result]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// noDelay retries at once, for tests.
var noDelay = workqueue.NewItemExponentialRateLimiter[string](0, 0)

// Errors retry with backoff until success; a panic is recovered, counted
// and retried like an error; RequeueAfter comes back.
func TestReconcileOutcomes(t *testing.T) {
	var calls sync.Map // key → *atomic.Int32
	count := func(key string) int32 {
		v, _ := calls.LoadOrStore(key, new(atomic.Int32))
		return v.(*atomic.Int32).Add(1)
	}
	m := &countingMetrics{}
	c, err := New("widgets", func(ctx context.Context, key string) (Result, error) {
		n := count(key)
		switch key {
		case "flaky":
			if n < 3 {
				return Result{}, errors.New("not yet")
			}
		case "panics":
			if n == 1 {
				panic("boom")
			}
		case "periodic":
			if n < 3 {
				return Result{RequeueAfter: time.Millisecond}, nil
			}
		}
		return Result{}, nil
	}, Options[string]{Workers: 3, RateLimiter: noDelay, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	for _, k := range []string{"ok", "flaky", "panics", "periodic"} {
		c.Add(k)
	}
	waitFor(t, "every key to succeed", func() bool { return m.get("success") == 4 })
	if got := m.get("error"); got != 3 {
		t.Errorf("errors = %d, want 3 (flaky twice, the panic once)", got)
	}
	if got := m.get("requeue_after"); got != 2 {
		t.Errorf("requeue_after = %d, want 2", got)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.panics != 1 || m.workers != 3 {
		t.Errorf("panics %d, workers %d", m.panics, m.workers)
	}
	if c.queue.NumRequeues("flaky") != 0 {
		t.Error("a key that succeeded kept its backoff")
	}
}

// ReconciliationTimeout cancels a reconcile's context.
func TestReconciliationTimeout(t *testing.T) {
	got := make(chan error, 1)
	c, err := New("slow", func(ctx context.Context, key string) (Result, error) {
		<-ctx.Done()
		got <- ctx.Err()
		return Result{}, nil
	}, Options[string]{ReconciliationTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	c.Add("a")
	select {
	case err := <-got:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("context ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reconcile was not cut short")
	}
}

// At shutdown the reconciles in flight finish with a live context, keys
// still queued are dropped, and Run returns once the workers are done.
func TestGracefulShutdown(t *testing.T) {
	inFlight := make(chan struct{})
	release := make(chan struct{})
	var finished, started atomic.Int32
	var ctxErr atomic.Value
	c, err := New("drain", func(ctx context.Context, key string) (Result, error) {
		started.Add(1)
		if key == "long" {
			close(inFlight)
			<-release
			if err := ctx.Err(); err != nil {
				ctxErr.Store(err)
			}
		}
		finished.Add(1)
		return Result{}, nil
	}, Options[string]{})
	if err != nil {
		t.Fatal(err)
	}
	stop := run(t, c)
	c.Add("long")
	<-inFlight
	c.Add("queued-1")
	c.Add("queued-2")
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	waitFor(t, "the queue to shut down", c.queue.ShuttingDown)
	select {
	case <-stopped:
		t.Fatal("Run returned with a reconcile in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-stopped
	if ctxErr.Load() != nil {
		t.Errorf("the reconcile in flight saw its context end: %v", ctxErr.Load())
	}
	if finished.Load() != 1 || started.Load() != 1 {
		t.Errorf("started %d, finished %d; want only the one in flight", started.Load(), finished.Load())
	}
}

// A key is never reconciled by two workers at once, however often it is
// added.
func TestOneKeyOneWorker(t *testing.T) {
	var mu sync.Mutex
	busy := map[string]bool{}
	var overlap atomic.Bool
	var done atomic.Int32
	c, err := New("exclusive", func(ctx context.Context, key string) (Result, error) {
		mu.Lock()
		if busy[key] {
			overlap.Store(true)
		}
		busy[key] = true
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		busy[key] = false
		mu.Unlock()
		done.Add(1)
		return Result{}, nil
	}, Options[string]{Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	for i := range 400 {
		c.Add(fmt.Sprint(i % 5))
	}
	waitFor(t, "the queue to empty", func() bool { return c.queue.Len() == 0 && c.queue.Stats().Processing == 0 })
	if overlap.Load() {
		t.Fatal("a key was reconciled by two workers at once")
	}
}

// Keys of the initial list wait behind real changes.
func TestInitialKeysWaitBehindChanges(t *testing.T) {
	var mu sync.Mutex
	var order []string
	gate := make(chan struct{})
	c, err := New("prio", func(ctx context.Context, key string) (Result, error) {
		<-gate
		mu.Lock()
		order = append(order, key)
		mu.Unlock()
		return Result{}, nil
	}, Options[string]{})
	if err != nil {
		t.Fatal(err)
	}
	c.AddInitial("init-a")
	c.AddInitial("init-b")
	c.Add("change")
	run(t, c)
	close(gate)
	waitFor(t, "three reconciles", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 3 })
	if order[0] != "change" {
		t.Fatalf("order %v: the change did not go first", order)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	ok := func(context.Context, string) (Result, error) { return Result{}, nil }
	if _, err := New("", ok, Options[string]{}); err == nil {
		t.Error("no name accepted")
	}
	if _, err := New[string]("x", nil, Options[string]{}); err == nil {
		t.Error("nil func accepted")
	}
	if _, err := New("x", ok, Options[string]{Workers: -1}); err == nil {
		t.Error("negative workers accepted")
	}
	c, _ := New("x", ok, Options[string]{})
	run(t, c)
	waitFor(t, "Run to start", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.ran })
	if err := c.Run(t.Context()); err == nil {
		t.Error("a second Run was accepted")
	}
}

// Keys the replica does not own are dropped unreconciled; Drain waits for
// the reconciles of keys it gave up.
func TestOwnsAndDrain(t *testing.T) {
	var owned atomic.Value
	owned.Store(map[string]bool{"a": true, "slow": true})
	started := make(chan string, 10)
	release := make(chan struct{})
	c, err := New("sharded", func(ctx context.Context, key string) (Result, error) {
		started <- key
		if key == "slow" {
			<-release
		}
		return Result{}, nil
	}, Options[string]{Workers: 2, Owns: func(k string) bool { return owned.Load().(map[string]bool)[k] }})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	c.Add("b") // not ours
	c.Add("a")
	if got := <-started; got != "a" {
		t.Fatalf("reconciled %q first; b is not owned", got)
	}
	c.Add("slow")
	<-started
	owned.Store(map[string]bool{"a": true}) // "slow" left the shard
	drained := make(chan error, 1)
	go func() { drained <- c.Drain(t.Context()) }()
	select {
	case <-drained:
		t.Fatal("Drain returned while a key the replica gave up was still being reconciled")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-started:
		t.Fatalf("%q was reconciled", k)
	default:
	}
}

// A Drain whose context ends while a reconcile of a key the replica gave
// up still runs cancels that reconcile's context and names the key in its
// error; a reconcile of a key still owned is left alone.
func TestDrainCancelsOverrunningReconciles(t *testing.T) {
	var owned atomic.Value
	owned.Store(map[string]bool{"gone": true, "kept": true})
	started := make(chan string, 2)
	cancelled := make(chan string, 2)
	release := make(chan struct{})
	c, err := New("sharded", func(ctx context.Context, key string) (Result, error) {
		started <- key
		select {
		case <-ctx.Done():
			cancelled <- key
			return Result{}, ctx.Err()
		case <-release:
			return Result{}, nil
		}
	}, Options[string]{Workers: 2, Owns: func(k string) bool { return owned.Load().(map[string]bool)[k] }})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	defer close(release)
	c.Add("gone")
	c.Add("kept")
	<-started
	<-started
	owned.Store(map[string]bool{"kept": true})
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the drain's time is up already
	err = c.Drain(ctx)
	if err == nil || !strings.Contains(err.Error(), "gone") || strings.Contains(err.Error(), "kept") {
		t.Fatalf("Drain = %v, want an error naming the overrunning key gone only", err)
	}
	select {
	case k := <-cancelled:
		if k != "gone" {
			t.Fatalf("the reconcile of %q was cancelled", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the overrunning reconcile's context was not cancelled")
	}
	select {
	case k := <-cancelled:
		t.Fatalf("the reconcile of %q, still owned, was cancelled", k)
	case <-time.After(50 * time.Millisecond):
	}
}

// Ownership is checked and the reconcile recorded in one step: a Drain
// that runs after a key left the shard either waits for its reconcile or
// the reconcile never starts, however the two interleave.
func TestOwnsCheckAndTrackAreOneStep(t *testing.T) {
	for i := range 200 {
		var owned atomic.Bool
		owned.Store(true)
		var running atomic.Int32
		var late atomic.Bool // a reconcile ran after Drain returned
		drained := make(chan struct{})
		c, err := New("race", func(ctx context.Context, key string) (Result, error) {
			running.Add(1)
			defer running.Add(-1)
			select {
			case <-drained:
				late.Store(true)
			default:
			}
			time.Sleep(time.Millisecond)
			return Result{}, nil
		}, Options[string]{Workers: 4, Owns: func(string) bool { return owned.Load() }})
		if err != nil {
			t.Fatal(err)
		}
		stop := run(t, c)
		for k := range 20 {
			c.Add(strconv.Itoa(k))
		}
		owned.Store(false)
		if err := c.Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
		close(drained)
		if n := running.Load(); n != 0 {
			t.Fatalf("round %d: %d reconciles of keys no longer owned still ran after Drain returned", i, n)
		}
		stop()
		if late.Load() {
			t.Fatalf("round %d: a reconcile of a key no longer owned started after Drain returned", i)
		}
	}
}
