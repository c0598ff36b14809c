package informer

import (
	"sync"
	"sync/atomic"
	"time"
)

// Handler receives an informer's events. Each registered handler has its own
// buffer and goroutine: a slow handler delays only itself. Events for one
// handler arrive in order, one at a time. Objects are shared with the cache
// and with other handlers: treat them as read-only.
type Handler[T Object] interface {
	// OnAdd is called for an object new to the cache. isInInitialList is true
	// for objects of the first list (or, for a handler added after the
	// informer started, of the cache as it stood).
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate is called when an object changed (and, with a resync period,
	// periodically with old == new).
	OnUpdate(oldObj, newObj T)
	// OnDelete is called when an object is gone; see Deleted.
	OnDelete(obj Deleted[T])
}

// HandlerFuncs adapts functions to Handler; nil functions are skipped.
type HandlerFuncs[T Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj Deleted[T])
}

// OnAdd calls AddFunc.
func (h HandlerFuncs[T]) OnAdd(obj T, initial bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, initial)
	}
}

// OnUpdate calls UpdateFunc.
func (h HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc.
func (h HandlerFuncs[T]) OnDelete(obj Deleted[T]) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj)
	}
}

type notificationKind uint8

const (
	notifyAdd notificationKind = iota
	notifyUpdate
	notifyDelete
	notifySynced // marker: everything of the initial list has been delivered
)

type notification[T Object] struct {
	kind     notificationKind
	obj, old T
	// load, when set, decodes obj at delivery (a new handler's replay of
	// a compact cache; see storage.loader).
	load      func() (T, bool)
	initial   bool
	unknown   bool
	shardMove bool
	// at is when the informer made it (Unix nanoseconds), when it has
	// Metrics; else 0.
	at int64
}

// Registration is a handler's registration with an informer.
type Registration[T Object] struct {
	h      Handler[T]
	synced atomic.Bool

	mu      sync.Mutex
	cond    *sync.Cond
	pending []notification[T]
	head    int
	stopped bool
	// delivering is true while a callback runs (under mu).
	delivering bool
	done       chan struct{}
	remove     func()
	started    bool
	// delivered, when set, reports each event's lag (Options.Metrics).
	delivered func(lag time.Duration)
}

func newRegistration[T Object](h Handler[T]) *Registration[T] {
	r := &Registration[T]{h: h, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// HasSynced reports whether this handler has been given every object of the
// initial list (or, when added late, of the cache as it stood).
func (r *Registration[T]) HasSynced() bool { return r.synced.Load() }

// Remove unregisters the handler: no event is delivered to it after
// Remove returns. When no event is being delivered, Remove waits until
// the handler's goroutine has exited; when one is (which includes a
// handler removing itself from its own callback), that callback may still
// be finishing as Remove returns.
func (r *Registration[T]) Remove() {
	if r.remove != nil {
		r.remove()
	}
	if inCallback := r.stop(); r.started && !inCallback {
		<-r.done
	}
}

// Pending returns how many events wait in this handler's buffer.
func (r *Registration[T]) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) - r.head
}

func (r *Registration[T]) enqueue(n notification[T]) {
	r.mu.Lock()
	if !r.stopped {
		r.pending = append(r.pending, n)
		r.cond.Signal()
	}
	r.mu.Unlock()
}

// stop ends delivery; it reports whether a callback is running.
func (r *Registration[T]) stop() (inCallback bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.cond.Broadcast()
	return r.delivering
}

// run delivers notifications until stopped.
func (r *Registration[T]) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		r.delivering = false // the previous callback, if any, has returned
		for r.head == len(r.pending) && !r.stopped {
			r.cond.Wait()
		}
		if r.stopped {
			r.mu.Unlock()
			return
		}
		n := r.pending[r.head]
		var zero notification[T]
		r.pending[r.head] = zero
		r.head++
		if r.head == len(r.pending) {
			r.pending, r.head = r.pending[:0], 0
		} else if r.head > 1024 && r.head*2 > len(r.pending) {
			r.pending = append(r.pending[:0:0], r.pending[r.head:]...)
			r.head = 0
		}
		r.delivering = true
		r.mu.Unlock()
		if r.delivered != nil && n.at != 0 && n.kind != notifySynced {
			r.delivered(time.Duration(time.Now().UnixNano() - n.at))
		}
		if n.load != nil {
			obj, ok := n.load()
			if !ok {
				continue // undecodable bytes: what a read of them gives too
			}
			n.obj = obj
		}
		switch n.kind {
		case notifyAdd:
			r.h.OnAdd(n.obj, n.initial)
		case notifyUpdate:
			r.h.OnUpdate(n.old, n.obj)
		case notifyDelete:
			r.h.OnDelete(Deleted[T]{Obj: n.obj, FinalStateUnknown: n.unknown, ShardMove: n.shardMove})
		case notifySynced:
			r.synced.Store(true)
		}
	}
}
