package workqueue

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// getAll takes every queued item without blocking, in order.
func getAll[T comparable](t *testing.T, q *Queue[T]) []T {
	t.Helper()
	var got []T
	for q.Len() > 0 {
		got = append(got, mustGet(t, q))
	}
	return got
}

func TestAddDeduplicates(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	for _, item := range []string{"a", "b", "a", "c", "b", "a"} {
		q.Add(item)
	}
	if got := q.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3", got)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, getAll(t, q)); diff != "" {
		t.Errorf("items handed out (-want +got):\n%s", diff)
	}
	if got := q.Stats().Adds; got != 3 {
		t.Errorf("Adds = %d, want 3 (duplicates are merged)", got)
	}
}

func TestReAddDuringProcessing(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	item := mustGet(t, q)

	// Added three times while in processing: not handed out before Done.
	q.Add("a")
	q.Add("a")
	q.Add("a")
	if got := q.Len(); got != 0 {
		t.Fatalf("Len while in processing = %d, want 0", got)
	}
	q.Done(item)
	if got := q.Len(); got != 1 {
		t.Fatalf("Len after Done = %d, want 1 (queued once)", got)
	}
	if got := mustGet(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	q.Done("a")
	if got := q.Len(); got != 0 {
		t.Errorf("Len after second Done = %d, want 0 (processed again exactly once)", got)
	}
}

func TestReAddDuringProcessingKeepsOtherItemsFirst(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	mustGet(t, q)
	q.Add("a") // re-added in processing: enters the queue at Done
	q.Add("b")
	q.Done("a")
	if diff := cmp.Diff([]string{"b", "a"}, getAll(t, q)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestDoneOfUnknownItemDoesNothing(t *testing.T) {
	q := newTestQueue(t, Options[string]{})
	q.Add("a")
	q.Done("a") // queued, not in processing
	q.Done("z") // never seen
	if got := q.Len(); got != 1 {
		t.Fatalf("Len = %d, want 1", got)
	}
	if m := q.Stats(); m.Processing != 0 || m.WorkDuration.Count != 0 {
		t.Errorf("Processing = %d, WorkDuration.Count = %d, want 0, 0", m.Processing, m.WorkDuration.Count)
	}
}

// TestNeverTwoWorkersOnOneItem hammers a few items from several producers
// while workers check, per item, that no other worker holds it.
func TestNeverTwoWorkersOnOneItem(t *testing.T) {
	const (
		items     = 20
		producers = 4
		addsEach  = 2000
		workers   = 8
	)
	q := New(Options[int]{})
	var (
		active    [items]atomic.Int32
		processed [items]atomic.Int64
		overlaps  atomic.Int64
		workersWG sync.WaitGroup
	)
	for range workers {
		workersWG.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if active[item].Add(1) != 1 {
					overlaps.Add(1)
				}
				processed[item].Add(1)
				runtime.Gosched()
				active[item].Add(-1)
				q.Done(item)
			}
		})
	}
	var producersWG sync.WaitGroup
	for p := range producers {
		producersWG.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 1))
			for range addsEach {
				q.Add(r.IntN(items))
				if r.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
			// Make sure every item is added at least once.
			for i := range items {
				q.Add(i)
			}
		})
	}
	producersWG.Wait()
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		workersWG.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(liveness):
		q.ShutDown()
		t.Fatalf("drain did not finish; metrics %+v", q.Stats())
	}

	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d times an item was handed to a second worker while in processing", n)
	}
	var total int64
	for i := range items {
		n := processed[i].Load()
		if n == 0 {
			t.Errorf("item %d never processed", i)
		}
		total += n
	}
	m := q.Stats()
	if m.Depth != 0 || m.Processing != 0 {
		t.Errorf("after drain Depth = %d, Processing = %d, want 0, 0", m.Depth, m.Processing)
	}
	if total != m.Adds {
		t.Errorf("processed %d items, Adds = %d: every accepted add must be processed once", total, m.Adds)
	}
	t.Logf("%d adds, %d accepted and processed", producers*(addsEach+items), total)
}

func TestShutDown(t *testing.T) {
	t.Run("Get returns shutdown at once and queued items are discarded", func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("a")
		q.Add("b")
		q.ShutDown()
		if !q.ShuttingDown() {
			t.Error("ShuttingDown = false after ShutDown")
		}
		if item, shutdown := q.Get(); !shutdown || item != "" {
			t.Errorf("Get = %q, %v; want \"\", true", item, shutdown)
		}
		if got := q.Len(); got != 0 {
			t.Errorf("Len = %d, want 0", got)
		}
	})

	t.Run("a blocked Get wakes up", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newTestQueue(t, Options[string]{})
			done := make(chan bool)
			go func() {
				_, shutdown := q.Get()
				done <- shutdown
			}()
			waitForBlockedGets(t, q, 1)
			q.ShutDown()
			if !<-done {
				t.Error("blocked Get returned shutdown=false")
			}
		})
	})

	t.Run("adds after shutdown are dropped", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newTestQueue(t, Options[string]{})
			q.ShutDown()
			q.Add("a")
			q.AddAfter("b", 0)
			q.AddAfter("c", time.Second)
			q.AddRateLimited("d")
			step(time.Hour)
			if got := q.Len(); got != 0 {
				t.Errorf("Len = %d, want 0", got)
			}
			if got := q.NumRequeues("d"); got != 0 {
				t.Errorf("NumRequeues(d) = %d, want 0: a dropped retry is not a failure", got)
			}
			m := q.Stats()
			if m.Adds != 0 || m.Retries != 0 {
				t.Errorf("Adds = %d, Retries = %d, want 0, 0", m.Adds, m.Retries)
			}
			q.mu.Lock()
			started := q.delayStarted
			q.mu.Unlock()
			if started {
				t.Error("AddAfter after shutdown started the delay goroutine")
			}
		})
	})

	t.Run("items in processing can still be done, and are not queued again", func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.Add("a")
		mustGet(t, q)
		q.Add("a") // would be queued again at Done
		q.ShutDown()
		q.Done("a")
		m := q.Stats()
		if m.Depth != 0 || m.Processing != 0 {
			t.Errorf("Depth = %d, Processing = %d, want 0, 0", m.Depth, m.Processing)
		}
		q.ShutDownWithDrain() // nothing in processing: returns at once
	})

	t.Run("twice", func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.ShutDown()
		q.ShutDown()
		q.ShutDownWithDrain()
	})
}

// startDrain calls ShutDownWithDrain in a goroutine of the bubble and waits
// until it blocks; the channel is closed once it returns.
func startDrain[T comparable](t *testing.T, q *Queue[T]) <-chan struct{} {
	t.Helper()
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	synctest.Wait()
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown = false while ShutDownWithDrain waits")
	}
	return drained
}

// closed reports whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestShutDownWithDrain(t *testing.T) {
	t.Run("waits for items in processing and hands out the queued ones", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newTestQueue(t, Options[string]{})
			q.Add("a")
			q.Add("b")
			inFlight := mustGet(t, q)

			drained := startDrain(t, q)

			q.Add("c") // dropped
			if got := mustGet(t, q); got != "b" {
				t.Fatalf("Get during drain = %q, want b", got)
			}
			q.Done("b")
			synctest.Wait()
			if closed(drained) {
				t.Fatal("ShutDownWithDrain returned while a was in processing")
			}
			q.Done(inFlight)
			synctest.Wait()
			if !closed(drained) {
				t.Fatal("ShutDownWithDrain did not return after the last Done")
			}
			if item, shutdown := q.Get(); !shutdown {
				t.Errorf("Get after drain = %q, false; want shutdown", item)
			}
		})
	})

	t.Run("an item re-added during processing is processed before shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newTestQueue(t, Options[string]{})
			q.Add("a")
			mustGet(t, q)
			q.Add("a")

			drained := startDrain(t, q)

			// A second worker's Get must wait for a's Done rather than report
			// shutdown, or the re-added a would be lost.
			got := make(chan string, 1)
			go func() {
				item, shutdown := q.Get()
				if shutdown {
					item = "<shutdown>"
				}
				got <- item
			}()
			waitForBlockedGets(t, q, 1)
			q.Done("a")
			if item := <-got; item != "a" {
				t.Fatalf("second worker got %q, want a", item)
			}
			q.Done("a")
			<-drained
		})
	})

	t.Run("ShutDown during a drain stops waiting for the queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newTestQueue(t, Options[string]{})
			q.Add("a")
			q.Add("b")
			mustGet(t, q)
			drained := startDrain(t, q)
			q.ShutDown() // b is discarded
			q.Done("a")
			synctest.Wait()
			if !closed(drained) {
				t.Fatal("ShutDownWithDrain still waiting after ShutDown and the last Done")
			}
		})
	})

	t.Run("empty queue returns at once", func(t *testing.T) {
		q := newTestQueue(t, Options[string]{})
		q.ShutDownWithDrain()
		if _, shutdown := q.Get(); !shutdown {
			t.Error("Get after drain: shutdown = false")
		}
	})
}
