package informer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Options configure an Informer. The zero value is useful: a full list
// then watch, streaming lists when the server has them, no transform.
type Options[T Object] struct {
	// ListOptions selects objects: LabelSelector and FieldSelector are
	// used; other fields are managed by the informer.
	ListOptions metav1.ListOptions
	// Transform changes each object before it enters the cache (for
	// example stripping managedFields). It must not keep a reference to its
	// input and must return an object with the same namespace and name.
	Transform func(T) (T, error)
	// ResyncPeriod, when positive, redelivers every cached object to every
	// handler as OnUpdate(obj, obj) at that interval.
	ResyncPeriod time.Duration
	// PageSize of the initial list and relists. Zero means 500; a
	// negative value lists in one request.
	PageSize int64
	// DisableStreaming turns off streaming lists (sendInitialEvents).
	DisableStreaming bool
	// IdleTimeout re-watches a stream that sent nothing (not even a
	// bookmark) for this long. Zero means 150 s.
	IdleTimeout time.Duration
	// InitialEventsTimeout is how long a streaming list may stay silent
	// before its end bookmark before falling back to list and watch. Zero
	// means 10 s.
	InitialEventsTimeout time.Duration
	// OnWatchError receives list and watch errors (the informer retries
	// them itself).
	OnWatchError func(error)
	// DetectMutations keeps a copy of every cached object and reports, on
	// each change and on CheckMutations, an object a handler or reader
	// modified in place. For tests: it doubles memory.
	DetectMutations bool
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger
	// Metrics receives list and watch starts, events, cache size, syncs
	// and handler lag (see Metrics; package metrics exports them). Nil
	// observes nothing.
	Metrics Metrics
	// Name identifies the informer to Metrics; a Factory sets it to the
	// resource ("deployments.v1.apps").
	Name string
	// Shard, when set, caches only the objects in the shard's ranges and
	// follows its changes (see Shard). Nil caches every object.
	Shard *Shard

	storage storage[T]
}

// Informer keeps a local cache of one resource equal to the server, and
// tells handlers what changed. See the package documentation for the
// guarantees. Create it with New (or a Factory), add handlers and indexers,
// then Run it.
type Informer[T Object] struct {
	feed  feed[T]
	opts  Options[T]
	store *Store[T]
	log   logr.Logger
	// metrics is Options.Metrics, or a no-op; measured: Options.Metrics
	// was set, so notifications carry the time they were made and the
	// cache's bytes are estimated.
	metrics  Metrics
	measured bool
	// shardEcho: 0 not known yet, 1 the server shards, 2 it does not.
	shardEcho atomic.Int32

	// mu serializes cache changes and handler (un)registration, so every
	// handler sees every change exactly once, in order.
	mu        sync.Mutex
	handlers  []*Registration[T]
	syncing   bool
	firstSync bool
	// unseen holds, during a sync of a cache that had objects, the keys
	// the sync has not seen yet (the store's own strings: no copies);
	// what is left at its end is gone. A set of the keys still to see
	// rather than of those seen: sized once, it holds no string of its
	// own and does not grow as a relist goes.
	unseen     map[string]struct{}
	synced     atomic.Bool
	lastSyncRV atomic.Value
	lastErr    atomic.Value
	errCount   atomic.Uint64 // errors recorded, the last one's number in lastErr
	permFails  atomic.Int32  // consecutive permanent (403/404) failures
	// notFoundSince is when the current run of 404s began (Unix ns; 0:
	// none).
	notFoundSince atomic.Int64
	relisting     atomic.Bool // a sync other than the first is in progress
	copies        map[string]T
	mutation      error

	started atomic.Bool
	stopped bool // under mu: Run is stopping or has returned
	running sync.WaitGroup
	runCtx  atomic.Value
}

// New returns an informer over src.
func New[T Object](src Source[T], opts Options[T]) *Informer[T] {
	log := opts.Logger
	st := opts.storage
	if st == nil {
		st = newMapStorage[T]()
	}
	inf := &Informer[T]{feed: feedOf(src), opts: opts, store: newStore[T](st), log: log, firstSync: true, metrics: opts.Metrics, measured: opts.Metrics != nil}
	if inf.metrics == nil {
		inf.metrics = noMetrics{}
	}
	inf.lastSyncRV.Store("")
	if opts.DetectMutations {
		inf.copies = map[string]T{}
	}
	return inf
}

// Store returns the cache. Its objects are read-only.
func (i *Informer[T]) Store() *Store[T] { return i.store }

// Lister returns a lister over the cache.
func (i *Informer[T]) Lister() *Lister[T] { return &Lister[T]{store: i.store} }

// AddIndexer adds an index; it may be called before or after Run.
func (i *Informer[T]) AddIndexer(name string, fn IndexFunc[T]) error {
	return i.store.AddIndexer(name, fn)
}

// HasSynced reports whether the cache holds the whole initial list.
func (i *Informer[T]) HasSynced() bool { return i.synced.Load() }

// LastSyncResourceVersion returns the resourceVersion of the last list or
// streaming list.
func (i *Informer[T]) LastSyncResourceVersion() string { return i.lastSyncRV.Load().(string) }

// LastError returns the last list or watch error, or nil.
func (i *Informer[T]) LastError() error {
	_, err := i.lastErrorSeq()
	return err
}

// lastErrorSeq returns the last list or watch error with its number: how
// many errors the informer has met, that one included (0 when none).
func (i *Informer[T]) lastErrorSeq() (uint64, error) {
	if e, ok := i.lastErr.Load().(errBox); ok {
		return e.n, e.err
	}
	return 0, nil
}

type errBox struct {
	err error
	n   uint64
}

// AddEventHandler registers h. A handler added after the informer started
// first receives every cached object as OnAdd(obj, true). Once Run has
// stopped watching (its context is done), it returns an error and adds
// nothing.
func (i *Informer[T]) AddEventHandler(h Handler[T]) (*Registration[T], error) {
	if h == nil {
		return nil, errors.New("informer: nil handler")
	}
	r := newRegistration[T](h)
	if i.measured {
		r.delivered = func(lag time.Duration) { i.metrics.Delivered(i.opts.Name, lag) }
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		return nil, errors.New("informer: the informer has stopped; the handler was not added")
	}
	if i.synced.Load() || i.syncing {
		// The cache as it stands, by key; a handler joining during the
		// first list gets the rest as the list goes on. A compact cache
		// hands over each object's encoding, decoded at delivery: decoding
		// all of it here would hold the whole cache decoded at once, for
		// as long as the new handler takes to catch up.
		i.store.mu.RLock()
		keys := i.store.data.keys()
		sort.Strings(keys)
		for _, k := range keys {
			if load := i.store.data.loader(k); load != nil {
				r.enqueue(notification[T]{kind: notifyAdd, load: load, initial: true})
			} else if obj, ok := i.store.data.get(k); ok {
				r.enqueue(notification[T]{kind: notifyAdd, obj: obj, initial: true})
			}
		}
		i.store.mu.RUnlock()
	}
	if i.synced.Load() {
		r.enqueue(notification[T]{kind: notifySynced})
	}
	r.remove = func() {
		i.mu.Lock()
		defer i.mu.Unlock()
		for n, have := range i.handlers {
			if have == r {
				i.handlers = append(i.handlers[:n:n], i.handlers[n+1:]...)
				break
			}
		}
	}
	i.handlers = append(i.handlers, r)
	if i.started.Load() {
		i.startHandler(r)
	}
	return r, nil
}

func (i *Informer[T]) startHandler(r *Registration[T]) {
	r.started = true
	i.running.Add(1)
	go func() {
		defer i.running.Done()
		r.run()
	}()
}

func (i *Informer[T]) notify(n notification[T]) {
	if i.measured {
		n.at = time.Now().UnixNano()
	}
	for _, r := range i.handlers {
		r.enqueue(n)
	}
}

// Run runs the informer until ctx is done, and returns when every goroutine
// it started has exited. It may be called once.
func (i *Informer[T]) Run(ctx context.Context) error {
	// started flips under mu, which AddEventHandler holds while it reads
	// it: a handler added meanwhile is started by exactly one of the two.
	i.mu.Lock()
	if !i.started.CompareAndSwap(false, true) {
		i.mu.Unlock()
		return errors.New("informer: Run called twice")
	}
	i.runCtx.Store(ctx)
	for _, r := range i.handlers {
		i.startHandler(r)
	}
	i.mu.Unlock()
	var restart chan struct{}
	if sh := i.opts.Shard; sh != nil {
		restart = make(chan struct{}, 1)
		unsubscribe := sh.subscribe(func() {
			i.reshard()
			select {
			case restart <- struct{}{}:
			default: // a restart is pending already
			}
		})
		defer unsubscribe()
	}
	ref := newReflector[T](i.feed, i, reflectorOptions{
		listOptions:          i.opts.ListOptions,
		pageSize:             i.opts.PageSize,
		streaming:            !i.opts.DisableStreaming,
		idleTimeout:          i.opts.IdleTimeout,
		initialEventsTimeout: i.opts.InitialEventsTimeout,
		onError:              i.recordError,
		log:                  i.log,
		metrics:              i.metrics,
		name:                 i.opts.Name,
		shard:                i.opts.Shard,
		restart:              restart,
		onShardEcho: func(serverSide bool) {
			if serverSide {
				i.shardEcho.Store(1)
			} else {
				i.shardEcho.Store(2)
			}
		},
	})
	if i.opts.ResyncPeriod > 0 {
		i.running.Add(1)
		go func() {
			defer i.running.Done()
			i.resyncLoop(ctx)
		}()
	}
	ref.run(ctx)
	i.mu.Lock()
	i.stopped = true // no handler starts after this: Wait below sees them all
	for _, r := range i.handlers {
		r.stop()
	}
	i.mu.Unlock()
	i.running.Wait()
	return nil
}

func (i *Informer[T]) recordError(err error) {
	i.lastErr.Store(errBox{err, i.errCount.Add(1)})
	if IsPermanent(err) {
		i.permFails.Add(1)
	} else {
		i.permFails.Store(0)
	}
	if !apierrors.IsNotFound(err) {
		i.notFoundSince.Store(0)
	} else if i.notFoundSince.Load() == 0 {
		i.notFoundSince.Store(time.Now().UnixNano())
	}
	if i.opts.OnWatchError != nil {
		i.opts.OnWatchError(err)
	}
}

// IsPermanent reports list/watch errors that retrying will not fix without
// a change elsewhere: forbidden, unauthorized, or a resource the server does
// not serve.
func IsPermanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err)
}

// NotFoundGrace is how long WaitForSync waits out 404s before it reports
// the resource as not served: a CRD established a moment ago may answer
// 404 for a while, until the server serves its resource.
const NotFoundGrace = 10 * time.Second

// givenUp reports the permanent error WaitForSync returns: forbidden or
// unauthorized at once; not found once it has repeated for NotFoundGrace.
func (i *Informer[T]) givenUp() error {
	err := i.LastError()
	if err == nil || !IsPermanent(err) || i.HasSynced() {
		return nil
	}
	if apierrors.IsNotFound(err) {
		since := i.notFoundSince.Load()
		if i.permFails.Load() < 2 || since == 0 || time.Since(time.Unix(0, since)) < NotFoundGrace {
			return nil
		}
	}
	return err
}

// WaitForSync waits until the informer has synced. It returns an error
// when ctx ends first, or as soon as listing is forbidden, or once the
// resource has been not found for NotFoundGrace (a CRD created a moment
// ago is waited for), rather than hanging.
func (i *Informer[T]) WaitForSync(ctx context.Context) error {
	if i.HasSynced() {
		// The common case for callers that check before every read: no
		// ticker.
		return nil
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if i.HasSynced() {
			return nil
		}
		if err := i.givenUp(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			if err := i.LastError(); err != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (i *Informer[T]) resyncLoop(ctx context.Context) {
	t := time.NewTimer(i.opts.ResyncPeriod)
	for {
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		i.mu.Lock()
		if i.synced.Load() {
			for _, obj := range i.store.List() {
				i.notify(notification[T]{kind: notifyUpdate, old: obj, obj: obj})
			}
		}
		i.mu.Unlock()
		t = time.NewTimer(i.opts.ResyncPeriod)
	}
}

// The reflector's sink: cache changes and their notifications.

func (i *Informer[T]) beginSync() {
	i.mu.Lock()
	i.relisting.Store(!i.firstSync)
	i.syncing = true
	i.unseen = nil
	if i.store.Len() > 0 {
		// Only a cache with objects can have some that vanished.
		i.store.mu.RLock()
		keys := i.store.data.keys()
		i.store.mu.RUnlock()
		i.unseen = make(map[string]struct{}, len(keys))
		for _, k := range keys {
			i.unseen[k] = struct{}{}
		}
	}
	i.mu.Unlock()
}

// known reports whether the cache holds key at resourceVersion rv; during a
// sync it also counts the key as seen. key and rv may share a buffer that
// is reused after the call.
func (i *Informer[T]) known(key, rv string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.store.mu.RLock()
	have, ok := i.store.data.resourceVersion(key)
	i.store.mu.RUnlock()
	if !ok || have != rv {
		return false
	}
	if i.unseen != nil {
		delete(i.unseen, key)
	}
	return true
}

func (i *Informer[T]) cached() int { return i.store.Len() }

func (i *Informer[T]) abortSync() {
	i.mu.Lock()
	i.relisting.Store(false)
	i.syncing = false
	i.unseen = nil
	i.mu.Unlock()
}

func (i *Informer[T]) transform(obj T) (T, bool) {
	if i.opts.Transform == nil {
		return obj, true
	}
	out, err := i.opts.Transform(obj)
	if err != nil {
		i.log.Info("transform failed; object not cached", "key", Key(obj), "error", err)
		return out, false
	}
	return out, true
}

func (i *Informer[T]) upsert(_ watch.EventType, obj T, text []byte, syncing bool) {
	if i.opts.Shard != nil && !i.opts.Shard.Contains(obj) {
		// Not in the shard: the server ignored the selector, or the
		// event was on its way as the ranges changed.
		return
	}
	key := Key(obj)
	if rv := obj.GetResourceVersion(); rv != "" && i.relisting.Load() && i.known(key, rv) {
		// Unchanged (a relist of an object we have, or a stub for one the
		// source recognized without decoding it): keep the cached one, and
		// do not run the transform.
		return
	}
	if i.opts.Transform != nil {
		text = nil // the text is of the object before the transform
	}
	obj, ok := i.transform(obj)
	if !ok {
		return
	}
	key = Key(obj)
	i.mu.Lock()
	defer i.mu.Unlock()
	if syncing && i.unseen != nil {
		delete(i.unseen, key)
	}
	i.checkMutation(key)
	i.store.mu.Lock()
	old, existed := i.store.data.get(key)
	if existed && old.GetResourceVersion() == obj.GetResourceVersion() && obj.GetResourceVersion() != "" {
		i.store.mu.Unlock()
		return // unchanged (a relist of an object we have): keep the cached one
	}
	var bytes int64
	if i.measured {
		bytes = -i.store.data.bytes(key)
	}
	if err := i.store.putLocked(key, obj, text); err != nil {
		i.store.mu.Unlock()
		i.log.Info("could not cache an object", "key", key, "error", err)
		return
	}
	if i.measured {
		bytes += i.store.data.bytes(key)
	}
	i.store.mu.Unlock()
	i.saveCopy(key, obj)
	if existed {
		i.metrics.Cached(i.opts.Name, 0, bytes)
		i.notify(notification[T]{kind: notifyUpdate, old: old, obj: obj})
	} else {
		i.metrics.Cached(i.opts.Name, 1, bytes)
		i.notify(notification[T]{kind: notifyAdd, obj: obj, initial: syncing && i.firstSync})
	}
}

func (i *Informer[T]) remove(obj T) {
	obj, ok := i.transform(obj)
	if !ok {
		return
	}
	key := Key(obj)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.checkMutation(key)
	i.store.mu.Lock()
	_, existed := i.store.data.get(key)
	var bytes int64
	if existed {
		if i.measured {
			bytes = i.store.data.bytes(key)
		}
		i.store.removeLocked(key)
	}
	i.store.mu.Unlock()
	if i.copies != nil {
		delete(i.copies, key)
	}
	if existed {
		i.metrics.Cached(i.opts.Name, -1, -bytes)
		i.notify(notification[T]{kind: notifyDelete, obj: obj})
	}
}

// endPage: the informer has nothing to do between pages.
func (i *Informer[T]) endPage(bool) {}

func (i *Informer[T]) endSync(rv string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	// Objects not seen in this (re)list are gone: deliver them as deletes
	// whose final state is unknown.
	if len(i.unseen) > 0 {
		i.dropLocked(notification[T]{kind: notifyDelete, unknown: true}, func(key string) bool {
			_, gone := i.unseen[key]
			return gone
		}, nil)
	}
	i.unseen = nil
	i.syncing = false
	i.relisting.Store(false)
	i.lastSyncRV.Store(rv)
	i.permFails.Store(0)
	i.notFoundSince.Store(0)
	i.metrics.Synced(i.opts.Name, time.Now())
	if i.firstSync {
		i.firstSync = false
		i.synced.Store(true)
		i.notify(notification[T]{kind: notifySynced})
	}
}

// Mutation detection.

func (i *Informer[T]) saveCopy(key string, obj T) {
	if i.copies == nil {
		return
	}
	i.copies[key] = obj.DeepCopyObject().(T)
}

func (i *Informer[T]) checkMutation(key string) {
	if i.copies == nil {
		return
	}
	cp, ok := i.copies[key]
	if !ok {
		return
	}
	cur, ok := i.store.Get(key)
	if ok && !reflect.DeepEqual(cp, cur) && i.mutation == nil {
		i.mutation = fmt.Errorf("informer: cached object %s was modified in place; DeepCopy objects from the cache before changing them", key)
		i.log.Error(nil, "cached object modified in place", "key", key)
	}
}

// CheckMutations compares every cached object with the copy taken when it
// entered the cache (Options.DetectMutations) and returns an error naming
// the first one that was modified in place.
func (i *Informer[T]) CheckMutations() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.copies == nil {
		return errors.New("informer: mutation detection is off (Options.DetectMutations)")
	}
	for key := range i.copies {
		i.checkMutation(key)
	}
	return i.mutation
}

// reshard drops the cached objects that left the shard's ranges, each
// delivered as a delete marked ShardMove. The reflector then syncs again
// with the new selector, which adds the objects that entered.
func (i *Informer[T]) reshard() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.dropLocked(notification[T]{kind: notifyDelete, shardMove: true}, nil, func(obj T) bool {
		return !i.opts.Shard.Contains(obj)
	})
}

// dropLocked removes the cached objects that byKey (when not nil) picks
// by key and byObj (when not nil) by object, and delivers each as the
// delete del (with the object filled in). An object is read from the
// store (for a compact store, decoded) only once byKey has picked it, so
// that the end of a relist, which picks by key alone, decodes only the
// objects that are gone. Called with i.mu held.
func (i *Informer[T]) dropLocked(del notification[T], byKey func(key string) bool, byObj func(obj T) bool) {
	i.store.mu.Lock()
	var dropped []T
	removed, bytes := 0, int64(0)
	for _, key := range i.store.data.keys() {
		if byKey != nil && !byKey(key) {
			continue
		}
		obj, ok := i.store.data.get(key)
		if byObj != nil && (!ok || !byObj(obj)) {
			continue
		}
		if ok {
			dropped = append(dropped, obj)
		}
		removed++
		if i.measured {
			bytes += i.store.data.bytes(key)
		}
		i.store.removeLocked(key)
		if i.copies != nil {
			delete(i.copies, key)
		}
	}
	i.store.mu.Unlock()
	if removed > 0 {
		i.metrics.Cached(i.opts.Name, -removed, -bytes)
	}
	for _, obj := range dropped {
		del.obj = obj
		i.notify(del)
	}
}

// ServerSharded reports, for an informer with a Shard, whether its server
// applies the shard selector (true) or ignores it, in which case the
// informer filters alone (false); known is false until its first sync has
// told.
func (i *Informer[T]) ServerSharded() (sharded, known bool) {
	switch i.shardEcho.Load() {
	case 1:
		return true, true
	case 2:
		return false, true
	}
	return false, false
}
