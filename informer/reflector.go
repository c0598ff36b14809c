package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/internal/wire"
)

// InitialEventsEndAnnotation marks the bookmark that ends the initial
// events of a streaming list.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Reflector defaults.
const (
	defaultPageSize             = 500
	defaultIdleTimeout          = 150 * time.Second
	defaultInitialEventsTimeout = 10 * time.Second
	minWatchTimeout             = 5 * time.Minute
	maxWatchTimeout             = 10 * time.Minute
)

// sink receives what the reflector learns, in order, in the reflector's
// goroutine. A sync (a list, or the initial events of a streaming list) is
// bracketed by beginSync and endSync; objects not seen between them are
// gone. The informer is one sink; Follow's callbacks are another.
type sink[T Object] interface {
	beginSync()
	// known reports whether the cache holds key at resourceVersion rv and,
	// if so, counts it as seen by the sync in progress (a relist may then
	// skip decoding it).
	known(key, rv string) bool
	// cached reports how many objects the cache holds.
	cached() int
	// upsert caches obj; text, when not nil, is its JSON as the server
	// sent it (from a feed), which a compact store keeps as is. typ is
	// the watch event's type, Added or Modified; a list's items come as
	// Added.
	upsert(typ watch.EventType, obj T, text []byte, syncing bool)
	remove(obj T)
	// endPage follows the items of each list page (last: the list's last
	// page, which endSync follows).
	endPage(last bool)
	endSync(resourceVersion string)
	abortSync()
}

// The reflector's states, each with the data it needs. The recovery rules
// are the transitions of reflector.next, all in one place:
//
//	start      → streaming if allowed, else listing; watching from a
//	             resourceVersion the caller has (Follow's), if given
//	listing    → watching from the list's resourceVersion on success;
//	             backing off (then listing) on error; a 410 on a continue
//	             page restarts the list from scratch, consistent
//	streaming  → watching once the initial-events-end bookmark arrives (on
//	             the same stream, or on a new plain watch from the
//	             bookmark when the stream was one-shot: gzip-compressed, or
//	             over a connection of its own);
//	             listing, for good (logged once), when the server refuses
//	             the parameters or the bookmark does not come in time;
//	             backing off (then streaming) on other errors
//	watching   → watching again from the last resourceVersion seen when the
//	             stream ends or goes silent past the idle deadline;
//	             streaming or listing, consistent, on 410 Gone;
//	             backing off (then watching from the last resourceVersion)
//	             when the watch cannot be opened, the server sends an
//	             ERROR, an event does not decode, or the watch ends within
//	             a second without an event
//	backingOff → the state that failed, after ~0.8 s doubling to 30 s with
//	             jitter (or the server's Retry-After)
type state interface{ String() string }

type (
	// listing lists every page, then watches. consistent asks for a
	// consistent read (after a 410) rather than one the watch cache
	// answers at once from any resourceVersion.
	listing struct{ consistent bool }
	// streaming opens a watch that sends the initial events first (a
	// streaming list); consistent carries into listing if it falls back.
	streaming struct{ consistent bool }
	// watching watches from rv; live, when set, is a streaming list's
	// watch that goes on past its initial events.
	watching struct {
		rv   string
		live watch.Interface
	}
	// backingOff waits, then tries again; retryAfter, when positive, is
	// the server's Retry-After, which replaces the backoff's own delay.
	backingOff struct {
		again      state
		retryAfter time.Duration
	}
)

func (listing) String() string    { return "listing" }
func (streaming) String() string  { return "streaming" }
func (watching) String() string   { return "watching" }
func (backingOff) String() string { return "backingOff" }

// outcome is what running one state came to.
type outcome struct {
	// err: the state failed; try it again after a backoff.
	err error
	// retryAfter is the delay a 429 asked for.
	retryAfter time.Duration
	// gone: the resourceVersion expired (410); sync again from scratch.
	gone bool
	// unsupported: the server will not stream the initial list.
	unsupported bool
	// rv is the resourceVersion synced or watched up to.
	rv string
	// live is a streaming list's watch that goes on as the watch.
	live watch.Interface
	// healthy: the watch lasted long enough to start the backoff over.
	healthy bool
}

// reflectorOptions configure a reflector.
type reflectorOptions struct {
	listOptions          metav1.ListOptions // selectors
	pageSize             int64
	streaming            bool
	idleTimeout          time.Duration
	initialEventsTimeout time.Duration
	onError              func(error)
	log                  logr.Logger
	watchTimeout         func() time.Duration
	metrics              Metrics // never nil
	name                 string  // the informer's, for metrics
	// shard, when set, selects the objects listed and watched (its
	// current Selector goes in every request); restart is signalled after
	// each change of its ranges, and makes the reflector sync again with
	// the new selector.
	shard   *Shard
	restart <-chan struct{}
	// onShardEcho is told once whether the server applied the selector.
	onShardEcho func(serverSide bool)
	// consistent makes every list a consistent read: not only those after
	// a 410 (Follow's callers want no stale first list).
	consistent bool
	// startRV, when set, is where the reflector starts: watching from it,
	// without a first list.
	startRV string
	// backoffInitial and backoffMax bound the backoff (0: defaults).
	backoffInitial, backoffMax time.Duration
}

// reflector keeps a sink equal to the server: list (or stream) then watch,
// resuming, relisting and backing off as the state machine says. Its
// states carry their own data; what outlives them is the backoff sequence
// and whether streaming lists were given up.
type reflector[T Object] struct {
	feed feed[T]
	sink sink[T]
	opts reflectorOptions

	backoff         *backoff
	streamingOff    bool
	loggedFallback  bool
	watchHealthyFor time.Duration
	echoKnown       bool // whether the server shards is known (and reported)
}

func newReflector[T Object](f feed[T], s sink[T], opts reflectorOptions) *reflector[T] {
	if opts.pageSize == 0 {
		opts.pageSize = defaultPageSize
	}
	if opts.idleTimeout == 0 {
		opts.idleTimeout = defaultIdleTimeout
	}
	if opts.initialEventsTimeout == 0 {
		opts.initialEventsTimeout = defaultInitialEventsTimeout
	}
	if opts.metrics == nil {
		opts.metrics = noMetrics{}
	}
	if opts.watchTimeout == nil {
		opts.watchTimeout = func() time.Duration {
			return minWatchTimeout + time.Duration(rand.Int64N(int64(maxWatchTimeout-minWatchTimeout)))
		}
	}
	return &reflector[T]{feed: f, sink: s, opts: opts, backoff: newBackoff(opts.backoffInitial, opts.backoffMax), watchHealthyFor: backoffReset}
}

// run steps the state machine until ctx is done. A restart (the shard's
// ranges changed) cuts the state in progress short — the list, the watch,
// the backoff — and syncs again.
func (r *reflector[T]) run(ctx context.Context) {
	ep := newEpoch(ctx)
	defer ep.end()
	s := r.sync(false)
	if r.opts.startRV != "" {
		s = watching{rv: r.opts.startRV}
	}
	for {
		if r.opts.shard != nil && len(r.opts.shard.cur.Load().ranges) == 0 {
			// A shard of no range: an empty cache, synced, and no request
			// (an empty selector would ask for every object) until the
			// ranges change.
			r.sink.beginSync()
			r.sink.endSync("")
			select {
			case <-ctx.Done():
				return
			case <-r.opts.restart:
			}
			s = r.sync(false)
			continue
		}
		restarted := false
		stop := r.onRestart(func() { restarted = true; ep.end() })
		o := r.exec(ep.ctx, s)
		stop()
		if ctx.Err() != nil || restarted {
			if o.live != nil {
				o.live.Stop()
			}
			if ctx.Err() != nil {
				return
			}
			r.opts.log.V(4).Info("shard ranges changed; syncing again", "selector", r.opts.shard.Selector())
			ep.renew()
			s = r.sync(false)
			continue
		}
		if o.err != nil && !o.unsupported {
			r.report(s, o.err)
		}
		s = r.next(s, o)
	}
}

// epoch is the context of the reflector's steps until a restart: a
// streaming list's watch, opened in one step, goes on in the next; a
// restart cancels it and starts a new one.
type epoch struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
}

func newEpoch(parent context.Context) *epoch {
	e := &epoch{parent: parent}
	e.ctx, e.cancel = context.WithCancel(parent)
	return e
}

// renew ends the epoch and starts the next.
func (e *epoch) renew() {
	e.cancel()
	e.ctx, e.cancel = context.WithCancel(e.parent)
}

// end ends the epoch.
func (e *epoch) end() { e.cancel() }

// onRestart calls f when a restart is signalled, until the returned stop
// is called (which waits until f has returned, if it runs).
func (r *reflector[T]) onRestart(f func()) (stop func()) {
	if r.opts.restart == nil {
		return func() {}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-r.opts.restart:
			f()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// withShard puts the shard's current selector in opts.
func (r *reflector[T]) withShard(opts metav1.ListOptions) metav1.ListOptions {
	if r.opts.shard != nil {
		opts.ShardSelector = r.opts.shard.Selector()
	}
	return opts
}

// noteSharded reports, once, whether the server applies the shard
// selector (how says how that was learnt).
func (r *reflector[T]) noteSharded(sharded bool, how string) {
	if r.opts.shard == nil || r.echoKnown {
		return
	}
	r.echoKnown = true
	if sharded {
		r.opts.log.V(1).Info("the server shards the list and watch", "selector", r.opts.shard.Selector(), "seen", how)
	} else {
		r.opts.log.V(1).Info("the server does not shard; filtering on the client", "selector", r.opts.shard.Selector(), "seen", how)
	}
	r.opts.metrics.ShardServed(r.opts.name, sharded)
	if r.opts.onShardEcho != nil {
		r.opts.onShardEcho(sharded)
	}
}

// probeShardEcho learns whether the server applies the shard selector,
// when no list has said so yet: a streaming list's bookmark does not echo
// it, a metadata-only list (PartialObjectMetadataList) does not, and a
// v1.37 server shards the lists of custom resources without echoing it.
// It lists one whole object with the selector (consistent reads, which
// honour the limit): an echo settles it. Without one, what the server
// sends does: when that list brought an object, one with a selector no
// object's hash falls in (a single hash value) brings none from a server
// that applies selectors and the first object from one that ignores them;
// when it brought none, one without a selector brings an object only if
// the server filtered. When the resource has no object at all, or a list
// fails, it is tried again before the next watch.
func (r *reflector[T]) probeShardEcho(ctx context.Context) {
	if r.opts.shard == nil || r.echoKnown {
		return
	}
	opts := r.withShard(r.opts.listOptions)
	opts.Limit, opts.ResourceVersion, opts.ResourceVersionMatch = 1, "", ""
	page, n, err := r.probeList(ctx, opts)
	if err != nil {
		return
	}
	if page.ShardSelector != "" {
		r.noteSharded(true, "the list echoed the selector")
		return
	}
	if n > 0 {
		opts.ShardSelector = selector(r.opts.shard.Key(), []HashRange{{}})
		if _, m, err := r.probeList(ctx, opts); err == nil {
			r.noteSharded(m == 0, "a list for a single hash value")
		}
		return
	}
	opts.ShardSelector = ""
	if _, m, err := r.probeList(ctx, opts); err == nil && m > 0 {
		r.noteSharded(true, "the shard's list was empty, the resource's was not")
	}
}

// probeList lists one page of whole objects for probeShardEcho and counts
// its items.
func (r *reflector[T]) probeList(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	page, n, err := r.feed.probeShard(ctx, opts)
	if err != nil && ctx.Err() == nil {
		r.opts.log.V(4).Info("could not probe whether the server shards; will try again before the next watch", "error", err)
	}
	return page, n, err
}

// sync is the state that syncs the cache: a streaming list unless it is
// turned off or was given up, else a list.
func (r *reflector[T]) sync(consistent bool) state {
	if r.opts.streaming && !r.streamingOff {
		return streaming{consistent: consistent}
	}
	return listing{consistent: consistent}
}

// next is the transition function: the state that follows s, given what
// running it came to. It does no I/O; besides choosing the state it only
// starts the backoff sequence over after a success and records that
// streaming lists were given up.
func (r *reflector[T]) next(s state, o outcome) state {
	switch s := s.(type) {
	case listing:
		if o.err != nil {
			return backingOff{again: s, retryAfter: o.retryAfter}
		}
		r.backoff.reset()
		return watching{rv: o.rv}
	case streaming:
		switch {
		case o.unsupported:
			r.streamingOff = true
			if !r.loggedFallback {
				r.loggedFallback = true
				r.opts.log.V(1).Info("streaming list not available; falling back to list and watch", "error", o.err)
			}
			return listing(s)
		case o.err != nil:
			return backingOff{again: s, retryAfter: o.retryAfter}
		}
		r.backoff.reset()
		return watching{rv: o.rv, live: o.live}
	case watching:
		switch {
		case o.gone:
			r.opts.log.V(4).Info("resourceVersion expired; relisting", "resourceVersion", o.rv)
			return r.sync(true)
		case o.err != nil:
			return backingOff{again: watching{rv: o.rv}, retryAfter: o.retryAfter}
		}
		if o.healthy {
			r.backoff.reset()
		}
		return watching{rv: o.rv}
	case backingOff:
		return s.again
	}
	return r.sync(false)
}

// exec runs one state.
func (r *reflector[T]) exec(ctx context.Context, s state) outcome {
	switch s := s.(type) {
	case listing:
		r.opts.metrics.ListStarted(r.opts.name, s.consistent)
		rv, echo, err := r.list(ctx, s.consistent)
		if err == nil && echo != "" {
			// Only an echo is conclusive: a metadata-only list never
			// carries one; the probe before the watch settles the rest.
			r.noteSharded(true, "the list echoed the selector")
		}
		return r.failure(outcome{rv: rv}, err)
	case streaming:
		r.opts.metrics.ListStarted(r.opts.name, s.consistent)
		return r.stream(ctx)
	case watching:
		r.probeShardEcho(ctx)
		return r.watch(ctx, s)
	case backingOff:
		d := s.retryAfter
		if d <= 0 {
			d = r.backoff.delay()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return outcome{}
}

// failure sets o's err, with the delay a 429 asked for.
func (r *reflector[T]) failure(o outcome, err error) outcome {
	o.err = err
	if d, ok := apierrors.SuggestsClientDelay(err); ok && apierrors.IsTooManyRequests(err) {
		o.retryAfter = time.Duration(d) * time.Second
	}
	return o
}

// report passes a failure of state s to the informer.
func (r *reflector[T]) report(s state, err error) {
	if r.opts.onError != nil {
		r.opts.onError(err)
	}
	r.opts.log.V(4).Info("list/watch failed; backing off", "state", s.String(), "error", err)
}

// listedPage is one page fetched (and decoded) ahead by fetchPages.
type listedPage[T Object] struct {
	items   []T
	texts   [][]byte // the items' JSON text, when the feed has it; else nil
	page    ListPage
	err     error
	cont    string // the continue token the page was asked with
	partial bool   // more items of the same page follow
}

// listBatch is how many decoded items fetchPages hands over at a time.
const listBatch = 128

// fetchPages lists page after page in its own goroutine, one page ahead of
// the consumer: the server works on page N+1 while page N enters the cache.
// Items of a page come in batches while the page is still arriving (the
// feeds stream it), so that receiving, decoding and caching overlap.
func (r *reflector[T]) fetchPages(ctx context.Context, opts metav1.ListOptions) <-chan listedPage[T] {
	out := make(chan listedPage[T], 1)
	go func() {
		defer close(out)
		var known wire.Known
		if r.sink.cached() > 0 {
			// A relist: the feed may leave the objects the cache holds
			// undecoded.
			known = r.sink.known
		}
		for {
			var items []T
			var texts [][]byte
			collect := func(obj T, text []byte) error {
				items = append(items, obj)
				if text != nil && texts == nil {
					texts = make([][]byte, len(items)-1, listBatch)
				}
				if texts != nil {
					texts = append(texts, text)
				}
				if len(items) < listBatch {
					return nil
				}
				select {
				case out <- listedPage[T]{items: items, texts: texts, partial: true}:
				case <-ctx.Done():
					return ctx.Err()
				}
				items, texts = nil, nil
				return nil
			}
			page, err := r.feed.list(ctx, opts, known, collect)
			select {
			case out <- listedPage[T]{items: items, texts: texts, page: page, err: err, cont: opts.Continue}:
			case <-ctx.Done():
				return
			}
			if err != nil || page.Continue == "" {
				return
			}
			opts.Continue = page.Continue
		}
	}()
	return out
}

// list lists every page into the sink and returns the list's
// resourceVersion and the shard selector its first page echoed.
func (r *reflector[T]) list(ctx context.Context, consistent bool) (rv, echo string, err error) {
	for restarts := 0; ; restarts++ {
		opts := r.withShard(r.opts.listOptions)
		opts.Limit = max(r.opts.pageSize, 0) // negative: one request
		opts.ResourceVersion = ""
		if !consistent && !r.opts.consistent && restarts == 0 {
			// As client-go does: served by the watch cache at any
			// resourceVersion ("0"), which answers at once (the server may
			// send it whole despite the limit); the watch that follows
			// catches up. After a 410, and when a continue token expired,
			// the list is a consistent one, paged.
			opts.ResourceVersion = "0"
		}
		rv, echo, restart, err := r.listOnce(ctx, opts)
		if err == nil && !restart {
			return rv, echo, nil
		}
		if restart && restarts < 3 {
			continue // the continue token expired: a fresh, consistent list
		}
		if err == nil {
			err = errors.New("informer: the list's continue token kept expiring")
		}
		return "", "", err
	}
}

func (r *reflector[T]) listOnce(ctx context.Context, opts metav1.ListOptions) (rv, echo string, restart bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	pages := r.fetchPages(ctx, opts)
	defer func() {
		// Stop fetching, and wait until the fetching goroutine has exited.
		cancel()
		for range pages {
		}
	}()
	r.sink.beginSync()
	listRV := ""
	for p := range pages {
		if p.err != nil {
			r.sink.abortSync()
			if apierrors.IsResourceExpired(p.err) && p.cont != "" {
				return "", "", true, nil
			}
			return "", "", false, p.err
		}
		for i, obj := range p.items {
			var text []byte
			if p.texts != nil {
				text, p.texts[i] = p.texts[i], nil
			}
			r.sink.upsert(watch.Added, obj, text, true)
			var zero T
			p.items[i] = zero
		}
		if p.partial {
			continue
		}
		if listRV == "" {
			listRV, echo = p.page.ResourceVersion, p.page.ShardSelector
		}
		r.sink.endPage(p.page.Continue == "")
		if p.page.Continue == "" {
			r.sink.endSync(listRV)
			return listRV, echo, false, nil
		}
	}
	r.sink.abortSync()
	if err := ctx.Err(); err != nil {
		return "", "", false, err
	}
	return "", "", false, errors.New("informer: the list ended without its last page")
}

// errStreamingUnsupported says the server will not stream the initial list.
var errStreamingUnsupported = errors.New("informer: the server does not support streaming lists")

// refusesStreaming reports the errors of a server that does not know the
// streaming-list parameters.
func refusesStreaming(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err)
}

// stream opens a watch with sendInitialEvents and feeds the initial events
// to the sink until the initial-events-end bookmark. The watch goes on as
// the outcome's live watch, unless the feed said it is one-shot.
func (r *reflector[T]) stream(ctx context.Context) outcome {
	opts := r.withShard(r.opts.listOptions)
	opts.SendInitialEvents = ptr.To(true)
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = ptr.To(int64(r.opts.watchTimeout() / time.Second))
	var known wire.Known
	if r.sink.cached() > 0 {
		// A relist: most initial events are objects the cache already has;
		// the feed may answer those from the frame without decoding them.
		known = r.sink.known
	}
	// The sync begins before the watch opens: the peek of a relist counts
	// known objects as seen from the first frame on.
	r.sink.beginSync()
	st, err := r.openWatch(ctx, opts, known)
	if err != nil {
		r.sink.abortSync()
		if refusesStreaming(err) {
			return outcome{err: fmt.Errorf("%w: %v", errStreamingUnsupported, err), unsupported: true}
		}
		return r.failure(outcome{}, err)
	}
	er := readEvents(ctx, st.Interface, r.opts.initialEventsTimeout)
	defer er.close()
	for {
		ev, ok := er.next()
		if !ok {
			er.close()
			st.Stop() // releases the request's context too
			r.sink.abortSync()
			switch {
			case ctx.Err() != nil:
				return outcome{err: ctx.Err()}
			case er.expired.Load():
				return outcome{err: fmt.Errorf("%w: no initial-events-end bookmark within %s of silence", errStreamingUnsupported, r.opts.initialEventsTimeout), unsupported: true}
			}
			return outcome{err: errors.New("informer: the streaming list ended before its initial-events-end bookmark")}
		}
		rv, end, err := r.apply(ev, true)
		switch {
		case err != nil:
			st.Stop()
			r.sink.abortSync()
			if refusesStreaming(err) {
				return outcome{err: fmt.Errorf("%w: %v", errStreamingUnsupported, err), unsupported: true}
			}
			return r.failure(outcome{}, err)
		case end:
			r.sink.endSync(rv)
			if st.OneShot {
				// Each later event would be a gzip block of its own, or
				// the watch would hold a connection alone: watch on,
				// plain, from the bookmark instead.
				er.close()
				st.Stop()
				return outcome{rv: rv}
			}
			return outcome{rv: rv, live: st.Interface}
		}
	}
}

// apply applies one event to the sink. It returns the resourceVersion the
// event carries ("" when none), whether it is the initial-events-end
// bookmark, and for an ERROR event the server's error.
func (r *reflector[T]) apply(ev watch.Event, syncing bool) (rv string, end bool, err error) {
	r.opts.metrics.Event(r.opts.name, ev.Type)
	if ev.Type == watch.Error {
		return "", false, statusError(ev.Object)
	}
	obj, text, ok := eventObject[T](ev.Object)
	if !ok {
		// A stub for an object the cache holds (counted as seen by known
		// itself), or an object of another type: a sign of life only.
		return "", false, nil
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
		r.sink.upsert(ev.Type, obj, text, syncing)
	case watch.Deleted:
		r.sink.remove(obj)
	case watch.Bookmark:
		end = obj.GetAnnotations()[InitialEventsEndAnnotation] == "true"
	}
	return obj.GetResourceVersion(), end, nil
}

// openWatch opens a watch whose response must start within the idle
// deadline: a server (or a proxy, or a half-dead connection) that accepts
// the request and never answers would otherwise hold the reflector
// forever, since the idle deadline only runs once the stream is open.
// Stopping the returned stream also releases the request's context.
func (r *reflector[T]) openWatch(ctx context.Context, opts metav1.ListOptions, known wire.Known) (wire.Stream, error) {
	d := r.opts.idleTimeout
	wctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	opened, timedOut := false, false
	t := time.NewTimer(d)
	go func() {
		select {
		case <-t.C:
			mu.Lock()
			if !opened {
				timedOut = true
				cancel()
			}
			mu.Unlock()
		case <-wctx.Done():
		}
	}()
	st, err := r.feed.watch(wctx, opts, known)
	mu.Lock()
	opened = true
	late := timedOut
	mu.Unlock()
	t.Stop()
	if err != nil {
		cancel()
		if late && ctx.Err() == nil {
			return wire.Stream{}, fmt.Errorf("informer: the server did not answer the watch request within %s", d)
		}
		return wire.Stream{}, err
	}
	st.Interface = &releasingWatch{Interface: st.Interface, release: cancel}
	return st, nil
}

// releasingWatch is a watch whose Stop also releases its request's
// context.
type releasingWatch struct {
	watch.Interface
	release context.CancelFunc
}

func (w *releasingWatch) Stop() {
	w.Interface.Stop()
	w.release()
}

// statusError is the error of an ERROR event's object.
func statusError(obj any) error {
	if st, ok := obj.(*metav1.Status); ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return fmt.Errorf("informer: watch ERROR event with a %T", obj)
}

// shortWatch: a watch that ends sooner without an event counts as a
// failure (backoff), as in client-go's reflector.
const shortWatch = time.Second

// watch consumes one watch stream: s.live, or a new one from s.rv. The
// outcome carries the last resourceVersion seen; gone on 410; an error
// (which backs off) when the watch could not be opened, the server sent an
// ERROR other than 410, an event did not decode, or the watch ended at
// once without an event.
func (r *reflector[T]) watch(ctx context.Context, s watching) outcome {
	o := outcome{rv: s.rv}
	w := s.live
	events := 1 // on this watch; a streaming list's watch has had its initial events
	if w == nil {
		events = 0
		opts := r.withShard(r.opts.listOptions)
		opts.ResourceVersion = s.rv
		opts.AllowWatchBookmarks = true
		opts.TimeoutSeconds = ptr.To(int64(r.opts.watchTimeout() / time.Second))
		r.opts.metrics.WatchStarted(r.opts.name)
		st, err := r.openWatch(ctx, opts, nil)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				o.gone = true
				return o
			}
			return r.failure(o, err)
		}
		w = st.Interface
	}
	defer w.Stop()
	start := time.Now()
	er := readEvents(ctx, w, r.opts.idleTimeout)
	defer er.close()
	for {
		ev, ok := er.next()
		if !ok {
			lasted := time.Since(start)
			switch {
			case ctx.Err() != nil:
			case er.expired.Load():
				r.opts.log.V(4).Info("watch went silent past the idle deadline; re-watching", "idle", r.opts.idleTimeout)
			case events == 0 && lasted < shortWatch:
				// A server or proxy that ends every watch at once would
				// otherwise be asked again in a tight loop.
				return r.failure(o, fmt.Errorf("informer: the watch ended after %s without an event", lasted.Round(time.Millisecond)))
			default:
				o.healthy = lasted > r.watchHealthyFor
			}
			return o
		}
		events++
		rv, _, err := r.apply(ev, false)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				o.gone = true
				return o
			}
			var se *apierrors.StatusError
			if errors.As(err, &se) && se.ErrStatus.Reason == metav1.StatusReasonInternalError && se.ErrStatus.Code == 500 {
				// A frame that did not decode: log it and resume from the
				// last good resourceVersion, after a backoff (the same
				// object would likely fail again at once).
				r.opts.log.Info("watch stream sent an event that does not decode; re-watching from the last good resourceVersion", "error", err)
				return r.failure(o, fmt.Errorf("informer: the watch sent an event that does not decode: %w", err))
			}
			return r.failure(o, err)
		}
		if rv != "" {
			o.rv = rv
		}
	}
}
