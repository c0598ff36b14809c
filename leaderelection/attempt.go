package leaderelection

import (
	"context"
	"time"

	"github.com/kdyn/kdyn/internal/lease"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// outcome is the result of one attempt to acquire or renew the Lease.
type outcome int

const (
	// failed: a request failed (the error says why), a Conflict included;
	// nothing is known to have changed.
	failed outcome = iota
	// held: another candidate holds the Lease and it has not expired in
	// this candidate's view; for a renewal, the Lease names anyone else.
	held
	// acquired: this candidate holds the Lease, freshly written.
	acquired
)

// tryAcquireOrRenew makes one attempt, begun at now, to write this
// candidate into the Lease, following client-go's tryAcquireOrRenew:
//
//  1. A candidate whose last observation of the Lease names it, and which
//     has not expired, updates it straight away with the resourceVersion it
//     last saw (one request). If that fails it falls back to 2.
//  2. It reads the Lease, and creates it if it is absent.
//  3. If the Lease names another holder and has not expired in this
//     candidate's view, the attempt ends: held. A renewal (renewing true)
//     ends the same way whenever the Lease names anyone else, expired or
//     not, since the term it renews is over.
//  4. It updates the Lease with the resourceVersion it read. A holder that
//     stays keeps acquireTime and leaseTransitions; a new holder
//     increments leaseTransitions. A Conflict means someone else wrote
//     first: failed, for this round.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, now time.Time, renewing bool) (outcome, error) {
	id := e.cfg.Identity
	want := lease.Record{
		HolderIdentity:       id,
		LeaseDurationSeconds: e.leaseSeconds,
		AcquireTime:          lease.MicroTime(now),
		RenewTime:            lease.MicroTime(now),
	}

	e.mu.Lock()
	obs, valid := e.obs.Record, e.validLocked(now)
	e.mu.Unlock()
	if obs.HolderIdentity == id && valid && e.lock.lease != nil {
		want.AcquireTime, want.LeaseTransitions = obs.AcquireTime, obs.LeaseTransitions
		err := e.lock.update(ctx, want)
		if err == nil {
			e.observe(want, true)
			return acquired, nil
		}
		if ctx.Err() != nil {
			return failed, err
		}
		e.log.V(4).Info("optimistic update of the lease failed; reading it", "error", err)
	}

	cur, err := e.lock.get(ctx)
	if apierrors.IsNotFound(err) {
		if err := e.lock.create(ctx, want); err != nil {
			return failed, err
		}
		e.observe(want, true)
		return acquired, nil
	}
	if err != nil {
		return failed, err
	}
	e.observe(cur, false)

	switch {
	case cur.HolderIdentity == id:
		want.AcquireTime, want.LeaseTransitions = cur.AcquireTime, cur.LeaseTransitions
	case renewing:
		return held, nil
	case cur.HolderIdentity != "" && e.valid(now):
		return held, nil
	default:
		want.LeaseTransitions = cur.LeaseTransitions + 1
	}
	if err := e.lock.update(ctx, want); err != nil {
		return failed, err
	}
	e.observe(want, true)
	return acquired, nil
}

// observe records r as the Lease's current record. A record written by
// this candidate (written true), or one that differs from the last
// observed, restarts the local expiry clock; reading the same record again
// does not.
func (e *Elector) observe(r lease.Record, written bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.obs.Observe(r, e.clock.Now(), written)
}

// valid reports whether the observed lease has not expired at now.
func (e *Elector) valid(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.validLocked(now)
}

// validLocked reports whether the observed lease has not expired at now,
// in this candidate's view: leaseDurationSeconds after the local time the
// record was seen to change (lease.Observation). The times in the record,
// written by another machine's clock, are never compared with this one's.
func (e *Elector) validLocked(now time.Time) bool { return e.obs.Valid(now) }

// release gives up the Lease at the end of a term, as client-go's
// ReleaseOnCancel does: it reads the Lease and, if it still names this
// candidate, writes an empty holder with leaseDurationSeconds 1 (keeping
// leaseTransitions), using the resourceVersion it read, so a Lease someone
// else has taken meanwhile is never touched. It retries on Conflict and
// gives up after RenewDeadline.
func (e *Elector) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RenewDeadline)
	defer cancel()
	for {
		cur, err := e.lock.get(ctx)
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			e.log.Info("failed to release the lease", "error", err)
			return
		}
		e.observe(cur, false)
		if cur.HolderIdentity != e.cfg.Identity {
			return
		}
		now := lease.MicroTime(e.clock.Now())
		rel := lease.Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, LeaseTransitions: cur.LeaseTransitions}
		err = e.lock.update(ctx, rel)
		switch {
		case err == nil:
			e.observe(rel, true)
			e.log.V(1).Info("released the lease")
			return
		case apierrors.IsConflict(err) && ctx.Err() == nil:
			continue
		default:
			e.log.Info("failed to release the lease", "error", err)
			return
		}
	}
}
