package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kdyn/kdyn/workqueue"
)

// Result is what a reconcile asks for besides success or failure.
type Result struct {
	// RequeueAfter, when positive, reconciles the key again after this
	// long. With a nil error the key's backoff starts over first; with an
	// error the error wins (the key is retried with backoff).
	RequeueAfter time.Duration
}

// ReconcileFunc brings the world in line with the desired state of one
// key. An error retries the key with per-key exponential backoff; a
// panic is recovered, counted and treated as an error.
type ReconcileFunc[K comparable] func(ctx context.Context, key K) (Result, error)

// Options configure a Controller. The zero value is useful: one worker,
// client-go's default backoff, no timeout, no metrics.
type Options[K comparable] struct {
	// Workers reconcile concurrently (never the same key twice at once).
	// Zero means 1.
	Workers int
	// RateLimiter decides each key's backoff after a failure. Nil means
	// workqueue.DefaultRateLimiter: 5 ms doubling to 1000 s per key, and
	// 10 retries a second overall with a burst of 100, as client-go's
	// default controller rate limiter.
	RateLimiter workqueue.RateLimiter[K]
	// ReconciliationTimeout bounds each reconcile: its context is
	// cancelled after this long. Zero means no bound.
	ReconciliationTimeout time.Duration
	// ShutdownGracePeriod is how long reconciles in flight when Run's
	// context ends may go on (their context stays live until then); zero
	// means 30 s.
	ShutdownGracePeriod time.Duration
	// Metrics receives reconcile outcomes, durations, panics and worker
	// counts (package metrics exports them under controller-runtime's
	// names). Nil observes nothing.
	Metrics Metrics
	// QueueMetrics is passed to the controller's work queue (named after
	// the controller).
	QueueMetrics workqueue.Metrics
	// Logger receives a line per failed reconcile and per panic; the zero
	// value logs nothing.
	Logger logr.Logger
	// Owns, when set, says whether this replica owns a key (a sharded
	// controller: the key's object is in its shard). A key it does not own
	// is dropped as a worker takes it, without a reconcile; Drain waits
	// for the reconciles of keys it no longer owns. Nil owns every key.
	Owns func(key K) bool
}

// Metrics receives what a controller does, for an exporter: package
// metrics exports it as controller-runtime's controller_runtime_*
// families. The methods must be cheap and safe for concurrent use.
type Metrics interface {
	// Workers is called once, as Run starts, with the number of workers.
	Workers(controller string, n int)
	// Started is called as a reconcile starts.
	Started(controller string)
	// Finished is called as a reconcile ends: result is "success",
	// "error" or "requeue_after"; a panic is an "error", after Panicked.
	Finished(controller, result string, d time.Duration)
	// Panicked is called for each reconcile that panicked.
	Panicked(controller string)
}

type noMetrics struct{}

func (noMetrics) Workers(string, int)                    {}
func (noMetrics) Started(string)                         {}
func (noMetrics) Finished(string, string, time.Duration) {}
func (noMetrics) Panicked(string)                        {}

// Controller runs a ReconcileFunc over the keys of its work queue: the loop
// every controller writes by hand, once. Add keys from event handlers; Run
// the workers. It is safe for concurrent use.
type Controller[K comparable] struct {
	name      string
	reconcile ReconcileFunc[K]
	opts      Options[K]
	queue     *workqueue.Queue[K]
	metrics   Metrics
	log       logr.Logger

	mu  sync.Mutex
	ran bool
	// inFlight holds the keys being reconciled, each with the cancel of
	// its reconcile's context (under mu). The work queue never hands one
	// key to two workers at once.
	inFlight map[K]context.CancelFunc
}

// New returns a controller named name (its queue's name and metrics
// label) that reconciles keys with reconcile.
func New[K comparable](name string, reconcile ReconcileFunc[K], opts Options[K]) (*Controller[K], error) {
	if name == "" {
		return nil, errors.New("controller: a controller needs a name")
	}
	if reconcile == nil {
		return nil, fmt.Errorf("controller %s: nil ReconcileFunc", name)
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("controller %s: Workers must not be negative, got %d", name, opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = 1
	}
	if opts.ShutdownGracePeriod <= 0 {
		opts.ShutdownGracePeriod = 30 * time.Second
	}
	c := &Controller[K]{name: name, reconcile: reconcile, opts: opts, metrics: opts.Metrics, log: opts.Logger, inFlight: map[K]context.CancelFunc{}}
	if c.metrics == nil {
		c.metrics = noMetrics{}
	}
	c.queue = workqueue.New(workqueue.Options[K]{Name: name, RateLimiter: opts.RateLimiter, Metrics: opts.QueueMetrics})
	return c, nil
}

// Name returns the controller's name.
func (c *Controller[K]) Name() string { return c.name }

// Add queues key for a reconcile: a change to act on.
func (c *Controller[K]) Add(key K) { c.queue.Add(key) }

// AddInitial queues key behind the keys of Add: what an informer's initial
// list delivers (OnAdd with isInInitialList). Real changes overtake them,
// but they never starve (see workqueue.Queue.AddLowPriority).
func (c *Controller[K]) AddInitial(key K) { c.queue.AddLowPriority(key) }

// AddAfter queues key once d has passed.
func (c *Controller[K]) AddAfter(key K, d time.Duration) { c.queue.AddAfter(key, d) }

// Queue returns the controller's work queue (for its Stats).
func (c *Controller[K]) Queue() *workqueue.Queue[K] { return c.queue }

// Run runs the workers until ctx is done, then stops taking keys, lets the
// reconciles in flight finish (their context stays live for
// ShutdownGracePeriod, then is cancelled) and returns once every worker
// has exited. The queue is shut down: keys still queued are dropped (the
// next leader, or the next start, lists them again). Run may be called
// once.
func (c *Controller[K]) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		return fmt.Errorf("controller %s: Run called twice", c.name)
	}
	c.ran = true
	c.mu.Unlock()
	// Reconciles get a context that outlives ctx by the grace period.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopGrace := context.AfterFunc(ctx, func() {
		c.queue.ShutDown()
		t := time.NewTimer(c.opts.ShutdownGracePeriod)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-rctx.Done():
		}
	})
	defer stopGrace()
	c.metrics.Workers(c.name, c.opts.Workers)
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(rctx) {
			}
		})
	}
	wg.Wait()
	return nil
}

// processNext reconciles one key; it reports false once the queue is shut
// down.
func (c *Controller[K]) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	ctx, done, ok := c.track(ctx, key)
	if !ok {
		c.queue.Forget(key) // another replica's now
		return true
	}
	defer done()
	start := time.Now()
	c.metrics.Started(c.name)
	res, err := c.reconcileOne(ctx, key)
	switch {
	case err != nil:
		c.metrics.Finished(c.name, "error", time.Since(start))
		if c.queue.ShuttingDown() {
			return true
		}
		c.log.Info("reconcile failed; retrying with backoff", "controller", c.name, "key", key, "error", err)
		c.queue.AddRateLimited(key)
	case res.RequeueAfter > 0:
		c.metrics.Finished(c.name, "requeue_after", time.Since(start))
		c.queue.Forget(key)
		c.queue.AddAfter(key, res.RequeueAfter)
	default:
		c.metrics.Finished(c.name, "success", time.Since(start))
		c.queue.Forget(key)
	}
	return true
}

// reconcileOne runs the ReconcileFunc with the timeout, turning a panic
// into an error.
func (c *Controller[K]) reconcileOne(ctx context.Context, key K) (res Result, err error) {
	if c.opts.ReconciliationTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.ReconciliationTimeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			c.metrics.Panicked(c.name)
			c.log.Error(nil, "reconcile panicked", "controller", c.name, "key", key, "panic", p, "stack", string(debug.Stack()))
			res, err = Result{}, fmt.Errorf("controller %s: reconcile of %v panicked: %v", c.name, key, p)
		}
	}()
	return c.reconcile(ctx, key)
}

// owns reports whether Options.Owns accepts key.
func (c *Controller[K]) owns(key K) bool { return c.opts.Owns == nil || c.opts.Owns(key) }

// track checks that this replica owns key and records it as in flight, in
// one step under mu, so that a Drain either sees the reconcile or the
// reconcile sees the change of ownership that the Drain follows. It
// returns the reconcile's context, which Drain cancels if the reconcile
// overruns, and the func that ends the record; ok is false, and nothing is
// recorded, when key is not owned.
func (c *Controller[K]) track(ctx context.Context, key K) (rctx context.Context, done func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.owns(key) {
		return nil, nil, false
	}
	rctx, cancel := context.WithCancel(ctx)
	c.inFlight[key] = cancel
	return rctx, func() {
		c.mu.Lock()
		delete(c.inFlight, key)
		c.mu.Unlock()
		cancel()
	}, true
}

// Drain waits until no reconcile of a key Options.Owns rejects is running:
// after a sharded replica's ranges shrink, the keys it gave up are no
// longer being worked on once Drain returns nil (keys still queued are
// dropped as they come up). If ctx ends first, Drain cancels the contexts
// of the reconciles that are still running on such keys, logs them, and
// returns an error naming them: a reconcile must stop promptly when its
// context is cancelled, and check its fence (shard's Holds) before it
// writes. With a ctx that has already ended, Drain cancels at once.
func (c *Controller[K]) Drain(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		c.mu.Lock()
		var overrun []K
		var cancels []context.CancelFunc
		for key, cancel := range c.inFlight {
			if !c.owns(key) {
				overrun = append(overrun, key)
				cancels = append(cancels, cancel)
			}
		}
		c.mu.Unlock()
		if len(overrun) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			for _, cancel := range cancels {
				cancel()
			}
			for _, key := range overrun {
				c.log.Info("a reconcile of a key this replica no longer owns overran the drain; its context is cancelled", "controller", c.name, "key", key)
			}
			shown := overrun[:min(len(overrun), 5)]
			return fmt.Errorf("controller %s: %d reconciles of keys it no longer owns were still running when the drain ended (%w); their contexts are cancelled: %v",
				c.name, len(overrun), context.Cause(ctx), shown)
		case <-t.C:
		}
	}
}
