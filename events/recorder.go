package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/dynamic"
)

// The two event types.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Limits of the server's validation of events.k8s.io/v1 Events.
const (
	maxReasonLength   = 128
	maxActionLength   = 128
	maxInstanceLength = 128
	maxNoteLength     = 1024
)

// Defaults of [Options].
const (
	DefaultQueueSize            = 1000
	DefaultSeriesWindow         = 6 * time.Minute
	DefaultSeriesUpdateInterval = 30 * time.Second
	DefaultSpamBurst            = 25
	DefaultSpamRefillInterval   = 5 * time.Minute
	DefaultMaxAttempts          = 5
	DefaultFlushTimeout         = 5 * time.Second
)

// Options configure a [Recorder]. Only ReportingController is required; the
// zero value of every other field means the default named beside it, which
// is client-go's where client-go has one.
type Options struct {
	// ReportingController names the controller that writes the events, as
	// a qualified name ("example.com/gc"). Required.
	ReportingController string
	// ReportingInstance names this replica of it, at most 128 characters.
	// Default: ReportingController + "-" + the host name (client-go's),
	// cut to 128 characters.
	ReportingInstance string

	// QueueSize bounds the occurrences waiting to be written (default
	// 1000). Eventf drops an occurrence when the queue is full.
	QueueSize int
	// SeriesWindow: an occurrence within this time of the last identical
	// one joins its series (default 6 minutes, client-go's).
	SeriesWindow time.Duration
	// SeriesUpdateInterval: a series is patched at most once per interval
	// (default 30 s).
	SeriesUpdateInterval time.Duration
	// SpamBurst and SpamRefillInterval size the token bucket of each
	// object (and event type): SpamBurst events at once, then one per
	// SpamRefillInterval (defaults 25 and 5 minutes, client-go's). A
	// negative SpamBurst turns the spam filter off.
	SpamBurst          int
	SpamRefillInterval time.Duration
	// MaxAttempts bounds the attempts of one write (default 5): conflicts,
	// 429s, server errors and transport failures are retried with backoff
	// from 250 ms doubling to 5 s; other errors are not.
	MaxAttempts int
	// FlushTimeout bounds the flush when Run's context is done (default
	// 5 s): what is not written by then is dropped.
	FlushTimeout time.Duration

	// Metrics, if set, is told of every drop.
	Metrics Metrics
	// Logger receives a line (at V(0)) for every write given up on, and
	// debug logs; the zero value logs nothing.
	Logger logr.Logger
}

// Recorder writes events.k8s.io/v1 Events. Create it with [New], start
// [Recorder.Run], and call [Recorder.Eventf] from anywhere. All methods are
// safe for concurrent use.
type Recorder struct {
	log     logr.Logger
	metrics Metrics
	spam    *spamFilter // nil when off
	queue   chan occurrence
	stats   counters
	writer  *writer
	flush   time.Duration
	ran     atomic.Bool

	// mu guards closed: Eventf holds it for reading while it queues, so
	// that once Run has set closed nothing more enters the queue.
	mu     sync.RWMutex
	closed bool
}

// New returns a Recorder writing through client. It checks opts and starts
// nothing: events are queued until [Recorder.Run] runs.
func New(client dynamic.Interface, opts Options) (*Recorder, error) {
	if client == nil {
		return nil, errors.New("events: New: nil client")
	}
	if opts.ReportingController == "" {
		return nil, errors.New("events: Options.ReportingController is required")
	}
	if errs := validation.IsQualifiedName(opts.ReportingController); len(errs) > 0 {
		return nil, fmt.Errorf("events: Options.ReportingController %q: %s", opts.ReportingController, strings.Join(errs, "; "))
	}
	if opts.ReportingInstance == "" {
		host, _ := os.Hostname()
		opts.ReportingInstance = truncate(opts.ReportingController+"-"+host, maxInstanceLength)
	}
	if len(opts.ReportingInstance) > maxInstanceLength {
		return nil, fmt.Errorf("events: Options.ReportingInstance is %d bytes long; the server takes at most %d", len(opts.ReportingInstance), maxInstanceLength)
	}
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"QueueSize", int64(opts.QueueSize)},
		{"SeriesWindow", int64(opts.SeriesWindow)},
		{"SeriesUpdateInterval", int64(opts.SeriesUpdateInterval)},
		{"SpamRefillInterval", int64(opts.SpamRefillInterval)},
		{"MaxAttempts", int64(opts.MaxAttempts)},
		{"FlushTimeout", int64(opts.FlushTimeout)},
	} {
		if f.value < 0 {
			return nil, fmt.Errorf("events: Options.%s is negative", f.name)
		}
	}
	opts.QueueSize = orDefault(opts.QueueSize, DefaultQueueSize)
	opts.SeriesWindow = orDefault(opts.SeriesWindow, DefaultSeriesWindow)
	opts.SeriesUpdateInterval = orDefault(opts.SeriesUpdateInterval, DefaultSeriesUpdateInterval)
	opts.SpamBurst = orDefault(opts.SpamBurst, DefaultSpamBurst)
	opts.SpamRefillInterval = orDefault(opts.SpamRefillInterval, DefaultSpamRefillInterval)
	opts.MaxAttempts = orDefault(opts.MaxAttempts, DefaultMaxAttempts)
	opts.FlushTimeout = orDefault(opts.FlushTimeout, DefaultFlushTimeout)
	log := opts.Logger

	r := &Recorder{
		log:     log,
		metrics: opts.Metrics,
		queue:   make(chan occurrence, opts.QueueSize),
		flush:   opts.FlushTimeout,
	}
	if opts.SpamBurst > 0 {
		r.spam = newSpamFilter(opts.SpamBurst, opts.SpamRefillInterval, spamCacheSize)
	}
	r.writer = &writer{
		writes: &writes{
			client:      client,
			log:         log,
			metrics:     opts.Metrics,
			stats:       &r.stats,
			controller:  opts.ReportingController,
			instance:    opts.ReportingInstance,
			maxAttempts: opts.MaxAttempts,
			backoffBase: 250 * time.Millisecond,
			backoffMax:  5 * time.Second,
		},
		window:   opts.SeriesWindow,
		interval: opts.SeriesUpdateInterval,
		cache:    map[seriesKey]*series{},
	}
	return r, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Eventf records that action happened to regarding (and related, which may
// be nil), for reason, with a note made by fmt.Sprintf(note, args...).
// eventType is Normal or Warning. It never blocks: the event is queued for
// Run to write, and dropped — counted and reported to Options.Metrics, not
// returned — when it is invalid, when the object's spam filter is empty,
// when the queue is full or after Run has returned.
//
// The reason and action must be 1 to 128 bytes long (the server refuses
// others); a note longer than 1024 bytes is cut to 1024.
func (r *Recorder) Eventf(regarding, related Object, eventType, reason, action, note string, args ...any) {
	o, relatedErr, err := prepare(time.Now(), regarding, related, eventType, reason, action, note, args)
	if err != nil {
		r.invalid(err, o)
		return
	}
	if relatedErr != nil {
		// As client-go: the event is recorded without it.
		r.log.V(4).Info("events: related object left out", "error", relatedErr)
	}
	ref := o.regarding
	if r.spam != nil && !r.spam.allow(spamKey{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, ref.UID, eventType}, o.at) {
		r.stats.drop(r.metrics, DropSpamFilter)
		return
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		r.stats.drop(r.metrics, DropShutdown)
		return
	}
	select {
	case r.queue <- o:
		r.stats.queued.Add(1)
	default:
		r.stats.drop(r.metrics, DropQueueFull)
	}
}

// prepare checks an event and makes its occurrence, as Eventf records it:
// err says why the event is refused; relatedErr, why the related object
// is left out of an event that is kept.
func prepare(at time.Time, regarding, related Object, eventType, reason, action, note string, args []any) (o occurrence, relatedErr, err error) {
	o = occurrence{at: at, eventType: eventType, reason: reason, action: action, note: truncate(fmt.Sprintf(note, args...), maxNoteLength)}
	if isNil(regarding) {
		return o, nil, errors.New("events: Eventf: nil regarding object")
	}
	if o.regarding, err = referenceTo(regarding); err != nil {
		return o, nil, err
	}
	if err := checkEvent(eventType, reason, action); err != nil {
		return o, nil, err
	}
	if !isNil(related) {
		rel, err := referenceTo(related)
		if err != nil {
			return o, err, nil
		}
		o.related = &rel
	}
	return o, nil, nil
}

func checkEvent(eventType, reason, action string) error {
	if eventType != Normal && eventType != Warning {
		return fmt.Errorf("events: type %q is neither Normal nor Warning", eventType)
	}
	if reason == "" || len(reason) > maxReasonLength {
		return fmt.Errorf("events: reason is %d bytes long; the server takes 1 to %d", len(reason), maxReasonLength)
	}
	if action == "" || len(action) > maxActionLength {
		return fmt.Errorf("events: action is %d bytes long; the server takes 1 to %d", len(action), maxActionLength)
	}
	return nil
}

func (r *Recorder) invalid(err error, o occurrence) {
	r.log.Error(err, "events: event dropped", "reason", o.reason, "action", o.action)
	r.stats.drop(r.metrics, DropInvalid)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Run writes the queued events until ctx is done, then flushes: it stops
// taking events (Eventf drops them from then on), writes those still
// queued and every series count the server does not have yet, within
// Options.FlushTimeout, and returns once all that has ended. Run writes in
// the calling goroutine; it returns nil, or an error if called twice.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.ran.CompareAndSwap(false, true) {
		return errors.New("events: Recorder.Run called twice")
	}
	wctx, stop := r.writeContext(ctx)
	defer stop()

	w := r.writer
	var (
		t        *time.Timer
		deadline time.Time
	)
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for ctx.Err() == nil {
		next, ok := w.nextDue()
		if t != nil && (!ok || !next.Equal(deadline)) {
			t.Stop()
			t = nil
		}
		var fire <-chan time.Time
		if ok {
			if t == nil {
				t, deadline = time.NewTimer(time.Until(next)), next
			}
			fire = t.C
		}
		select {
		case <-ctx.Done():
		case o := <-r.queue:
			w.record(wctx, o)
		case <-fire:
			t = nil
			w.runDue(wctx)
		}
	}

	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	for drained := false; !drained; {
		select {
		case o := <-r.queue:
			w.record(wctx, o)
		default:
			drained = true
		}
	}
	w.flush(wctx)
	return nil
}

// writeContext returns the context of Run's writes: not cancelled with ctx,
// so that a write under way and the flush can finish, but
// Options.FlushTimeout after ctx is done; and a function to release it.
func (r *Recorder) writeContext(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var (
		mu       sync.Mutex
		deadline *time.Timer
	)
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if wctx.Err() == nil {
			deadline = time.AfterFunc(r.flush, cancel)
		}
	})
	return wctx, func() {
		stopAfter()
		cancel()
		mu.Lock()
		defer mu.Unlock()
		if deadline != nil {
			deadline.Stop()
		}
	}
}

// Stats returns a snapshot of the recorder's counters.
func (r *Recorder) Stats() Stats { return r.stats.snapshot() }
