package workqueue

import (
	"container/heap"
	"time"
)

// AddAfter adds item once d has passed; with d of zero or less it is Add. An
// item already waiting for its delay keeps the earlier of the two deadlines,
// so it is added once. A delayed item is independent of the ready queue: an
// item both queued now and delayed is handed out now and again after d.
// After shutdown has begun AddAfter does nothing, and delayed items not yet
// due are discarded at shutdown.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addAfterLocked(item, d)
}

// AddRateLimited adds item after the delay the rate limiter gives for it,
// recording a failure of item; the retry is counted in [Stats.Retries].
func (q *Queue[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		// Do not count a failure for a retry that will not happen.
		return
	}
	d := q.limiter.When(item)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	q.stats.retries++
	q.metrics.Retried(q.name)
	q.addAfterLocked(item, d)
}

func (q *Queue[T]) addAfterLocked(item T, d time.Duration) {
	if q.shuttingDown {
		return
	}
	now := time.Now()
	if d <= 0 {
		q.addLocked(item, now, false)
		return
	}
	readyAt := now.Add(d)
	e, ok := q.delayedIndex[item]
	switch {
	case !ok:
		q.delaySeq++
		e = &delayedItem[T]{item: item, readyAt: readyAt, seq: q.delaySeq}
		heap.Push(&q.delayed, e)
		q.delayedIndex[item] = e
	case readyAt.Before(e.readyAt):
		e.readyAt = readyAt
		heap.Fix(&q.delayed, e.index)
	default:
		return // the pending deadline is earlier
	}
	if !q.delayStarted {
		q.delayStarted = true
		q.delayWG.Add(1)
		go q.delayLoop()
	}
	if e.index == 0 {
		// The earliest deadline changed: the delay goroutine must re-arm.
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// delayLoop moves due items from the delay heap to the queue, sleeping until
// the earliest deadline, a new earlier deadline, or shutdown.
func (q *Queue[T]) delayLoop() {
	defer q.delayWG.Done()
	for {
		q.mu.Lock()
		if q.shuttingDown {
			q.mu.Unlock()
			return
		}
		now := time.Now()
		for len(q.delayed) > 0 && !q.delayed[0].readyAt.After(now) {
			e := heap.Pop(&q.delayed).(*delayedItem[T])
			delete(q.delayedIndex, e.item)
			q.addLocked(e.item, now, false)
		}
		var t *time.Timer
		var fired <-chan time.Time
		if len(q.delayed) > 0 {
			t = time.NewTimer(time.Until(q.delayed[0].readyAt))
			fired = t.C
		}
		q.mu.Unlock()

		select {
		case <-q.stop:
		case <-q.wake:
		case <-fired:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// delayedItem is an item of AddAfter waiting for its deadline.
type delayedItem[T comparable] struct {
	item    T
	readyAt time.Time
	seq     uint64 // order of AddAfter calls, breaking ties between deadlines
	index   int    // position in the heap, kept up to date by delayHeap
}

// delayHeap is a min-heap of delayed items by deadline, then by the order
// they were delayed, for container/heap.
type delayHeap[T comparable] []*delayedItem[T]

func (h delayHeap[T]) Len() int { return len(h) }

func (h delayHeap[T]) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].seq < h[j].seq
}

func (h delayHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *delayHeap[T]) Push(x any) {
	e := x.(*delayedItem[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *delayHeap[T]) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	e.index = -1
	return e
}
