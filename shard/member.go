package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/ctxsleep"
)

// Member defaults, as client-go's leader election's.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Options configure a Member. Namespace, Ring, Identity and Process are
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
	// LeaseDuration is how long the others wait, from the last change of
	// this member's Lease they saw, before they treat it as gone and take
	// its ranges. Whole seconds; zero means 15 s.
	LeaseDuration time.Duration
	// RenewDeadline: a member that has not renewed its Lease for this long
	// stops processing everything, before anyone may take its ranges. It
	// must be less than LeaseDuration; zero means 10 s.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two rounds (renew, read the ring,
	// hand over); zero means 2 s.
	RetryPeriod time.Duration
	// VirtualNodes per unit of weight on the ring; zero means
	// DefaultVirtualNodes.
	VirtualNodes int
	// Process is told the ranges this member may process from now on,
	// each time they change. When they shrink it must return only once no
	// work on the ranges that left is running any more (stop the
	// informers' caching of them, drain the reconciles of their keys): the
	// member publishes the release only then. An error keeps the release
	// unpublished; it is tried again next round.
	Process func(ctx context.Context, ranges []informer.HashRange) error
	// Logger receives the member's logs; nil means none.
	Logger *zap.Logger
}

// Member is one member of a ring: it holds its own Lease, reads the
// others', computes the assignment (Assign) and hands ranges over safely —
// see the package documentation for the protocol. Create it with New and
// Run it.
type Member struct {
	client dynamic.ResourceInterface
	opts   Options
	log    *zap.Logger
	now    func() time.Time

	// observed is when each peer's Lease was last seen to change (local
	// clock), by identity.
	observed  map[string]observation
	lease     *unstructured.Unstructured // our Lease as last written or read
	held      []informer.HashRange       // published (or being published)
	resetHeld bool                       // the next write publishes no range

	mu         sync.Mutex
	processing []informer.HashRange
	target     []informer.HashRange
	lastRenew  time.Time
}

type observation struct {
	rv  string
	at  time.Time
	dur time.Duration
}

// New returns a member of a ring whose Leases live in opts.Namespace.
func New(client dynamic.Interface, opts Options) (*Member, error) {
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.RenewDeadline == 0 {
		opts.RenewDeadline = DefaultRenewDeadline
	}
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = DefaultRetryPeriod
	}
	var errs []error
	if client == nil {
		errs = append(errs, errors.New("a client is required"))
	}
	if opts.Namespace == "" || opts.Ring == "" || opts.Identity == "" {
		errs = append(errs, errors.New("fields Namespace, Ring and Identity are required"))
	}
	if opts.Process == nil {
		errs = append(errs, errors.New("field Process is required"))
	}
	if opts.LeaseDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("LeaseDuration %v is not a whole number of seconds", opts.LeaseDuration))
	}
	if opts.RenewDeadline >= opts.LeaseDuration {
		errs = append(errs, fmt.Errorf("RenewDeadline %v must be less than LeaseDuration %v", opts.RenewDeadline, opts.LeaseDuration))
	}
	if opts.RetryPeriod >= opts.RenewDeadline {
		errs = append(errs, fmt.Errorf("RetryPeriod %v must be less than RenewDeadline %v", opts.RetryPeriod, opts.RenewDeadline))
	}
	if opts.Weight < 0 {
		errs = append(errs, fmt.Errorf("negative Weight %d", opts.Weight))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("shard: member %q of ring %q: %w", opts.Identity, opts.Ring, errors.Join(errs...))
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Member{
		client:   client.Resource(leaseGVR).Namespace(opts.Namespace),
		opts:     opts,
		log:      log.With(zap.String("ring", opts.Ring), zap.String("identity", opts.Identity)),
		now:      time.Now,
		observed: map[string]observation{},
	}, nil
}

// Processing returns the ranges this member processes now.
func (m *Member) Processing() []informer.HashRange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]informer.HashRange(nil), m.processing...)
}

// Target returns the ranges the assignment gives this member, as of the
// last round: what Processing converges to.
func (m *Member) Target() []informer.HashRange {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]informer.HashRange(nil), m.target...)
}

// Run keeps this member in the ring until ctx is done: every RetryPeriod it
// renews its Lease, reads the others', and hands ranges over. On the way
// out it stops processing (Process with no range), deletes its Lease so
// that the others take its ranges at once, and returns nil; an error only
// when it cannot start (its identity is in use by a live Lease of another
// member).
func (m *Member) Run(ctx context.Context) error {
	if err := m.join(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer m.leave()
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
	return nil
}

// join creates this member's Lease, or takes over the one a previous
// incarnation left: if it still claims ranges, only once it has expired
// (its process may still be processing them).
func (m *Member) join(ctx context.Context) error {
	name := leaseName(m.opts.Ring, m.opts.Identity)
	for {
		u, err := m.client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			created, err := m.client.Create(ctx, m.newLease(), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("shard: create lease %s/%s: %w", m.opts.Namespace, name, err)
			}
			m.renewed(created)
			return nil
		}
		if err != nil {
			if waitErr := ctxsleep.Sleep(ctx, m.opts.RetryPeriod); waitErr != nil {
				return waitErr
			}
			m.log.Debug("reading own lease failed; retrying", zap.Error(err))
			continue
		}
		p, err := readPeer(u)
		if err != nil {
			return fmt.Errorf("shard: %w", err)
		}
		if len(p.held) > 0 {
			// A previous incarnation claimed ranges: wait until its Lease
			// has not changed for its duration.
			o := m.observe(p, m.now())
			if m.now().Sub(o.at) < o.dur {
				m.log.Info("a previous incarnation's lease still claims ranges; waiting for it to expire", zap.Duration("leaseDuration", o.dur))
				if err := ctxsleep.Sleep(ctx, m.opts.RetryPeriod); err != nil {
					return err
				}
				continue
			}
		}
		m.lease = u
		m.resetHeld = true
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
	if err := m.setProcessing(ctx, nil); err != nil {
		// The work did not drain: leave the Lease to expire instead, so
		// that nobody takes the ranges while it may still run.
		m.log.Warn("stopping work failed; the lease is left to expire", zap.Error(err))
		return
	}
	name := leaseName(m.opts.Ring, m.opts.Identity)
	if err := m.client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		m.log.Warn("could not delete the lease on the way out; it will expire", zap.Error(err))
	}
}

// round is one round of the protocol.
func (m *Member) round(ctx context.Context) {
	now := m.now()
	peers, err := m.readRing(ctx)
	if err != nil {
		m.log.Debug("reading the ring failed", zap.Error(err))
		m.checkDeadline(ctx)
		return
	}
	live := m.live(peers, now)
	nodes := make([]Node, 0, len(live)+1)
	nodes = append(nodes, Node{Identity: m.opts.Identity, Weight: m.opts.Weight})
	for _, p := range live {
		nodes = append(nodes, Node{Identity: p.identity, Weight: p.weight})
	}
	assignment, err := Assign(nodes, m.opts.VirtualNodes)
	if err != nil {
		m.log.Warn("cannot compute the assignment", zap.Error(err))
		return
	}
	target := assignment[m.opts.Identity]
	m.mu.Lock()
	m.target = target
	processing := m.processing
	m.mu.Unlock()

	// 1. Release what is no longer ours: stop first, publish after.
	if keep := Intersect(processing, target); len(keep) != len(processing) || !slices.Equal(keep, processing) {
		if err := m.setProcessing(ctx, keep); err != nil {
			m.log.Warn("releasing ranges failed; trying again next round", zap.Error(err))
			m.checkDeadline(ctx)
			return
		}
		processing = keep
	}
	// 2. Claim what is ours and nobody else claims, with the renewal.
	others := claimedBy(live)
	free := Subtract(Subtract(target, processing), others)
	m.held = mustMerge(append(append([]informer.HashRange(nil), processing...), free...))
	if err := m.write(ctx); err != nil {
		m.log.Debug("renewing the lease failed", zap.Error(err))
		m.checkDeadline(ctx)
		return
	}
	if len(free) == 0 {
		return
	}
	// 3. Read again, after the claim is written: a member that claimed
	// the same ranges meanwhile (its view of the ring differed) shows up
	// now. Start only on what nobody else claims; of two claims the lower
	// identity keeps it, the higher withdraws.
	peers, err = m.readRing(ctx)
	if err != nil {
		return
	}
	live = m.live(peers, m.now())
	var withdraw, blocked []informer.HashRange
	for _, p := range live {
		c := Intersect(free, p.held)
		if len(c) == 0 {
			continue
		}
		blocked = append(blocked, c...)
		if p.identity < m.opts.Identity {
			withdraw = append(withdraw, c...)
		}
	}
	blocked, withdraw = mustMerge(blocked), mustMerge(withdraw)
	if len(withdraw) > 0 {
		m.held = Subtract(m.held, withdraw)
		if err := m.write(ctx); err != nil {
			m.log.Debug("withdrawing a contested claim failed", zap.Error(err))
		}
	}
	start := Subtract(free, blocked)
	if len(start) == 0 {
		return
	}
	if err := m.setProcessing(ctx, mustMerge(append(processing, start...))); err != nil {
		m.log.Warn("starting on claimed ranges failed; trying again next round", zap.Error(err))
	}
}

// setProcessing tells Process the new ranges and records them.
func (m *Member) setProcessing(ctx context.Context, ranges []informer.HashRange) error {
	m.mu.Lock()
	same := slices.Equal(ranges, m.processing)
	m.mu.Unlock()
	if same {
		return nil
	}
	if err := m.opts.Process(ctx, ranges); err != nil {
		return err
	}
	m.mu.Lock()
	m.processing = ranges
	m.mu.Unlock()
	m.log.Info("processing", zap.String("ranges", FormatRanges(ranges)), zap.Float64("share", Size(ranges)))
	return nil
}

// checkDeadline stops all processing once the Lease has gone unrenewed
// past RenewDeadline: before anyone may treat it as expired.
func (m *Member) checkDeadline(ctx context.Context) {
	m.mu.Lock()
	late := m.now().Sub(m.lastRenew) > m.opts.RenewDeadline
	m.mu.Unlock()
	if !late {
		return
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.opts.RenewDeadline)
	defer cancel()
	if err := m.setProcessing(stopCtx, nil); err != nil {
		m.log.Error("could not stop processing past the renew deadline", zap.Error(err))
	}
	m.resetHeld = true
}

// readRing lists the ring's Leases, other than this member's, with a
// consistent read.
func (m *Member) readRing(ctx context.Context) ([]peer, error) {
	l, err := m.client.List(ctx, metav1.ListOptions{LabelSelector: RingLabel + "=" + m.opts.Ring})
	if err != nil {
		return nil, err
	}
	var out []peer
	for i := range l.Items {
		p, err := readPeer(&l.Items[i])
		if err != nil {
			m.log.Warn("ignoring a malformed lease in the ring", zap.Error(err))
			continue
		}
		if p.identity == m.opts.Identity || p.identity == "" {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// observe records a peer's Lease and returns when it was last seen to
// change.
func (m *Member) observe(p peer, now time.Time) observation {
	o, ok := m.observed[p.identity]
	if !ok || o.rv != p.rv {
		o = observation{rv: p.rv, at: now, dur: p.duration}
		m.observed[p.identity] = o
	}
	return o
}

// live returns the peers whose Lease changed within its duration (by this
// member's clock), forgetting the others.
func (m *Member) live(peers []peer, now time.Time) []peer {
	seen := map[string]bool{}
	var out []peer
	for _, p := range peers {
		seen[p.identity] = true
		o := m.observe(p, now)
		if now.Sub(o.at) < o.dur {
			out = append(out, p)
		}
	}
	for id := range m.observed {
		if !seen[id] {
			delete(m.observed, id)
		}
	}
	return out
}

// claimedBy returns the union of the peers' held ranges.
func claimedBy(peers []peer) []informer.HashRange {
	var all []informer.HashRange
	for _, p := range peers {
		all = append(all, p.held...)
	}
	return mustMerge(all)
}

// newLease is this member's Lease as first created.
func (m *Member) newLease() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1",
		"kind":       "Lease",
		"metadata": map[string]any{
			"name":      leaseName(m.opts.Ring, m.opts.Identity),
			"namespace": m.opts.Namespace,
			"labels":    map[string]any{RingLabel: m.opts.Ring},
		},
	}}
	m.fill(u)
	return u
}

// fill writes this member's state into u.
func (m *Member) fill(u *unstructured.Unstructured) {
	now := m.now().UTC().Format(metav1.RFC3339Micro)
	_ = unstructured.SetNestedField(u.Object, m.opts.Identity, "spec", "holderIdentity")
	_ = unstructured.SetNestedField(u.Object, int64(m.opts.LeaseDuration/time.Second), "spec", "leaseDurationSeconds")
	_ = unstructured.SetNestedField(u.Object, now, "spec", "renewTime")
	if _, ok, _ := unstructured.NestedString(u.Object, "spec", "acquireTime"); !ok {
		_ = unstructured.SetNestedField(u.Object, now, "spec", "acquireTime")
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HeldAnnotation] = FormatRanges(m.held)
	if m.opts.Weight > 1 {
		ann[WeightAnnotation] = strconv.Itoa(m.opts.Weight)
	} else {
		delete(ann, WeightAnnotation)
	}
	u.SetAnnotations(ann)
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[RingLabel] = m.opts.Ring
	u.SetLabels(labels)
}

// write renews the Lease with the held ranges (none after a reset),
// with optimistic concurrency on the version last read.
func (m *Member) write(ctx context.Context) error {
	if m.resetHeld {
		m.mu.Lock()
		stopped := len(m.processing) == 0
		m.mu.Unlock()
		if stopped {
			m.held = nil
		}
	}
	u := m.lease.DeepCopy()
	m.fill(u)
	out, err := m.client.Update(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Someone else wrote or deleted our Lease: read it (or recreate
		// it) next round; what we hold stays unpublished meanwhile.
		if cur, gerr := m.client.Get(ctx, u.GetName(), metav1.GetOptions{}); gerr == nil {
			if p, perr := readPeer(cur); perr == nil && p.identity != m.opts.Identity {
				m.log.Error("another member writes this member's lease; is the identity unique?", zap.String("holder", p.identity))
			}
			m.lease = cur
		} else if apierrors.IsNotFound(gerr) {
			if created, cerr := m.client.Create(ctx, m.newLease(), metav1.CreateOptions{}); cerr == nil {
				m.renewed(created)
				return nil
			}
		}
		return err
	}
	if err != nil {
		return err
	}
	m.renewed(out)
	return nil
}

// renewed records a successful write.
func (m *Member) renewed(u *unstructured.Unstructured) {
	m.lease = u
	m.resetHeld = false
	m.mu.Lock()
	m.lastRenew = m.now()
	m.mu.Unlock()
}

// mustMerge merges ranges that are well-formed by construction (they come
// from MergeRanges, Intersect or Subtract); a malformed one is dropped.
func mustMerge(rs []informer.HashRange) []informer.HashRange {
	ok := rs[:0:0]
	for _, r := range rs {
		if r.From <= r.To {
			ok = append(ok, r)
		}
	}
	out, _ := informer.MergeRanges(ok)
	return out
}
