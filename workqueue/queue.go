package workqueue

import (
	"sync"
	"time"
)

// Options configures a [Queue]. The zero value is ready to use: client-go's
// default backoff, no name, retry for ever.
type Options[T comparable] struct {
	// RateLimiter decides the delay of AddRateLimited and keeps each item's
	// failure count. Nil means [DefaultRateLimiter].
	RateLimiter RateLimiter[T]

	// Name identifies the queue in [Stats] and to Metrics; the queue does
	// not log.
	Name string

	// Metrics receives what the queue does, for an exporter (package
	// metrics). Nil observes nothing.
	Metrics Metrics
}

// Queue is a de-duplicating, rate-limited work queue. Create it with [New];
// the zero value is not usable. All methods are safe for concurrent use.
type Queue[T comparable] struct {
	name    string
	limiter RateLimiter[T]
	metrics Metrics

	// mu guards every field below it.
	mu sync.Mutex
	// ready is signalled when an item is queued and broadcast when the
	// shutdown state changes, waking Get.
	ready *sync.Cond
	// waiting counts the Get calls blocked on ready; tests wait on it.
	waiting int
	// high and low hold the items waiting for Get, in order: those of Add
	// and those of AddLowPriority. An entry whose seq is not its item's
	// dirty seq is stale (a low-priority item promoted by Add) and is
	// skipped; every waiting item has exactly one live entry.
	high, low fifo[entry[T]]
	// queued and queuedLow count the waiting items (live entries), all and
	// low-priority; highRun counts the high-priority items handed out in a
	// row while low-priority ones waited.
	queued, queuedLow, highRun int
	seq                        uint64
	// dirty holds every item that needs processing (queued, or re-added while
	// in processing): when it was added, its priority, and the seq of its
	// live entry (0 while it is in processing: Done queues it).
	dirty map[T]dirtyEntry
	// processing holds the items handed out by Get and not yet Done, with the
	// time Get handed them out.
	processing map[T]time.Time
	// requeue counts the items both in processing and dirty: Done will queue
	// them again.
	requeue int
	// delayed and delayedIndex hold the items of AddAfter that are not yet
	// due, earliest deadline first; see delay.go.
	delayed      delayHeap[T]
	delayedIndex map[T]*delayedItem[T]
	delaySeq     uint64
	delayStarted bool
	// shuttingDown is set by ShutDown and ShutDownWithDrain; immediate only by
	// ShutDown, which discards the queued items.
	shuttingDown bool
	immediate    bool
	drainedDone  bool
	stats        stats

	// stop is closed when shutdown begins; it stops the delay goroutine.
	stop chan struct{}
	// wake tells the delay goroutine that the earliest deadline changed.
	wake chan struct{}
	// drained is closed once shutdown has begun and no item is queued or in
	// processing.
	drained chan struct{}
	// delayWG tracks the delay goroutine, the only goroutine the queue starts.
	delayWG sync.WaitGroup
}

// New returns an empty queue. It starts no goroutine until the first
// [Queue.AddAfter] or [Queue.AddRateLimited] with a positive delay; that one
// goroutine exits on [Queue.ShutDown] or [Queue.ShutDownWithDrain].
func New[T comparable](opts Options[T]) *Queue[T] {
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = DefaultRateLimiter[T]()
	}
	m := opts.Metrics
	if m == nil {
		m = noMetrics{}
	}
	q := &Queue[T]{
		metrics:      m,
		name:         opts.Name,
		limiter:      limiter,
		dirty:        map[T]dirtyEntry{},
		processing:   map[T]time.Time{},
		delayedIndex: map[T]*delayedItem[T]{},
		stop:         make(chan struct{}),
		wake:         make(chan struct{}, 1),
		drained:      make(chan struct{}),
	}
	q.ready = sync.NewCond(&q.mu)
	m.Started(q.name, q.Stats)
	return q
}

// Add queues item unless it is already waiting: an item added many times
// before a worker gets it is handed out once. An item added while a worker
// is processing it is queued again when that worker calls Done. An item
// waiting with low priority (AddLowPriority) is moved ahead, to the end of
// the items added with Add. After shutdown has begun Add does nothing.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item, time.Now(), false)
}

// AddLowPriority is Add behind the items of Add: while both wait, Get hands
// out those of Add first, but at least one in every LowPriorityShare items
// it hands out is a low-priority one, so they progress under any load.
// Controllers add the objects of an informer's initial list so: real
// changes then overtake the initial reconcile of every object. An item
// already waiting keeps its priority, and an Add of it later moves it
// ahead.
func (q *Queue[T]) AddLowPriority(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item, time.Now(), true)
}

// LowPriorityShare is the guaranteed share of AddLowPriority items: while
// both kinds wait, at least one in every LowPriorityShare items Get hands
// out is a low-priority one.
const LowPriorityShare = 8

// entry is an item in one of the two fifos.
type entry[T comparable] struct {
	item T
	seq  uint64
}

// dirtyEntry is what the queue knows of an item that needs processing.
type dirtyEntry struct {
	added time.Time
	seq   uint64 // of its live entry; 0 while in processing
	low   bool
}

func (q *Queue[T]) addLocked(item T, now time.Time, low bool) {
	if q.shuttingDown {
		return
	}
	if e, ok := q.dirty[item]; ok {
		if e.low && !low {
			// Promote: queue it among the items of Add; its low entry
			// goes stale.
			e.low = false
			if e.seq != 0 {
				q.queuedLow--
				q.queued--
				q.enqueueLocked(item, &e)
				q.dropStaleLocked()
			}
			q.dirty[item] = e
		}
		return
	}
	q.stats.adds++
	q.metrics.Added(q.name)
	e := dirtyEntry{added: now, low: low}
	if _, ok := q.processing[item]; ok {
		q.requeue++
		q.dirty[item] = e
		return
	}
	q.enqueueLocked(item, &e)
	q.dirty[item] = e
}

// enqueueLocked gives item a live entry in the fifo of its priority.
func (q *Queue[T]) enqueueLocked(item T, e *dirtyEntry) {
	q.seq++
	e.seq = q.seq
	if e.low {
		q.low.push(entry[T]{item, e.seq})
		q.queuedLow++
	} else {
		q.high.push(entry[T]{item, e.seq})
	}
	q.queued++
	q.ready.Signal()
}

// popLocked removes and returns the next item to hand out; one must be
// waiting.
func (q *Queue[T]) popLocked() T {
	if q.queued > q.queuedLow && (q.queuedLow == 0 || q.highRun < LowPriorityShare-1) {
		if q.queuedLow > 0 {
			q.highRun++
		}
		q.queued--
		return q.high.pop().item // high entries are never stale
	}
	q.highRun = 0
	for {
		en := q.low.pop()
		if e, ok := q.dirty[en.item]; ok && e.seq == en.seq {
			q.queued--
			q.queuedLow--
			q.dropStaleLocked()
			return en.item
		}
	}
}

// dropStaleLocked lets the low fifo go once it holds only stale entries.
func (q *Queue[T]) dropStaleLocked() {
	if q.queuedLow == 0 {
		q.low.clear()
	}
}

// Get blocks until an item is queued and hands it to the caller, who must
// call Done with it when finished. No item is handed to two callers at once.
//
// Get returns shutdown=true (and the zero item) at once after ShutDown; after
// ShutDownWithDrain it keeps handing out the queued items and returns
// shutdown=true once none is queued and none can be queued again by Done.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.shuttingDown && q.immediate {
			return item, true
		}
		if q.queued > 0 {
			break
		}
		if q.shuttingDown && q.requeue == 0 {
			return item, true
		}
		q.waiting++
		q.ready.Wait()
		q.waiting--
	}
	item = q.popLocked()
	now := time.Now()
	waited := now.Sub(q.dirty[item].added)
	q.stats.queueLatency.observe(waited)
	q.metrics.Waited(q.name, waited)
	delete(q.dirty, item)
	q.processing[item] = now
	return item, false
}

// Done marks item, handed out by Get, as finished. If it was added again
// meanwhile it is queued now, with the priority of that add. Done with an
// item not in processing does nothing.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	started, ok := q.processing[item]
	if !ok {
		return
	}
	delete(q.processing, item)
	worked := time.Since(started)
	q.stats.workDuration.observe(worked)
	q.metrics.Worked(q.name, worked)
	if e, ok := q.dirty[item]; ok {
		q.requeue--
		q.enqueueLocked(item, &e)
		q.dirty[item] = e
	}
	if q.shuttingDown {
		// A draining Get may be waiting for this item's fate.
		q.ready.Broadcast()
		q.checkDrainedLocked()
	}
}

// Forget tells the rate limiter that item succeeded: its backoff starts again
// from the base delay and NumRequeues returns 0.
func (q *Queue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues reports how many times item has failed since it was last
// forgotten, as counted by the rate limiter.
func (q *Queue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }

// Len reports the number of items waiting for Get. Items in processing and
// delayed items not yet due are not counted.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// ShutDown stops the queue at once: later adds are dropped, the queued and
// delayed items are discarded, and every Get, waiting or future, returns
// shutdown=true. Items already handed out may still be passed to Done.
// ShutDown returns once the queue's goroutine has exited; it does not wait
// for items in processing. It may be called more than once, and after
// ShutDownWithDrain, which it turns into an immediate shutdown.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	stopping := q.beginShutdownLocked()
	q.immediate = true
	q.high.clear()
	q.low.clear()
	q.queued, q.queuedLow = 0, 0
	clear(q.dirty)
	q.requeue = 0
	q.ready.Broadcast()
	q.checkDrainedLocked()
	q.mu.Unlock()
	q.stopped(stopping)
	q.delayWG.Wait()
}

// ShutDownWithDrain stops accepting items and waits until the work already
// accepted is finished: the queued items are still handed out by Get, items
// in processing that were added again are queued once more at Done, and
// ShutDownWithDrain returns when no item is queued or in processing. Delayed
// items not yet due are discarded.
//
// It blocks for ever if no worker calls Get and Done, and a worker that calls
// it while holding an item deadlocks. Calling ShutDown meanwhile discards the
// queue, so it then waits only for the items in processing.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	stopping := q.beginShutdownLocked()
	q.ready.Broadcast()
	q.checkDrainedLocked()
	q.mu.Unlock()
	q.stopped(stopping)
	q.delayWG.Wait()
	<-q.drained
}

// beginShutdownLocked starts the shutdown; it reports whether this call
// began it.
func (q *Queue[T]) beginShutdownLocked() bool {
	began := !q.shuttingDown
	if began {
		q.shuttingDown = true
		close(q.stop)
	}
	q.delayed = nil
	clear(q.delayedIndex)
	return began
}

// stopped tells Metrics, once, that the queue stopped (called by the
// shutdown that began it, without the lock).
func (q *Queue[T]) stopped(began bool) {
	if began {
		q.metrics.Stopped(q.name)
	}
}

func (q *Queue[T]) checkDrainedLocked() {
	if q.shuttingDown && !q.drainedDone && len(q.processing) == 0 && q.queued == 0 {
		q.drainedDone = true
		close(q.drained)
	}
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
