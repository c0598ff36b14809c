package workqueue

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Items of Add go before those of AddLowPriority; within each, in order.
func TestLowPriorityWaitsBehindAdds(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddLowPriority("init-1")
	q.AddLowPriority("init-2")
	q.Add("change-1")
	q.Add("change-2")
	q.AddLowPriority("init-1") // already waiting: merged, keeps its place
	if got := q.Len(); got != 4 {
		t.Fatalf("Len = %d, want 4", got)
	}
	want := []string{"change-1", "change-2", "init-1", "init-2"}
	if diff := cmp.Diff(want, getAll(t, q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// An Add of an item waiting with low priority moves it to the end of the
// items of Add, once: it is handed out once.
func TestAddPromotesALowPriorityItem(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.AddLowPriority("a")
	q.AddLowPriority("b")
	q.Add("x")
	q.Add("b") // promoted
	q.Add("b")
	if got := q.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
	if diff := cmp.Diff([]string{"x", "b", "a"}, getAll(t, q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := q.Stats().Adds; got != 3 {
		t.Errorf("Adds = %d, want 3", got)
	}
}

// Low priority never starves: under a stream of adds, one in every
// LowPriorityShare items handed out is a low-priority one.
func TestLowPriorityProgressesUnderLoad(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	for i := range 20 {
		q.AddLowPriority(fmt.Sprintf("init-%02d", i))
	}
	next := 0
	lows := 0
	for round := range 20 * LowPriorityShare {
		// Keep the high-priority side full.
		for q.Len()-(20-lows) < 4 {
			q.Add(fmt.Sprintf("change-%03d", next))
			next++
		}
		item := mustGet(t, q)
		q.Done(item)
		if item[:4] == "init" {
			lows++
			if lows*LowPriorityShare < round+1-LowPriorityShare {
				t.Fatalf("after %d items only %d low-priority ones", round+1, lows)
			}
		}
	}
	if lows != 20 {
		t.Fatalf("%d of 20 low-priority items handed out in %d rounds", lows, 20*LowPriorityShare)
	}
}

// A low-priority item added again while in processing is queued at Done
// with low priority; an Add meanwhile makes it high.
func TestReAddDuringProcessingKeepsThePriority(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	q.Add("b")
	for _, item := range []string{"a", "b"} {
		if got := mustGet(t, q); got != item {
			t.Fatalf("Get = %q, want %q", got, item)
		}
	}
	q.AddLowPriority("a")
	q.AddLowPriority("b")
	q.Add("b") // promoted while in processing
	q.Done("a")
	q.Done("b")
	q.Add("c")
	if diff := cmp.Diff([]string{"b", "c", "a"}, getAll(t, q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
