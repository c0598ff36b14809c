package events

import (
	"container/heap"
	"context"
	"time"
)

// occurrence is one Eventf call, as queued for the writer.
type occurrence struct {
	at                              time.Time
	eventType, reason, action, note string
	regarding                       Reference
	related                         *Reference
}

// seriesKey identifies isomorphic occurrences: those that become one Event
// with a series. It is client-go's key (type, reason, action, regarding and
// related, the reporting controller and instance being the recorder's) plus
// the note, so that occurrences saying different things are not folded
// into the note of the first.
type seriesKey struct {
	eventType, reason, action, note string
	regarding, related              Reference
	hasRelated                      bool
}

func keyOf(o occurrence) seriesKey {
	k := seriesKey{eventType: o.eventType, reason: o.reason, action: o.action, note: o.note, regarding: o.regarding}
	if o.related != nil {
		k.related, k.hasRelated = *o.related, true
	}
	return k
}

// series is the writer's record of one Event it wrote: a single occurrence
// (count 1) or a series. It lives in the cache until its window passes with
// no new occurrence.
type series struct {
	key             seriesKey
	first           occurrence // the first occurrence: the Event's content
	name, namespace string

	count        int32     // occurrences so far
	lastObserved time.Time // time of the latest occurrence
	written      int32     // the count the server has; 0 until created
	lastWrite    time.Time // when the last write (done or given up) ended
	maybeLanded  bool      // a create attempt failed in transport: it may have landed

	next time.Time // the deadline this series is scheduled at in the heap
	gone bool      // removed from the cache
}

// dirty reports whether the server's count is behind.
func (s *series) dirty() bool { return s.written > 0 && s.count > s.written }

// The writer's state machine. Occurrences come in through record, in
// order; deadlines come in through runDue. For each series key:
//
//   - No series in the cache, or the last occurrence is a window or more ago
//     (the old series is finished: its final count written if behind, then
//     forgotten): the occurrence creates a new Event, whose eventTime is
//     its time. A create given up on leaves nothing in the cache, so the
//     next occurrence tries again.
//   - Otherwise the occurrence joins the series: count+1 and lastObservedTime.
//     The series is patched at once when the last write of that Event is an
//     update interval ago or more, else once the interval has passed, with
//     whatever count it has then: one write per Event per interval at most.
//   - A series patch answered 404 (the Event expired or was deleted) creates
//     the Event again under its name, series included.
//   - On shutdown, flush patches every series whose count is behind.
//
// The writer is used by Run's goroutine alone; it needs no lock.
type writer struct {
	*writes
	window, interval time.Duration
	cache            map[seriesKey]*series
	due              dueHeap
}

func (w *writer) record(ctx context.Context, o occurrence) {
	k := keyOf(o)
	if s := w.cache[k]; s != nil {
		if o.at.Sub(s.lastObserved) < w.window {
			s.count++
			if o.at.After(s.lastObserved) {
				s.lastObserved = o.at
			}
			w.stats.aggregated.Add(1)
			w.step(ctx, s)
			return
		}
		w.finish(ctx, s)
	}
	ns := o.regarding.Namespace
	if ns == "" {
		ns = "default" // as client-go: cluster-scoped objects' events go to default
	}
	s := &series{key: k, first: o, namespace: ns, name: w.newName(o.regarding.Name, o.at), count: 1, lastObserved: o.at}
	if !w.write(ctx, s) {
		return
	}
	w.cache[k] = s
	w.schedule(s)
}

// step does what is due for s now: a series patch, or the end of the series.
func (w *writer) step(ctx context.Context, s *series) {
	now := time.Now()
	if !now.Before(s.lastObserved.Add(w.window)) {
		w.finish(ctx, s)
		return
	}
	if s.dirty() && !now.Before(s.lastWrite.Add(w.interval)) {
		w.write(ctx, s)
	}
	w.schedule(s)
}

// finish writes s's final count if the server is behind, and forgets s.
func (w *writer) finish(ctx context.Context, s *series) {
	if s.dirty() {
		w.write(ctx, s)
	}
	delete(w.cache, s.key)
	s.gone = true
}

// schedule puts s in the heap at its next deadline: its patch when behind,
// else the end of its window.
func (w *writer) schedule(s *series) {
	next := s.lastObserved.Add(w.window)
	if patch := s.lastWrite.Add(w.interval); s.dirty() && patch.Before(next) {
		next = patch
	}
	if next.Equal(s.next) {
		return
	}
	s.next = next
	heap.Push(&w.due, dueItem{at: next, s: s})
}

// nextDue returns the earliest deadline, if any.
func (w *writer) nextDue() (time.Time, bool) {
	for len(w.due) > 0 {
		top := w.due[0]
		if !top.s.gone && top.at.Equal(top.s.next) {
			return top.at, true
		}
		heap.Pop(&w.due) // stale: the series moved or ended
	}
	return time.Time{}, false
}

// runDue steps every series whose deadline has come.
func (w *writer) runDue(ctx context.Context) {
	now := time.Now()
	for {
		at, ok := w.nextDue()
		if !ok || at.After(now) {
			return
		}
		item := heap.Pop(&w.due).(dueItem)
		item.s.next = time.Time{}
		w.step(ctx, item.s)
	}
}

// flush writes every series count the server does not have yet.
func (w *writer) flush(ctx context.Context) {
	for _, s := range w.cache {
		if s.dirty() {
			w.write(ctx, s)
		}
	}
	if n := len(w.cache); n > 0 {
		w.log.V(4).Info("events: flushed", "series", n)
	}
}

type dueItem struct {
	at time.Time
	s  *series
}

// dueHeap is a min-heap of deadlines. Items go stale when their series is
// rescheduled or gone; nextDue drops them.
type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = dueItem{}
	*h = old[:len(old)-1]
	return it
}
