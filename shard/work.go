package shard

import (
	"context"
	"slices"
	"time"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/ctxsleep"
)

// setActive replaces the active ranges with next(active) — next runs with
// mu held and may read the member's state — and sets the Shard's ranges to
// match. Ranges that leave go to draining and wake the drain loop.
func (m *Member) setActive(next func(active []informer.HashRange) []informer.HashRange) {
	m.setMu.Lock()
	defer m.setMu.Unlock()
	m.mu.Lock()
	old := m.active
	m.active = next(old)
	left := informer.SubtractRanges(old, m.active)
	m.draining = informer.UnionRanges(m.draining, left)
	active := m.active
	m.mu.Unlock()
	if slices.Equal(old, active) {
		return
	}
	if err := m.opts.Shard.Set(active...); err != nil {
		// The ranges come from MergeRanges, Intersect or Subtract: they
		// are well-formed.
		m.log.Error(err, "setting the shard's ranges failed")
	}
	m.log.V(1).Info("processing", "ranges", informer.FormatRanges(active), "share", informer.RangesSize(active))
	if len(left) > 0 {
		select {
		case m.kick <- struct{}{}:
		default:
		}
	}
}

// renewed records an accepted write of the Lease that was sent at sent:
// the deadline moves to sent+RenewDeadline, and the Shard's fence with it.
// A write answered only after the deadline it extends had passed does not
// move it (the fence was closed meanwhile, and the member must start over,
// as the watchdog makes it); after an expiry, the member is live again once
// nothing runs and the write published no range.
func (m *Member) renewed(sent time.Time) {
	m.mu.Lock()
	m.renewals++
	if m.lateLocked() {
		m.expireLocked()
		m.mu.Unlock()
		m.stopAll()
		return
	}
	defer m.mu.Unlock()
	if m.expired {
		if len(m.active) > 0 || len(m.draining) > 0 || len(m.held) > 0 {
			return
		}
		m.expired = false
		m.log.V(1).Info("the lease is renewed again; claiming ranges from the next round")
	}
	if d := sent.Add(m.opts.RenewDeadline); d.After(m.deadline) {
		m.deadline = d
		m.opts.Shard.Fence(d)
	}
}

// expireIfLate stops everything once the renew deadline has passed.
func (m *Member) expireIfLate() {
	m.mu.Lock()
	late := m.lateLocked()
	if late {
		m.expireLocked()
	}
	m.mu.Unlock()
	if late {
		m.stopAll()
	}
}

// lateLocked reports whether the deadline has passed and the member has
// not yet expired. Called with mu held.
func (m *Member) lateLocked() bool {
	return !m.expired && !m.deadline.IsZero() && !m.now().Before(m.deadline)
}

// expireLocked marks the member expired and closes the fence; the caller
// then stops the work (stopAll) once mu is released. Called with mu held.
func (m *Member) expireLocked() {
	m.expired = true
	m.opts.Shard.Fence(time.Time{})
	m.log.Info("the lease was not renewed within RenewDeadline; stopping all work", "renewDeadline", m.opts.RenewDeadline, "deadline", m.deadline)
}

// stopAll empties the Shard's ranges: no work starts any more, and the
// drain loop cancels the work in flight.
func (m *Member) stopAll() {
	m.setActive(func([]informer.HashRange) []informer.HashRange { return nil })
}

// watchdog expires the member the moment its deadline passes, whatever
// Run's goroutine is doing (a request may hang), until ctx is done.
func (m *Member) watchdog(ctx context.Context) {
	for {
		m.mu.Lock()
		deadline, expired := m.deadline, m.expired
		m.mu.Unlock()
		wait := m.opts.RetryPeriod
		if !expired && !deadline.IsZero() {
			wait = deadline.Sub(m.now())
		}
		if err := ctxsleep.Sleep(ctx, wait); err != nil {
			return
		}
		m.expireIfLate()
	}
}

// drainLoop drains the ranges that left active, whenever it is woken,
// until ctx is done. Each drain may take until the deadline as it was when
// the drain began (at once after an expiry): work still running then has
// its context cancelled and is reported by the Drainers, and the drain is
// tried again a RetryPeriod later. The ranges stay held until a drain
// succeeds.
func (m *Member) drainLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
		for {
			m.mu.Lock()
			leaving, deadline := m.draining, m.deadline
			if m.expired {
				deadline = time.Time{}
			}
			m.mu.Unlock()
			if len(leaving) == 0 {
				break
			}
			dctx, cancel := context.WithDeadline(ctx, deadline)
			err := m.drain(dctx)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				m.mu.Lock()
				m.draining = informer.SubtractRanges(m.draining, leaving)
				m.mu.Unlock()
				m.log.V(4).Info("drained", "ranges", informer.FormatRanges(leaving))
				continue
			}
			m.log.Info("work on ranges this member let go of ran past the drain's deadline and was cancelled; draining again", "ranges", informer.FormatRanges(leaving), "error", err)
			if ctxsleep.Sleep(ctx, m.opts.RetryPeriod) != nil {
				return
			}
		}
	}
}

// drain waits on every Drainer.
func (m *Member) drain(ctx context.Context) error {
	for _, d := range m.opts.Drainers {
		if err := d.Drain(ctx); err != nil {
			return err
		}
	}
	return nil
}
