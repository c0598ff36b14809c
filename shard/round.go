package shard

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/lease"
)

// round is one round of the protocol (see the package documentation).
func (m *Member) round(ctx context.Context) {
	m.expireIfLate()
	peers, readErr := m.readRing(ctx)
	m.mu.Lock()
	expired := m.expired
	processing := informer.UnionRanges(m.active, m.draining)
	m.mu.Unlock()
	if readErr != nil || expired {
		// Renew what is held, and claim nothing: the ring could not be
		// read, or the member is starting over after its deadline (it
		// publishes only what may still run, nothing once drained).
		if readErr != nil {
			m.log.V(4).Info("reading the ring failed; renewing what is held", "error", readErr)
		}
		if expired {
			m.held = processing
		}
		if err := m.write(ctx); err != nil {
			m.log.V(4).Info("renewing the lease failed", "error", err)
		}
		return
	}
	live := m.live(peers)
	nodes := make([]Node, 0, len(live)+1)
	nodes = append(nodes, Node{Identity: m.opts.Identity, Weight: m.opts.Weight})
	for _, p := range live {
		nodes = append(nodes, Node{Identity: p.identity, Weight: p.weight})
	}
	assignment, err := Assign(nodes, m.opts.VirtualNodes)
	if err != nil {
		m.log.Info("cannot compute the assignment", "error", err)
		return
	}
	target := assignment[m.opts.Identity]
	m.mu.Lock()
	m.target = target
	m.mu.Unlock()

	// 1. Release what is no longer ours: no new work starts on it from
	// now on; the drain loop waits for the work in flight, and the
	// release is published at the first write after that.
	m.setActive(func(active []informer.HashRange) []informer.HashRange {
		return informer.IntersectRanges(active, target)
	})

	// 2. Claim what is ours and nobody else claims, with the renewal.
	m.mu.Lock()
	processing = informer.UnionRanges(m.active, m.draining)
	m.mu.Unlock()
	free := informer.SubtractRanges(informer.SubtractRanges(target, processing), claimedBy(live))
	m.held = informer.UnionRanges(processing, free)
	if err := m.write(ctx); err != nil {
		m.log.V(4).Info("renewing the lease failed", "error", err)
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
	live = m.live(peers)
	var withdraw, blocked []informer.HashRange
	for _, p := range live {
		c := informer.IntersectRanges(free, p.held)
		if len(c) == 0 {
			continue
		}
		blocked = append(blocked, c...)
		if p.identity < m.opts.Identity {
			withdraw = append(withdraw, c...)
		}
	}
	blocked, withdraw = informer.UnionRanges(blocked, nil), informer.UnionRanges(withdraw, nil)
	if len(withdraw) > 0 {
		m.held = informer.SubtractRanges(m.held, withdraw)
		if err := m.write(ctx); err != nil {
			m.log.V(4).Info("withdrawing a contested claim failed", "error", err)
		}
	}
	start := informer.SubtractRanges(free, blocked)
	if len(start) == 0 {
		return
	}
	// Start only while the Lease that carries the claim is fresh: a
	// member whose deadline passed during this round starts over.
	m.setActive(func(active []informer.HashRange) []informer.HashRange {
		if m.expired {
			return active
		}
		return informer.UnionRanges(active, start)
	})
}

// readRing lists the ring's Leases, other than this member's, with a
// consistent read, and notes when each peer's Lease was seen to change:
// at the moment the read returned, never earlier.
func (m *Member) readRing(ctx context.Context) ([]peer, error) {
	rctx, cancel := m.requestContext(ctx)
	defer cancel()
	l, err := m.client.List(rctx, metav1.ListOptions{LabelSelector: RingLabel + "=" + m.opts.Ring})
	if err != nil {
		return nil, err
	}
	seenAt := m.now()
	var out []peer
	seen := map[string]bool{}
	for i := range l.Items {
		p, err := readPeer(&l.Items[i])
		if err != nil {
			m.log.Info("ignoring a malformed lease in the ring", "error", err)
			continue
		}
		if p.identity == m.opts.Identity || p.identity == "" {
			continue
		}
		seen[p.identity] = true
		m.observe(p, seenAt)
		out = append(out, p)
	}
	for id := range m.observed {
		if !seen[id] {
			delete(m.observed, id)
		}
	}
	return out, nil
}

// observe records a peer's Lease as read at seenAt (when the read
// returned), and returns when its record was first seen.
func (m *Member) observe(p peer, seenAt time.Time) lease.Observation {
	o := m.observed[p.identity]
	o.Observe(p.record, seenAt, false)
	m.observed[p.identity] = o
	return o
}

// live returns the peers whose Lease changed within its duration, by this
// member's clock now.
func (m *Member) live(peers []peer) []peer {
	now := m.now()
	var out []peer
	for _, p := range peers {
		if o, ok := m.observed[p.identity]; ok && o.Valid(now) {
			out = append(out, p)
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
	return informer.UnionRanges(all, nil)
}
