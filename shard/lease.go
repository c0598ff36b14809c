package shard

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/lease"
)

// The labels and annotations of a member's Lease.
const (
	// RingLabel names the ring a member's Lease belongs to; the members of
	// a ring find each other by it.
	RingLabel = "shard.kdyn.io/ring"
	// HeldAnnotation lists the hash ranges the member may be processing:
	// it adds a range here before it starts on it, and removes one only
	// after it has stopped. Ranges are "from-to" in hex, both ends
	// included, separated by commas; empty for none.
	HeldAnnotation = "shard.kdyn.io/held"
	// WeightAnnotation is the member's weight (1 when absent).
	WeightAnnotation = "shard.kdyn.io/weight"
)

// leaseName is the name of identity's Lease in ring.
func leaseName(ring, identity string) string { return ring + "-" + identity }

// peer is a member as read from its Lease.
type peer struct {
	identity string
	weight   int
	held     []informer.HashRange
	record   lease.Record
}

// readPeer reads a member's Lease: its record (lease.Read) and the
// ring's annotations.
func readPeer(u *unstructured.Unstructured) (peer, error) {
	p := peer{weight: 1}
	var err error
	if p.record, err = lease.Read(u); err != nil {
		return p, fmt.Errorf("lease %s: %w", u.GetName(), err)
	}
	p.identity = p.record.HolderIdentity
	ann := u.GetAnnotations()
	if w := ann[WeightAnnotation]; w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			return p, fmt.Errorf("lease %s: annotation %s=%q is not a positive integer", u.GetName(), WeightAnnotation, w)
		}
		p.weight = n
	}
	if p.held, err = informer.ParseRanges(ann[HeldAnnotation]); err != nil {
		return p, fmt.Errorf("lease %s: annotation %s: %w", u.GetName(), HeldAnnotation, err)
	}
	return p, nil
}

// requestContext bounds one membership request, its retries included,
// by RequestTimeout.
func (m *Member) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.opts.RequestTimeout)
}

// sendTime is the moment a write is sent, to the microsecond a Lease
// records (spec.renewTime), keeping the monotonic reading: the deadline
// counted from it is exactly RenewDeadline after the renewTime the server
// stores.
func (m *Member) sendTime() time.Time {
	t := m.now()
	return t.Add(-time.Duration(t.Nanosecond() % int(time.Microsecond)))
}

// newLease is this member's Lease as first created.
func (m *Member) newLease(sent time.Time) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1",
		"kind":       "Lease",
		"metadata": map[string]any{
			"name":      leaseName(m.opts.Ring, m.opts.Identity),
			"namespace": m.opts.Namespace,
			"labels":    map[string]any{RingLabel: m.opts.Ring},
		},
	}}
	m.fill(u, sent)
	return u
}

// fill writes this member's state into u, renewed at sent.
func (m *Member) fill(u *unstructured.Unstructured, sent time.Time) {
	r, _ := lease.Read(u) // a malformed spec is written over
	r.HolderIdentity = m.opts.Identity
	r.LeaseDurationSeconds = int64(m.opts.LeaseDuration / time.Second)
	r.RenewTime = lease.MicroTime(sent)
	if r.AcquireTime.IsZero() {
		r.AcquireTime = r.RenewTime
	}
	lease.Write(u, r)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[HeldAnnotation] = informer.FormatRanges(m.held)
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

// getLease reads this member's Lease.
func (m *Member) getLease(ctx context.Context) (*unstructured.Unstructured, error) {
	rctx, cancel := m.requestContext(ctx)
	defer cancel()
	return m.client.Get(rctx, leaseName(m.opts.Ring, m.opts.Identity), metav1.GetOptions{})
}

// create creates this member's Lease with the held ranges.
func (m *Member) create(ctx context.Context) error {
	rctx, cancel := m.requestContext(ctx)
	defer cancel()
	sent := m.sendTime()
	created, err := m.client.Create(rctx, m.newLease(sent), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	m.own = created
	m.renewed(sent)
	return nil
}

// deleteLease deletes this member's Lease.
func (m *Member) deleteLease(ctx context.Context) error {
	rctx, cancel := m.requestContext(ctx)
	defer cancel()
	return m.client.Delete(rctx, leaseName(m.opts.Ring, m.opts.Identity), metav1.DeleteOptions{})
}

// write renews the Lease with the held ranges, with optimistic concurrency
// on the version last read or written.
func (m *Member) write(ctx context.Context) error {
	u := m.own.DeepCopy()
	sent := m.sendTime()
	m.fill(u, sent)
	rctx, cancel := m.requestContext(ctx)
	out, err := m.client.Update(rctx, u, metav1.UpdateOptions{})
	cancel()
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Someone else wrote or deleted our Lease: read it (or recreate
		// it); what we hold stays unpublished meanwhile.
		cur, gerr := m.getLease(ctx)
		switch {
		case gerr == nil:
			if p, perr := readPeer(cur); perr == nil && p.identity != m.opts.Identity {
				m.log.Error(nil, "another member writes this member's lease; is the identity unique?", "holder", p.identity)
			}
			m.own = cur
		case apierrors.IsNotFound(gerr):
			if cerr := m.create(ctx); cerr == nil {
				return nil
			}
		}
		return err
	}
	if err != nil {
		return err
	}
	m.own = out
	m.renewed(sent)
	return nil
}
