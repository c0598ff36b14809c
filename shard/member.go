package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/ctxsleep"
	"github.com/kdyn/kdyn/internal/lease"
)

// Member defaults, as client-go's leader election's.
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
)

// Options configure a Member. Namespace, Ring, Identity and Shard are
// required.
type Options struct {
	// Namespace holds the ring's Leases.
	Namespace string
	// Ring names the ring: its members' Leases are labelled RingLabel=Ring
	// and named Ring-Identity.
	Ring string
	// Identity names this member; unique within the ring (a pod name).
	Identity string
	// Weight scales this member's share; zero means 1.
	Weight int
	// LeaseDuration is how long the others wait, from the moment they see
	// this member's Lease change, before they treat it as gone and take
	// its ranges. Whole seconds; zero means 15 s.
	LeaseDuration time.Duration
	// RenewDeadline: once this long has passed since the member sent the
	// last renewal of its Lease that the server accepted, the member stops
	// processing everything, before anyone may take its ranges. It must be
	// less than LeaseDuration and more than RetryPeriod×1.2, as leader
	// election's; zero means 10 s.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two rounds (renew, read the ring,
	// hand over); zero means 2 s.
	RetryPeriod time.Duration
	// RequestTimeout bounds each request the member makes for its
	// membership (a read of the ring, a write of its Lease), retries
	// included, so that a request that hangs or keeps being retried ends
	// in time for the next round. Zero means RenewDeadline/4 or
	// RetryPeriod, whichever is longer; it must not exceed RenewDeadline.
	RequestTimeout time.Duration
	// VirtualNodes per unit of weight on the ring; zero means
	// DefaultVirtualNodes.
	VirtualNodes int
	// Shard is the live selection the member's ranges apply to: the
	// member sets its ranges (informer.Shard.Set) as they change, which
	// makes the informers given the Shard cache those objects, and fences
	// it (informer.Shard.Fence) with its renew deadline, which makes
	// Shard.Holds the check a reconcile makes before it writes. The member
	// owns the Shard's ranges and fence: nothing else should set them.
	Shard *informer.Shard
	// Drainers are waited on after the ranges shrink, until no work on
	// the ranges that left runs any more (a controller.Controller whose
	// Options.Owns consults the Shard is one); the member publishes the
	// release only then. A drain takes at most the time left before the
	// renew deadline; the work still running then has its context
	// cancelled and is reported (see Drainer).
	Drainers []Drainer
	// Logger receives the member's logs; the zero value logs nothing.
	Logger logr.Logger
}

// Drainer waits until no work on objects outside the shard runs any more:
// a controller.Controller with Options.Owns is one. Drain returns nil once
// none runs; if ctx ends first, it cancels the contexts of the work still
// running, reports it, and returns an error. Called with a ctx that has
// already ended, it cancels at once.
type Drainer interface {
	Drain(ctx context.Context) error
}

// Member is one member of a ring: it holds its own Lease, reads the
// others', computes the assignment (Assign) and hands ranges over safely —
// see the package documentation for the protocol. Create it with New and
// Run it.
type Member struct {
	client dynamic.ResourceInterface
	opts   Options
	log    logr.Logger
	now    func() time.Time

	// Used by Run's goroutine only (join, rounds, leave).
	//
	// observed is when each peer's Lease was last seen to change (local
	// clock, read after the read that saw it returned), by identity.
	observed map[string]lease.Observation
	own      *unstructured.Unstructured // our Lease as last written or read
	held     []informer.HashRange       // published (or being published)

	// kick wakes the drain loop (capacity 1).
	kick chan struct{}
	// setMu serializes changes of the active ranges with the Shard.Set
	// that follows each (the rounds, the watchdog, leave).
	setMu sync.Mutex

	// mu guards the fields below, which Run's goroutine, the watchdog and
	// the drain loop share.
	mu sync.Mutex
	// active are the Shard's ranges: work may start on them.
	active []informer.HashRange
	// draining left active, and work on them may still run until a drain
	// confirms it does not; they stay held until then.
	draining []informer.HashRange
	target   []informer.HashRange
	// deadline is RenewDeadline after the moment the last accepted write
	// of the Lease was sent: the Shard's fence. Zero before the first.
	deadline time.Time
	// expired is set once the deadline has passed: everything is stopped,
	// nothing is claimed, and the deadline does not move, until nothing
	// runs any more and a write that publishes no range is accepted.
	expired bool
	// renewals counts the accepted writes of the Lease.
	renewals int
}

// New returns a member of a ring whose Leases live in opts.Namespace. It
// makes no request. Give it a client of its own (see the package
// documentation): its requests must not wait behind the data path's.
func New(client dynamic.Interface, opts Options) (*Member, error) {
	t := lease.Timing{LeaseDuration: opts.LeaseDuration, RenewDeadline: opts.RenewDeadline, RetryPeriod: opts.RetryPeriod, RequestTimeout: opts.RequestTimeout}.WithDefaults()
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod, opts.RequestTimeout = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod, t.RequestTimeout
	var errs []error
	if client == nil {
		errs = append(errs, errors.New("a client is required"))
	}
	if opts.Namespace == "" || opts.Ring == "" || opts.Identity == "" {
		errs = append(errs, errors.New("fields Namespace, Ring and Identity are required"))
	}
	if opts.Shard == nil {
		errs = append(errs, errors.New("field Shard is required"))
	}
	for _, p := range t.Problems() {
		errs = append(errs, errors.New(p))
	}
	if opts.Weight < 0 {
		errs = append(errs, fmt.Errorf("negative Weight %d", opts.Weight))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("shard: member %q of ring %q: %w", opts.Identity, opts.Ring, errors.Join(errs...))
	}
	log := opts.Logger
	return &Member{
		client:   client.Resource(lease.GVR).Namespace(opts.Namespace),
		opts:     opts,
		log:      log.WithValues("ring", opts.Ring, "identity", opts.Identity),
		now:      time.Now,
		observed: map[string]lease.Observation{},
		kick:     make(chan struct{}, 1),
	}, nil
}

// Processing returns the ranges work of this member may run on now: the
// Shard's ranges, and those it let go of whose work has not yet been
// drained.
func (m *Member) Processing() []informer.HashRange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return informer.UnionRanges(m.active, m.draining)
}

// Target returns the ranges the assignment gives this member, as of the
// last round: what Processing converges to.
func (m *Member) Target() []informer.HashRange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]informer.HashRange(nil), m.target...)
}

// NeedLeaderElection reports false: every member of a ring runs, whether
// or not a controller.Manager elects a leader.
func (m *Member) NeedLeaderElection() bool { return false }

// Run keeps this member in the ring until ctx is done: every RetryPeriod it
// renews its Lease, reads the others', and hands ranges over; a watchdog
// stops all work the moment the renew deadline passes, even while a
// request hangs. On the way out it stops processing (the Shard's ranges
// are emptied and the Drainers drained, for at most RenewDeadline),
// deletes its Lease so that the others take its ranges at once, and
// returns nil once every goroutine it started has exited; an error only
// when it cannot start (its identity is in use by a live Lease of another
// member).
func (m *Member) Run(ctx context.Context) error {
	m.opts.Shard.Fence(time.Time{})
	if err := m.opts.Shard.Set(); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	if err := m.join(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { m.watchdog(ctx) })
	wg.Go(func() { m.drainLoop(ctx) })
	for ctx.Err() == nil {
		m.round(ctx)
		d := m.opts.RetryPeriod/2 + rand.N(m.opts.RetryPeriod/2)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	wg.Wait()
	m.leave()
	return nil
}

// join creates this member's Lease, or takes over the one a previous
// incarnation left: if it still claims ranges, only once it has expired
// (its process may still be processing them).
func (m *Member) join(ctx context.Context) error {
	name := leaseName(m.opts.Ring, m.opts.Identity)
	for {
		u, err := m.getLease(ctx)
		if apierrors.IsNotFound(err) {
			err = m.create(ctx)
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("shard: create lease %s/%s: %w", m.opts.Namespace, name, err)
			}
			return nil
		}
		if err != nil {
			m.log.V(4).Info("reading own lease failed; retrying", "error", err)
			if waitErr := ctxsleep.Sleep(ctx, m.opts.RetryPeriod); waitErr != nil {
				return waitErr
			}
			continue
		}
		p, err := readPeer(u)
		if err != nil {
			return fmt.Errorf("shard: %w", err)
		}
		if len(p.held) > 0 {
			// A previous incarnation claimed ranges: wait until its Lease
			// has not changed for its duration.
			if o := m.observe(p, m.now()); o.Valid(m.now()) {
				m.log.V(1).Info("a previous incarnation's lease still claims ranges; waiting for it to expire", "leaseDuration", o.Record.Duration())
				if err := ctxsleep.Sleep(ctx, m.opts.RetryPeriod); err != nil {
					return err
				}
				continue
			}
		}
		m.own = u
		m.held = nil
		if err := m.write(ctx); err != nil {
			if apierrors.IsConflict(err) {
				continue
			}
			return err
		}
		return nil
	}
}

// leave stops processing and deletes the Lease.
func (m *Member) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.RenewDeadline)
	defer cancel()
	m.setActive(func([]informer.HashRange) []informer.HashRange { return nil })
	if err := m.drain(ctx); err != nil {
		// The work did not drain: leave the Lease to expire instead, so
		// that nobody takes the ranges while it may still run.
		m.log.Info("stopping work failed; the lease is left to expire", "error", err)
		return
	}
	if err := m.deleteLease(ctx); err != nil && !apierrors.IsNotFound(err) {
		m.log.Info("could not delete the lease on the way out; it will expire", "error", err)
	}
}
