package workqueue

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a manual clock: time moves only on Step, which fires the
// timers whose deadline it reaches.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

var _ clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{
		now:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		timers: map[*fakeTimer]struct{}{},
	}
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

// newTestQueue returns a queue on a fake clock, shut down when the test ends.
func newTestQueue[T comparable](t *testing.T, opts Options[T]) (*Queue[T], *fakeClock) {
	t.Helper()
	c := newFakeClock()
	q := newQueue(opts, c)
	t.Cleanup(q.ShutDown)
	return q, c
}

// liveness bounds how long a test waits for something that must happen
// promptly (a goroutine reacting); it never decides a measured figure.
const liveness = 10 * time.Second

// mustGet returns the next item, failing the test if none comes.
func mustGet[T comparable](t *testing.T, q *Queue[T]) T {
	t.Helper()
	type result struct {
		item     T
		shutdown bool
	}
	ch := make(chan result, 1)
	go func() {
		item, shutdown := q.Get()
		ch <- result{item, shutdown}
	}()
	select {
	case r := <-ch:
		if r.shutdown {
			t.Fatal("Get: shutdown=true, want an item")
		}
		return r.item
	case <-time.After(liveness):
		t.Fatal("Get: no item")
		var zero T
		return zero
	}
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

// waitForBlockedGets waits until n Get calls are blocked in q.
func waitForBlockedGets[T comparable](t *testing.T, q *Queue[T], n int) {
	t.Helper()
	waitFor(t, "blocked Get calls", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.waiting == n
	})
}
