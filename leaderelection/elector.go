package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/lease"
)

// ErrLeadershipLost is wrapped by Run's error when a term ended because
// this candidate lost the Lease — its renewals failed for RenewDeadline, or
// it found the Lease held by someone else — rather than because Run's
// context was done. The error also wraps the last renewal error, if any,
// so apierrors.IsConflict and the like work on it.
var ErrLeadershipLost = errors.New("leaderelection: leadership lost")

// Elector is one candidate in a Lease-based election. It is safe for
// concurrent use; Run runs the election, and IsLeader, GetLeader and the
// HealthCheck may be called from any goroutine at any time.
type Elector struct {
	cfg          Config
	log          logr.Logger
	clock        clock
	leaseSeconds int64
	running      atomic.Bool

	// lock and notify are used by Run's goroutine only.
	lock   *lock
	notify *notifier

	// mu guards the fields below.
	mu sync.Mutex
	// obs is the Lease's record as last read or written, and the local
	// time it was first seen to hold it: expiry is judged from these,
	// never from the times in the record.
	obs lease.Observation
	// reported is the holder last handed to OnNewLeader.
	reported string
	// leading is true while a term is live (OnStartedLeading's context is
	// not cancelled); working while OnStartedLeading runs.
	leading bool
	working bool
	// term is the live term's context, and endTerm ends it.
	term    context.Context
	endTerm context.CancelCauseFunc
	// lastRenew is when the last successful acquisition or renewal
	// started; deadline, lastRenew+RenewDeadline, is when the term ends
	// without another.
	lastRenew time.Time
	deadline  time.Time
	// lastErr is the last failed renewal's error, for the loss message.
	lastErr error
}

// New returns a candidate for the Lease cfg names, talking to the server
// through client. It checks cfg (see Config for the defaults and rules) and
// returns an error wrapping ErrInvalidConfig that names every bad field;
// it makes no request.
func New(client dynamic.Interface, cfg Config) (*Elector, error) {
	return newElector(client, cfg, realClock{})
}

// newElector is New with the clock as a seam for tests.
func newElector(client dynamic.Interface, cfg Config, clk clock) (*Elector, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("%w for lease %s/%s: client is nil", ErrInvalidConfig, cfg.Namespace, cfg.Name)
	}
	l := newLock(client, cfg.Namespace, cfg.Name, cfg.RequestTimeout)
	return &Elector{
		cfg:          cfg,
		log:          cfg.Logger.WithValues("lease", l.describe(), "identity", cfg.Identity),
		clock:        clk,
		leaseSeconds: int64(cfg.LeaseDuration / time.Second),
		lock:         l,
	}, nil
}

// Run stands for election until ctx is done or one term has ended, and
// returns when every goroutine it started has exited and every callback it
// called has returned.
//
// It tries to acquire the Lease every RetryPeriod (jittered) until it
// succeeds or ctx is done. Once it leads, it calls OnStartedLeading on a
// goroutine of its own and renews the Lease every RetryPeriod. The term
// ends when ctx is done, or — the moment RenewDeadline has passed since the
// start of the last successful renewal, or as soon as it reads the Lease
// held by someone else — when leadership is lost. Either way it cancels
// OnStartedLeading's context, waits for OnStartedLeading to return,
// releases the Lease if ReleaseOnCancel is set, calls OnStoppedLeading and
// returns.
//
// Run returns nil when ctx ended the election, and an error wrapping
// ErrLeadershipLost when leadership was lost; the caller decides whether to
// exit (what most controllers do) or to call Run again to stand again. Run
// returns an error at once if it is already running.
func (e *Elector) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return fmt.Errorf("leaderelection: lease %s: Run is already running", e.lock.describe())
	}
	defer e.running.Store(false)
	e.cfg.Metrics.Leading(e.cfg.Name, false)
	e.notify = startNotifier(e.cfg.Callbacks.OnNewLeader)
	defer e.notify.stop()
	start, ok := e.acquire(ctx)
	if !ok {
		return nil
	}
	return e.lead(ctx, start)
}

// IsLeader reports whether this candidate leads now: a term is live and
// its renew deadline has not passed.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading && e.term.Err() == nil && e.clock.Now().Before(e.deadline)
}

// GetLeader returns the holder's identity in the Lease as this candidate
// last read or wrote it; empty before the first read, or when nobody holds
// the Lease.
func (e *Elector) GetLeader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.obs.Record.HolderIdentity
}

// acquire tries to acquire the Lease until it does or ctx is done, and
// returns when the successful attempt started.
func (e *Elector) acquire(ctx context.Context) (time.Time, bool) {
	e.log.V(1).Info("trying to acquire the lease")
	for ctx.Err() == nil {
		start := e.clock.Now()
		out, err := e.tryAcquireOrRenew(ctx, start, false)
		e.reportLeader()
		switch out {
		case acquired:
			if e.clock.Now().Before(start.Add(e.cfg.RenewDeadline)) {
				return start, true
			}
			// The answer came after the deadline it would have set: renew
			// before leading.
			e.log.Info("acquired the lease too slowly to lead on it; renewing first", "took", e.clock.Now().Sub(start))
		case held:
			e.log.V(4).Info("lease is held by another candidate", "holder", e.GetLeader())
		case failed:
			if ctx.Err() == nil {
				e.log.V(1).Info("failed to acquire the lease", "error", err)
			}
		}
		t := e.clock.TimerAt(e.nextAttempt())
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
	}
	return time.Time{}, false
}

// nextAttempt is when a candidate that does not lead tries again: after a
// random wait between RetryPeriod/JitterFactor and RetryPeriod, or when
// the lease another holds expires in this candidate's view, if that is
// sooner.
func (e *Elector) nextAttempt() time.Time {
	now := e.clock.Now()
	rp := float64(e.cfg.RetryPeriod)
	next := now.Add(time.Duration(rp - rand.Float64()*(rp-rp/JitterFactor)))
	e.mu.Lock()
	defer e.mu.Unlock()
	if h := e.obs.Record.HolderIdentity; h != "" && h != e.cfg.Identity && !e.obs.At.IsZero() {
		if expiry := e.obs.Expiry(); expiry.After(now) && expiry.Before(next) {
			next = expiry
		}
	}
	return next
}

// lead runs one term that started (its acquisition started) at start.
func (e *Elector) lead(ctx context.Context, start time.Time) error {
	term, endTerm := context.WithCancelCause(ctx)
	defer endTerm(nil)
	e.mu.Lock()
	e.leading, e.working = true, true
	e.term, e.endTerm = term, endTerm
	e.lastRenew, e.deadline = start, start.Add(e.cfg.RenewDeadline)
	e.lastErr = nil
	e.mu.Unlock()
	e.cfg.Metrics.Leading(e.cfg.Name, true)
	e.log.V(1).Info("started leading")

	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		e.cfg.Callbacks.OnStartedLeading(term)
	}()
	var wg sync.WaitGroup
	wg.Go(func() { e.watchdog(term) })
	e.renewLoop(term)
	e.stop(nil) // ctx is done, unless the term was already ended
	wg.Wait()
	<-workDone
	e.mu.Lock()
	e.working = false
	e.mu.Unlock()

	if e.cfg.ReleaseOnCancel {
		e.release(ctx)
	}
	err := context.Cause(term)
	if !errors.Is(err, ErrLeadershipLost) {
		err = nil
	}
	e.log.V(1).Info("stopped leading", "error", err)
	if cb := e.cfg.Callbacks.OnStoppedLeading; cb != nil {
		cb()
	}
	return err
}

// renewLoop renews the Lease every RetryPeriod until the term ends.
func (e *Elector) renewLoop(term context.Context) {
	for {
		t := e.clock.TimerAt(e.clock.Now().Add(e.cfg.RetryPeriod))
		select {
		case <-term.Done():
			t.Stop()
			return
		case <-t.C():
		}
		start := e.clock.Now()
		out, err := e.tryAcquireOrRenew(term, start, true)
		e.reportLeader()
		switch out {
		case acquired:
			if !e.renewed(start) {
				e.expire()
				return
			}
		case held:
			e.stop(fmt.Errorf("%w: lease %s is held by %q", ErrLeadershipLost, e.lock.describe(), e.GetLeader()))
			return
		case failed:
			if term.Err() != nil {
				return
			}
			e.mu.Lock()
			e.lastErr = err
			e.mu.Unlock()
			e.log.Info("failed to renew the lease", "error", err)
		}
	}
}

// renewed moves the deadline after a renewal that started at start, and
// reports false if the term has ended or its deadline has already passed.
func (e *Elector) renewed(start time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading || !e.clock.Now().Before(e.deadline) {
		return false
	}
	e.lastRenew = start
	if d := start.Add(e.cfg.RenewDeadline); d.After(e.deadline) {
		e.deadline = d
	}
	e.lastErr = nil
	return true
}

// watchdog ends the term the moment its deadline passes, even while a
// renewal request hangs.
func (e *Elector) watchdog(term context.Context) {
	for {
		e.mu.Lock()
		deadline := e.deadline
		e.mu.Unlock()
		t := e.clock.TimerAt(deadline)
		select {
		case <-term.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if e.expire() {
			return
		}
	}
}

// expire ends the term if its deadline has passed, and reports whether
// the term is over.
func (e *Elector) expire() bool {
	e.mu.Lock()
	if !e.leading {
		e.mu.Unlock()
		return true
	}
	if e.clock.Now().Before(e.deadline) {
		e.mu.Unlock()
		return false
	}
	cause := fmt.Errorf("%w: lease %s not renewed within RenewDeadline %v of the renewal started at %s",
		ErrLeadershipLost, e.lock.describe(), e.cfg.RenewDeadline, e.lastRenew.Format(time.RFC3339Nano))
	if e.lastErr != nil {
		cause = fmt.Errorf("%w: %w", cause, e.lastErr)
	}
	e.stopLocked(cause)
	return true
}

// stop ends the live term, if any, with cause (nil when Run's context is
// done).
func (e *Elector) stop(cause error) {
	e.mu.Lock()
	if !e.leading {
		e.mu.Unlock()
		return
	}
	e.stopLocked(cause)
}

// stopLocked ends the live term; it is called with mu held and releases
// it.
func (e *Elector) stopLocked(cause error) {
	e.leading = false
	end := e.endTerm
	e.mu.Unlock()
	end(cause)
	e.cfg.Metrics.Leading(e.cfg.Name, false)
	if cause != nil {
		e.log.Info("lost leadership", "error", cause)
	}
}

// reportLeader hands a change of the observed holder to OnNewLeader.
func (e *Elector) reportLeader() {
	e.mu.Lock()
	holder := e.obs.Record.HolderIdentity
	changed := holder != e.reported
	e.reported = holder
	e.mu.Unlock()
	if changed {
		e.notify.push(holder)
	}
}
