package workqueue

import (
	"testing"
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

func TestAddAfterWaitsForTheDeadline(t *testing.T) {
	q, c := newTestQueue(t, Options[string]{})
	q.AddAfter("a", 10*time.Millisecond)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len right after AddAfter = %d, want 0", got)
	}
	c.Step(9 * time.Millisecond)
	// Not due on the clock, so no goroutine scheduling can have added it.
	if got := q.Len(); got != 0 {
		t.Fatalf("Len 1ms before the deadline = %d, want 0", got)
	}
	c.Step(time.Millisecond)
	if got := mustGet(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	if got := delayedLen(q); got != 0 {
		t.Errorf("delay heap holds %d items, want 0", got)
	}
}

func TestAddAfterOrdersByDeadline(t *testing.T) {
	q, c := newTestQueue(t, Options[string]{})
	q.AddAfter("c", 30*time.Millisecond)
	q.AddAfter("a", 10*time.Millisecond)
	q.AddAfter("b", 20*time.Millisecond)
	q.AddAfter("b2", 20*time.Millisecond) // same deadline as b: after b
	c.Step(30 * time.Millisecond)
	waitFor(t, "four items to be due", func() bool { return q.Len() == 4 })
	if diff := cmp.Diff([]string{"a", "b", "b2", "c"}, getAll(t, q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestAddAfterStepByStep(t *testing.T) {
	q, c := newTestQueue(t, Options[string]{})
	q.AddAfter("late", time.Hour)
	q.AddAfter("soon", 10*time.Millisecond) // earlier than the armed timer
	c.Step(10 * time.Millisecond)
	if got := mustGet(t, q); got != "soon" {
		t.Fatalf("Get = %q, want soon", got)
	}
	c.Step(time.Hour)
	if got := mustGet(t, q); got != "late" {
		t.Fatalf("Get = %q, want late", got)
	}
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
			q, c := newTestQueue(t, Options[string]{})
			q.AddAfter("x", tc.first)
			q.AddAfter("x", tc.again)
			if got := delayedLen(q); got != 1 {
				t.Fatalf("delay heap holds %d items, want 1", got)
			}
			c.Step(10 * time.Millisecond)
			if got := mustGet(t, q); got != "x" {
				t.Fatalf("Get = %q, want x", got)
			}
			q.Done("x")
			if got := delayedLen(q); got != 0 {
				t.Fatalf("delay heap holds %d items after x was due, want 0", got)
			}
			c.Step(time.Hour)
			if got := q.Len(); got != 0 {
				t.Errorf("Len = %d, want 0: x was added once", got)
			}
			if got := q.Stats().Adds; got != 1 {
				t.Errorf("Adds = %d, want 1", got)
			}
		})
	}
}

func TestAddAfterOfAQueuedItemIsMergedWhenDue(t *testing.T) {
	q, c := newTestQueue(t, Options[string]{})
	q.Add("x")
	q.AddAfter("x", 10*time.Millisecond)
	c.Step(10 * time.Millisecond)
	waitFor(t, "the delayed x to be due", func() bool { return delayedLen(q) == 0 })
	if got := q.Len(); got != 1 {
		t.Errorf("Len = %d, want 1: x was still queued when the delayed x came due", got)
	}
}

func TestAddAfterWithoutDelayIsAdd(t *testing.T) {
	q, _ := newTestQueue(t, Options[string]{})
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
		q := newQueue(Options[string]{}, newFakeClock())
		q.AddAfter("a", time.Hour)
		shutdown(q) // returns after the goroutine exited
		if got := delayedLen(q); got != 0 {
			t.Errorf("delay heap holds %d items after shutdown, want 0", got)
		}
	}
}

func TestAddRateLimitedUsesTheLimiter(t *testing.T) {
	q, c := newTestQueue(t, Options[string]{}) // default limiter on the fake clock
	q.AddRateLimited("a")
	if got := q.NumRequeues("a"); got != 1 {
		t.Errorf("NumRequeues = %d, want 1", got)
	}
	c.Step(4 * time.Millisecond)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len after 4ms = %d, want 0 (first retry waits 5ms)", got)
	}
	c.Step(time.Millisecond)
	if got := mustGet(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	q.Done("a")

	q.AddRateLimited("a") // second failure: 10ms
	c.Step(9 * time.Millisecond)
	if got := q.Len(); got != 0 {
		t.Fatalf("Len 9ms after the second failure = %d, want 0", got)
	}
	c.Step(time.Millisecond)
	mustGet(t, q)
	q.Done("a")

	q.Forget("a")
	if got := q.NumRequeues("a"); got != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", got)
	}
	if got := q.Stats().Retries; got != 2 {
		t.Errorf("Retries = %d, want 2", got)
	}
}
