package informer

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// FollowOptions configure Follow. The zero value follows every object of
// the source: a first list in pages of 500, then watches of 5–10 minutes
// each, failures retried after about 0.8 s doubling to 30 s.
type FollowOptions struct {
	// ListOptions select the objects followed: LabelSelector,
	// FieldSelector and ShardSelector go into every list and watch.
	// TimeoutSeconds, when set, is what each watch asks the server for
	// (the server then ends the stream, and Follow resumes it); unset,
	// each watch asks for 5–10 minutes, chosen at random. Follow manages
	// the other fields itself.
	ListOptions metav1.ListOptions
	// PageSize is how many objects each list request asks for: 0 means
	// 500; a negative value lists in one request.
	PageSize int64
	// ResourceVersion, when set, starts Follow watching from it, without
	// a first list: for a caller that has listed already. A 410 on it
	// makes Follow list, as a 410 later would.
	ResourceVersion string
	// InitialBackoff and MaxBackoff bound the waits before a failure is
	// retried: the first is InitialBackoff (0: 800 ms), each next one
	// doubles up to MaxBackoff (0: 30 s), each with up to 25% jitter added.
	// A 429's Retry-After replaces the wait it asks for. The sequence
	// starts over after a successful list or a watch that lasted two
	// minutes.
	InitialBackoff, MaxBackoff time.Duration
	// FailFast ends Follow with the error of a first list that fails,
	// instead of retrying it: for a tool that should say at once that the
	// server is unreachable. Later lists and watches are retried
	// regardless. Without a first list (ResourceVersion set) it does
	// nothing.
	FailFast bool
	// OnError, when set, is told of each failure Follow is about to retry
	// (after a backoff): a list or watch request that failed, a watch
	// ERROR event other than 410, a watch that ended at once without an
	// event. Returning an error ends Follow with it instead.
	OnError func(err error) error
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger
}

// FollowFuncs receive what Follow sees, one call at a time, in Follow's
// goroutine, in the order the server reported it. Each returns done=true
// to end Follow with nil, or an error to end Follow with that error.
// Funcs left nil are not called.
type FollowFuncs[T Object] struct {
	// Listed gets every object of each list, once its last page has
	// arrived: the first list (none with FollowOptions.ResourceVersion),
	// and each list made after the server expired the watch's
	// resourceVersion (410). Such a list is the state after a gap: what
	// changed meanwhile is in it, what was deleted meanwhile is missing
	// from it, and nothing of the gap comes as an Event.
	Listed func(items []T) (done bool, err error)
	// Page gets each page of each list as it arrives, before Listed gets
	// the whole list, for a caller that handles a long list as it comes.
	// first is set on a list's first page (again when a list starts over
	// because its continue token expired), last on its last page.
	Page func(items []T, first, last bool) (done bool, err error)
	// Event gets each Added, Modified and Deleted event of the watches; a
	// Deleted event's object is the object's last state. Bookmarks and
	// ERROR events are Follow's own.
	Event func(typ watch.EventType, obj T) (done bool, err error)
}

// Follow lists the objects of src that opts select, then watches them from
// the list's resourceVersion, handing each list and each change to fns. It
// is the list-and-watch of an Informer without the cache, for code that
// waits for a condition or prints changes as they come: the same state
// machine and recovery rules (see the package documentation), with these
// differences: every list is a consistent read (never the watch cache's
// resourceVersion "0", which may be stale), and there is no streaming
// list. To follow the whole objects of a dynamic.ResourceInterface, pass
// NewResourceSource(ri, SourceOptions{}) as src.
//
// A watch the server ends (its timeout, a dropped connection, a stream
// silent past 150 s) is resumed from the last resourceVersion seen, from
// an event or a bookmark, so no change is missed or delivered twice. A
// 410 Gone or Expired — when the watch is opened or as an ERROR event —
// makes Follow list again and hand that list to fns.Page and fns.Listed.
// Other failures are retried after a backoff (see FollowOptions); 400,
// 401, 403 and 404 answers end Follow with the server's error, an
// *apierrors.StatusError.
//
// Follow returns nil when a func says done, the func's error when one
// fails, and ctx's error when ctx ends first; by then the watch it had
// open is stopped. The funcs are not called after it returns.
func Follow[T Object](ctx context.Context, src Source[T], opts FollowOptions, fns FollowFuncs[T]) error {
	if src == nil {
		return errors.New("informer: Follow with a nil Source")
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &followSink[T]{fns: fns, stop: cancel}
	ro := reflectorOptions{
		listOptions: metav1.ListOptions{
			LabelSelector: opts.ListOptions.LabelSelector,
			FieldSelector: opts.ListOptions.FieldSelector,
			ShardSelector: opts.ListOptions.ShardSelector,
		},
		pageSize:       opts.PageSize,
		log:            opts.Logger,
		consistent:     true,
		startRV:        opts.ResourceVersion,
		backoffInitial: opts.InitialBackoff,
		backoffMax:     opts.MaxBackoff,
		onError: func(err error) {
			switch {
			case terminal(err):
				s.end(err)
			case opts.FailFast && opts.ResourceVersion == "" && !s.listed:
				s.end(err)
			case opts.OnError != nil:
				if err := opts.OnError(err); err != nil {
					s.end(err)
				}
			}
		},
	}
	if t := opts.ListOptions.TimeoutSeconds; t != nil && *t > 0 {
		d := time.Duration(*t) * time.Second
		ro.watchTimeout = func() time.Duration { return d }
	}
	newReflector(feedOf(src), sink[T](s), ro).run(fctx)
	if s.ended {
		return s.err
	}
	return ctx.Err()
}

// terminal reports the answers that retrying cannot change: the request
// is wrong (400), not authenticated (401), not allowed (403), or for a
// resource the server does not serve (404).
func terminal(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err)
}

// followSink is the reflector's sink for Follow: it hands lists, pages
// and events to the funcs, and ends Follow when one says so.
type followSink[T Object] struct {
	fns  FollowFuncs[T]
	stop context.CancelFunc

	page   []T  // the items of the page in progress (for fns.Page)
	list   []T  // the items of the list in progress (for fns.Listed)
	first  bool // the page in progress is its list's first
	listed bool // a list has completed

	ended bool  // Follow ends: a func said done or failed, or the server refused
	err   error // what Follow returns when ended
}

// end ends Follow with err (nil: done).
func (s *followSink[T]) end(err error) {
	if !s.ended {
		s.ended, s.err = true, err
		s.stop()
	}
}

// result ends Follow if a func said so.
func (s *followSink[T]) result(done bool, err error) {
	if done || err != nil {
		s.end(err)
	}
}

func (s *followSink[T]) beginSync() {
	s.page, s.list, s.first = nil, nil, true
}

func (s *followSink[T]) known(string, string) bool { return false }

func (s *followSink[T]) cached() int { return 0 }

func (s *followSink[T]) upsert(typ watch.EventType, obj T, _ []byte, syncing bool) {
	switch {
	case s.ended:
	case syncing:
		if s.fns.Page != nil {
			s.page = append(s.page, obj)
		}
		if s.fns.Listed != nil {
			s.list = append(s.list, obj)
		}
	case s.fns.Event != nil:
		s.result(s.fns.Event(typ, obj))
	}
}

func (s *followSink[T]) remove(obj T) {
	if !s.ended && s.fns.Event != nil {
		s.result(s.fns.Event(watch.Deleted, obj))
	}
}

func (s *followSink[T]) endPage(last bool) {
	if s.ended || s.fns.Page == nil {
		return
	}
	items, first := s.page, s.first
	s.page, s.first = nil, false
	s.result(s.fns.Page(items, first, last))
}

func (s *followSink[T]) endSync(string) {
	s.listed = true
	items := s.list
	s.list = nil
	if !s.ended && s.fns.Listed != nil {
		s.result(s.fns.Listed(items))
	}
}

func (s *followSink[T]) abortSync() {
	s.page, s.list = nil, nil
}
