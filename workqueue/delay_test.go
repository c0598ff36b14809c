package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// delayedLen reports how many items wait in the delay heap.
func delayedLen[T comparable](q *Queue[T]) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.delayed)
}

// wantDueAfter checks that the queue stays empty until d has passed, the
// delay goroutine having run and found nothing due, and that item is queued
// exactly then; it takes item.
func wantDueAfter[T comparable](t *testing.T, q *Queue[T], item T, d time.Duration) {
	t.Helper()
	step(d - time.Nanosecond)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len 1ns before the deadline = %d, want 0", got)
	}
	step(time.Nanosecond)
	if got := mustGet(t, q); got != item {
		t.Fatalf("Get at the deadline = %v, want %v", got, item)
	}
}

func TestAddAfterWaitsForTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.AddAfter("a", 10*time.Millisecond)
		if got := q.Len(); got != 0 {
			t.Fatalf("Len right after AddAfter = %d, want 0", got)
		}
		wantDueAfter(t, q, "a", 10*time.Millisecond)
		if got := delayedLen(q); got != 0 {
			t.Errorf("delay heap holds %d items, want 0", got)
		}
	})
}

func TestAddAfterOrdersByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.AddAfter("c", 30*time.Millisecond)
		q.AddAfter("a", 10*time.Millisecond)
		q.AddAfter("b", 20*time.Millisecond)
		q.AddAfter("b2", 20*time.Millisecond) // same deadline as b: after b
		step(30 * time.Millisecond)
		if got := q.Len(); got != 4 {
			t.Fatalf("Len = %d, want the four items due", got)
		}
		if diff := cmp.Diff([]string{"a", "b", "b2", "c"}, getAll(t, q)); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
}

func TestAddAfterStepByStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.AddAfter("late", time.Hour)
		q.AddAfter("soon", 10*time.Millisecond) // earlier than the armed timer
		step(10 * time.Millisecond)
		if got := mustGet(t, q); got != "soon" {
			t.Fatalf("Get = %q, want soon", got)
		}
		step(time.Hour)
		if got := mustGet(t, q); got != "late" {
			t.Fatalf("Get = %q, want late", got)
		}
	})
}

func TestAddAfterDeduplicatesKeepingTheEarliestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, again time.Duration
	}{
		{"later duplicate ignored", 10 * time.Millisecond, 50 * time.Millisecond},
		{"earlier duplicate wins", 50 * time.Millisecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newTestQueue(t, Options[string]{})
				q.AddAfter("x", tc.first)
				q.AddAfter("x", tc.again)
				if got := delayedLen(q); got != 1 {
					t.Fatalf("delay heap holds %d items, want 1", got)
				}
				step(10 * time.Millisecond)
				if got := mustGet(t, q); got != "x" {
					t.Fatalf("Get = %q, want x", got)
				}
				q.Done("x")
				if got := delayedLen(q); got != 0 {
					t.Fatalf("delay heap holds %d items after x was due, want 0", got)
				}
				step(time.Hour)
				if got := q.Len(); got != 0 {
					t.Errorf("Len = %d, want 0: x was added once", got)
				}
				if got := q.Stats().Adds; got != 1 {
					t.Errorf("Adds = %d, want 1", got)
				}
			})
		})
	}
}

func TestAddAfterOfAQueuedItemIsMergedWhenDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("x")
		q.AddAfter("x", 10*time.Millisecond)
		step(10 * time.Millisecond)
		if got := delayedLen(q); got != 0 {
			t.Fatalf("delay heap holds %d items, want 0: the delayed x is due", got)
		}
		if got := q.Len(); got != 1 {
			t.Errorf("Len = %d, want 1: x was still queued when the delayed x came due", got)
		}
	})
}

func TestAddAfterWithoutDelayIsAdd(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddAfter("a", 0)
	q.AddAfter("b", -time.Second)
	if got := q.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2", got)
	}
	q.mu.Lock()
	started := q.delayStarted
	q.mu.Unlock()
	if started {
		t.Error("a non-positive delay started the delay goroutine")
	}
}

func TestShutDownStopsTheDelayGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, shutdown := range []func(*Queue[string]){(*Queue[string]).ShutDown, (*Queue[string]).ShutDownWithDrain} {
		q := New(Options[string]{})
		q.AddAfter("a", time.Hour)
		shutdown(q) // returns after the goroutine exited
		if got := delayedLen(q); got != 0 {
			t.Errorf("delay heap holds %d items after shutdown, want 0", got)
		}
	}
}

func TestAddRateLimitedUsesTheLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newTestQueue(t, Options[string]{}) // the default limiter
		q.AddRateLimited("a")
		if got := q.NumRequeues("a"); got != 1 {
			t.Errorf("NumRequeues = %d, want 1", got)
		}
		wantDueAfter(t, q, "a", 5*time.Millisecond) // first failure: 5ms
		q.Done("a")

		q.AddRateLimited("a")
		wantDueAfter(t, q, "a", 10*time.Millisecond) // second failure: 10ms
		q.Done("a")

		q.Forget("a")
		if got := q.NumRequeues("a"); got != 0 {
			t.Errorf("NumRequeues after Forget = %d, want 0", got)
		}
		if got := q.Stats().Retries; got != 2 {
			t.Errorf("Retries = %d, want 2", got)
		}
	})
}
