package workqueue

import (
	"testing"
	"testing/synctest"
	"time"
)

// Tests of time run in a testing/synctest bubble: there time.Now and the
// queue's timers read a fake clock that moves only when every goroutine of
// the bubble is blocked, so delays and latencies are exact.

// newTestQueue returns a queue shut down when the test ends (inside the
// bubble, when the test runs in one).
func newTestQueue[T comparable](t *testing.T, opts Options[T]) *Queue[T] {
	t.Helper()
	q := New(opts)
	t.Cleanup(q.ShutDown)
	return q
}

// step lets d pass on the bubble's clock, then waits until the queue's delay
// goroutine has moved the items due by then.
func step(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// liveness bounds how long a test outside a bubble waits for something that
// must happen promptly (a goroutine reacting); it never decides a measured
// figure.
const liveness = 10 * time.Second

// mustGet returns the next queued item, failing the test if none is queued:
// Get does not block.
func mustGet[T comparable](t *testing.T, q *Queue[T]) T {
	t.Helper()
	if q.Len() == 0 {
		t.Fatal("Get: no item queued")
	}
	item, shutdown := q.Get()
	if shutdown {
		t.Fatal("Get: shutdown=true, want an item")
	}
	return item
}

// waitForBlockedGets waits until every other goroutine of the bubble is
// blocked, and checks that n of them are Get calls blocked in q.
func waitForBlockedGets[T comparable](t *testing.T, q *Queue[T], n int) {
	t.Helper()
	synctest.Wait()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.waiting != n {
		t.Fatalf("%d Get calls blocked, want %d", q.waiting, n)
	}
}
