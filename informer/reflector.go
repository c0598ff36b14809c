package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
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

// sink receives what the reflector learns, in order. A sync (a list, or
// the initial events of a streaming list) is bracketed by beginSync and
// endSync; objects not seen between them are gone.
type sink[T Object] interface {
	beginSync()
	// known reports whether the cache holds key at resourceVersion rv and,
	// if so, counts it as seen by the sync in progress (a relist may then
	// skip decoding it).
	known(key, rv string) bool
	// cached reports how many objects the cache holds.
	cached() int
	// upsert caches obj; raw, when not nil, is its JSON text as the
	// server sent it (a source's wireObject), which a compact store keeps
	// as is.
	upsert(obj T, raw []byte, syncing bool)
	remove(obj T)
	endSync(resourceVersion string)
	abortSync()
}

// state is a reflector state. The recovery rules are the transitions of
// reflector.step, all in one place:
//
//	initial    → streaming if allowed, else listing
//	listing    → watching on success; backoff (then listing) on error;
//	             a 410 on a continue page restarts the list from scratch
//	streaming  → watching once the initial-events-end bookmark arrives (on
//	             the same stream, or on a new plain watch from the
//	             bookmark when the stream came gzip-compressed or over a
//	             bulk connection);
//	             listing (streaming turned off, logged once) when the server
//	             refuses the parameters or the bookmark does not come in time;
//	             backoff (then streaming) on other errors
//	watching   → watching again (from the last resourceVersion seen) when the
//	             stream ends or goes silent past the idle deadline;
//	             relist (streaming or listing) on 410 Gone;
//	             backoff (then watching) when the watch cannot be opened,
//	             the server sends an ERROR, an event does not decode, or
//	             the watch ends within a second without an event
//	backoff    → the state that failed, after ~0.8 s doubling to 30 s with
//	             jitter (or the server's Retry-After)
type state int

const (
	stateInitial state = iota
	stateListing
	stateStreaming
	stateWatching
	stateBackoff
)

func (s state) String() string {
	return [...]string{"initial", "listing", "streaming", "watching", "backoff"}[s]
}

// reflectorOptions configure a reflector.
type reflectorOptions struct {
	listOptions          metav1.ListOptions // selectors
	pageSize             int64
	streaming            bool
	idleTimeout          time.Duration
	initialEventsTimeout time.Duration
	onError              func(error)
	log                  *zap.Logger
	clock                clock
	watchTimeout         func() time.Duration
}

// reflector keeps a sink equal to the server: list (or stream) then watch,
// resuming, relisting and backing off as the state machine says.
type reflector[T Object] struct {
	src  Source[T]
	sink sink[T]
	opts reflectorOptions

	rv              string
	state           state
	after           state // the state to return to after backoff
	retryAfter      time.Duration
	backoff         *backoff
	streamingOff    bool
	consistentList  bool // the next list must be consistent (after a 410)
	loggedFallback  bool
	pending         watch.Interface // a streaming watch that continues as the watch
	watchHealthyFor time.Duration
}

func newReflector[T Object](src Source[T], s sink[T], opts reflectorOptions) *reflector[T] {
	if opts.pageSize == 0 {
		opts.pageSize = defaultPageSize
	}
	if opts.idleTimeout == 0 {
		opts.idleTimeout = defaultIdleTimeout
	}
	if opts.initialEventsTimeout == 0 {
		opts.initialEventsTimeout = defaultInitialEventsTimeout
	}
	if opts.clock == nil {
		opts.clock = realClock{}
	}
	if opts.log == nil {
		opts.log = zap.NewNop()
	}
	if opts.watchTimeout == nil {
		opts.watchTimeout = func() time.Duration {
			return minWatchTimeout + time.Duration(rand.Int64N(int64(maxWatchTimeout-minWatchTimeout)))
		}
	}
	return &reflector[T]{src: src, sink: s, opts: opts, backoff: newBackoff(opts.clock), watchHealthyFor: backoffReset}
}

// run steps the state machine until ctx is done.
func (r *reflector[T]) run(ctx context.Context) {
	defer func() {
		if r.pending != nil {
			r.pending.Stop()
		}
	}()
	for ctx.Err() == nil {
		r.state = r.step(ctx, r.state)
	}
}

// step runs one state and returns the next.
func (r *reflector[T]) step(ctx context.Context, s state) state {
	switch s {
	case stateInitial:
		if r.opts.streaming && !r.streamingOff {
			return stateStreaming
		}
		return stateListing
	case stateListing:
		if err := r.list(ctx); err != nil {
			return r.fail(ctx, err, stateListing)
		}
		r.backoff.reset()
		return stateWatching
	case stateStreaming:
		switch err := r.stream(ctx); {
		case err == nil:
			r.backoff.reset()
			return stateWatching
		case errors.Is(err, errStreamingUnsupported):
			r.streamingOff = true
			if !r.loggedFallback {
				r.loggedFallback = true
				r.opts.log.Info("streaming list not available; falling back to list and watch", zap.Error(err))
			}
			return stateListing
		default:
			return r.fail(ctx, err, stateStreaming)
		}
	case stateWatching:
		gone, err := r.watch(ctx)
		switch {
		case ctx.Err() != nil:
			return stateWatching
		case gone:
			r.opts.log.Debug("resourceVersion expired; relisting", zap.String("resourceVersion", r.rv))
			r.rv = ""
			r.consistentList = true
			if r.opts.streaming && !r.streamingOff {
				return stateStreaming
			}
			return stateListing
		case err != nil:
			return r.fail(ctx, err, stateWatching)
		}
		return stateWatching
	case stateBackoff:
		d := r.backoff.delay()
		if r.retryAfter > 0 {
			d, r.retryAfter = r.retryAfter, 0
		}
		t := r.opts.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
		return r.after
	}
	return stateInitial
}

// fail reports err and moves to backoff, returning to next afterwards.
func (r *reflector[T]) fail(ctx context.Context, err error, next state) state {
	if ctx.Err() != nil {
		return next
	}
	if r.opts.onError != nil {
		r.opts.onError(err)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); ok && apierrors.IsTooManyRequests(err) {
		r.retryAfter = time.Duration(d) * time.Second
	}
	r.opts.log.Debug("list/watch failed; backing off", zap.String("state", next.String()), zap.Error(err))
	r.after = next
	return stateBackoff
}

// listedPage is one page fetched (and decoded) ahead by fetchPages.
type listedPage[T Object] struct {
	items   []T
	raws    [][]byte // the items' JSON text, from a wireLister; else nil
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
// sources stream it), so that receiving, decoding and caching overlap.
func (r *reflector[T]) fetchPages(ctx context.Context, opts metav1.ListOptions) <-chan listedPage[T] {
	out := make(chan listedPage[T], 1)
	go func() {
		defer close(out)
		skipper, canSkip := r.src.(skippingLister[T])
		wirer, wired := r.src.(wireLister[T])
		relist := r.sink.cached() > 0
		for {
			var items []T
			var raws [][]byte
			collectWire := func(obj T, raw []byte) error {
				items = append(items, obj)
				if wired {
					raws = append(raws, raw)
				}
				if len(items) < listBatch {
					return nil
				}
				select {
				case out <- listedPage[T]{items: items, raws: raws, partial: true}:
				case <-ctx.Done():
					return ctx.Err()
				}
				items, raws = nil, nil
				return nil
			}
			collect := func(obj T) error { return collectWire(obj, nil) }
			var known func(key, rv string) bool
			if relist {
				known = r.sink.known
			}
			var page ListPage
			var err error
			switch {
			case wired:
				page, err = wirer.listWire(ctx, opts, known, collectWire)
			case canSkip && relist:
				page, err = skipper.ListSkipping(ctx, opts, known, collect)
			default:
				page, err = r.src.List(ctx, opts, collect)
			}
			select {
			case out <- listedPage[T]{items: items, raws: raws, page: page, err: err, cont: opts.Continue}:
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

// list lists every page into the sink.
func (r *reflector[T]) list(ctx context.Context) error {
	for restarts := 0; ; restarts++ {
		opts := r.opts.listOptions
		opts.Limit = r.opts.pageSize
		opts.ResourceVersion = ""
		if !r.consistentList && restarts == 0 {
			// As client-go does: served by the watch cache at any
			// resourceVersion ("0"), which answers at once (the server may
			// send it whole despite the limit); the watch that follows
			// catches up. After a 410, and when a continue token expired,
			// the list is a consistent one, paged.
			opts.ResourceVersion = "0"
		}
		restart, err := r.listOnce(ctx, opts)
		if err == nil && !restart {
			r.consistentList = false
			return nil
		}
		if restart && restarts < 3 {
			continue // the continue token expired: a fresh, consistent list
		}
		if err == nil {
			err = errors.New("informer: the list's continue token kept expiring")
		}
		return err
	}
}

func (r *reflector[T]) listOnce(ctx context.Context, opts metav1.ListOptions) (restart bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.sink.beginSync()
	listRV := ""
	for p := range r.fetchPages(ctx, opts) {
		if p.err != nil {
			r.sink.abortSync()
			if apierrors.IsResourceExpired(p.err) && p.cont != "" {
				return true, nil
			}
			return false, p.err
		}
		for i, obj := range p.items {
			var raw []byte
			if p.raws != nil {
				raw, p.raws[i] = p.raws[i], nil
			}
			r.sink.upsert(obj, raw, true)
			var zero T
			p.items[i] = zero
		}
		if p.partial {
			continue
		}
		if listRV == "" {
			listRV = p.page.ResourceVersion
		}
		if p.page.Continue == "" {
			r.rv = listRV
			r.sink.endSync(listRV)
			return false, nil
		}
	}
	r.sink.abortSync()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return false, errors.New("informer: the list ended without its last page")
}

// errStreamingUnsupported says the server will not stream the initial list.
var errStreamingUnsupported = errors.New("informer: the server does not support streaming lists")

// stream opens a watch with sendInitialEvents and feeds the initial events
// to the sink until the initial-events-end bookmark. The watch stays open
// for stateWatching.
func (r *reflector[T]) stream(ctx context.Context) error {
	opts := r.opts.listOptions
	opts.SendInitialEvents = ptr.To(true)
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	opts.ResourceVersion = r.rv
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = ptr.To(int64(r.opts.watchTimeout() / time.Second))
	open := r.src.Watch
	if p, ok := r.src.(peekingWatcher[T]); ok && r.sink.cached() > 0 {
		// A relist: most initial events are objects the cache already has;
		// answer those from the frame without decoding them.
		open = func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return p.WatchPeek(ctx, opts, r.sink.known)
		}
	}
	// The sync begins before the watch opens: the peek of a relist counts
	// known objects as seen from the first frame on.
	r.sink.beginSync()
	w, stop, err := r.openWatchWith(ctx, opts, r.opts.idleTimeout, open)
	if err != nil {
		r.sink.abortSync()
		if apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err) {
			return fmt.Errorf("%w: %v", errStreamingUnsupported, err)
		}
		return err
	}
	w = stopWith(w, stop)
	er := readEvents(ctx, r.opts.clock, w, r.opts.initialEventsTimeout)
	defer er.close()
	for {
		ev, ok := er.next()
		if !ok {
			er.close()
			w.Stop() // releases the request's context too
			r.sink.abortSync()
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case er.expired.Load():
				return fmt.Errorf("%w: no initial-events-end bookmark within %s of silence", errStreamingUnsupported, r.opts.initialEventsTimeout)
			}
			return errors.New("informer: the streaming list ended before its initial-events-end bookmark")
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			obj, raw, ok := eventObject[T](ev.Object)
			if !ok {
				continue
			}
			r.sink.upsert(obj, raw, true)
		case watch.Deleted:
			if obj, _, ok := eventObject[T](ev.Object); ok {
				r.sink.remove(obj)
			}
		case watch.Bookmark:
			obj, _, ok := eventObject[T](ev.Object)
			if !ok {
				continue
			}
			if obj.GetAnnotations()[InitialEventsEndAnnotation] == "true" {
				r.rv = obj.GetResourceVersion()
				r.sink.endSync(r.rv)
				if oneShotStream(w) {
					// Each later event would be a gzip block of its own, or
					// the watch would hold a connection alone: watch on,
					// plain, from the bookmark instead.
					er.close()
					w.Stop()
					return nil
				}
				r.pending = w
				return nil
			}
		case watch.Error:
			w.Stop()
			r.sink.abortSync()
			err := statusError(ev.Object)
			if apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) {
				return fmt.Errorf("%w: %v", errStreamingUnsupported, err)
			}
			return err
		}
	}
}

// openWatch opens a watch whose response must start within d: a server (or
// a proxy, or a half-dead connection) that accepts the request and never
// answers would otherwise hold the reflector forever, since the idle
// deadline only runs once the stream is open. The returned stop must be
// called when the watch is done with (it releases the request's context).
func (r *reflector[T]) openWatch(ctx context.Context, opts metav1.ListOptions, d time.Duration) (watch.Interface, context.CancelFunc, error) {
	return r.openWatchWith(ctx, opts, d, r.src.Watch)
}

// openWatchWith is openWatch with the watch call given.
func (r *reflector[T]) openWatchWith(ctx context.Context, opts metav1.ListOptions, d time.Duration, open func(context.Context, metav1.ListOptions) (watch.Interface, error)) (watch.Interface, context.CancelFunc, error) {
	wctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	opened, timedOut := false, false
	t := r.opts.clock.NewTimer(d)
	go func() {
		select {
		case <-t.C():
			mu.Lock()
			if !opened {
				timedOut = true
				cancel()
			}
			mu.Unlock()
		case <-wctx.Done():
		}
	}()
	w, err := open(wctx, opts)
	mu.Lock()
	opened = true
	late := timedOut
	mu.Unlock()
	t.Stop()
	if err != nil {
		cancel()
		if late && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("informer: the server did not answer the watch request within %s", d)
		}
		return nil, nil, err
	}
	return w, cancel, nil
}

// stopWith makes Stop also release the watch request's context.
func stopWith(w watch.Interface, release context.CancelFunc) watch.Interface {
	return &releasingWatch{Interface: w, release: release}
}

// oneShotStream reports whether w is a stream to end after its initial
// events: one the server sent gzip-compressed (rest.Request.CompressedWatch)
// or one on a bulk connection (rest.Request.Bulk).
func oneShotStream(w watch.Interface) bool {
	if rw, ok := w.(*releasingWatch); ok {
		w = rw.Interface
	}
	if c, ok := w.(interface{ Compressed() bool }); ok && c.Compressed() {
		return true
	}
	b, ok := w.(interface{ Bulk() bool })
	return ok && b.Bulk()
}

type releasingWatch struct {
	watch.Interface
	release context.CancelFunc
}

func (w *releasingWatch) Stop() {
	w.Interface.Stop()
	w.release()
}

// errGone marks a 410 Gone during a watch.
func statusError(obj any) error {
	if st, ok := obj.(*metav1.Status); ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return fmt.Errorf("informer: watch ERROR event with a %T", obj)
}

// shortWatch: a watch that ends sooner without an event counts as a
// failure (backoff), as in client-go's reflector.
const shortWatch = time.Second

// watch consumes one watch stream (the pending streaming watch, or a new
// one from the last resourceVersion). It returns gone=true on 410, and an
// error (which backs off) when the watch could not be opened, the server
// sent an ERROR other than 410, an event did not decode, or the watch
// ended at once without an event.
func (r *reflector[T]) watch(ctx context.Context) (gone bool, err error) {
	w := r.pending
	r.pending = nil
	events := 1 // on this watch; a streaming list's watch has had its initial events
	if w == nil {
		events = 0
		opts := r.opts.listOptions
		opts.ResourceVersion = r.rv
		opts.AllowWatchBookmarks = true
		opts.TimeoutSeconds = ptr.To(int64(r.opts.watchTimeout() / time.Second))
		var stop context.CancelFunc
		w, stop, err = r.openWatch(ctx, opts, r.opts.idleTimeout)
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return true, nil
			}
			return false, err
		}
		w = stopWith(w, stop)
	}
	defer w.Stop()
	start := r.opts.clock.Now()
	er := readEvents(ctx, r.opts.clock, w, r.opts.idleTimeout)
	defer er.close()
	for {
		ev, ok := er.next()
		if !ok {
			lasted := r.opts.clock.Now().Sub(start)
			switch {
			case ctx.Err() != nil:
			case er.expired.Load():
				r.opts.log.Debug("watch went silent past the idle deadline; re-watching", zap.Duration("idle", r.opts.idleTimeout))
			case events == 0 && lasted < shortWatch:
				// A server or proxy that ends every watch at once would
				// otherwise be asked again in a tight loop.
				return false, fmt.Errorf("informer: the watch ended after %s without an event", lasted.Round(time.Millisecond))
			case lasted > r.watchHealthyFor:
				r.backoff.reset()
			}
			return false, nil
		}
		events++
		switch ev.Type {
		case watch.Added, watch.Modified:
			if obj, raw, ok := eventObject[T](ev.Object); ok {
				r.sink.upsert(obj, raw, false)
				r.rv = obj.GetResourceVersion()
			}
		case watch.Deleted:
			if obj, _, ok := eventObject[T](ev.Object); ok {
				r.sink.remove(obj)
				r.rv = obj.GetResourceVersion()
			}
		case watch.Bookmark:
			if obj, _, ok := eventObject[T](ev.Object); ok && obj.GetResourceVersion() != "" {
				r.rv = obj.GetResourceVersion()
			}
		case watch.Error:
			err := statusError(ev.Object)
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				return true, nil
			}
			var se *apierrors.StatusError
			if errors.As(err, &se) && se.ErrStatus.Reason == metav1.StatusReasonInternalError && se.ErrStatus.Code == 500 {
				// A frame that did not decode: log it and resume from the
				// last good resourceVersion, after a backoff (the same
				// object would likely fail again at once).
				r.opts.log.Warn("watch stream sent an event that does not decode; re-watching from the last good resourceVersion", zap.Error(err))
				return false, fmt.Errorf("informer: the watch sent an event that does not decode: %w", err)
			}
			return false, err
		}
	}
}
