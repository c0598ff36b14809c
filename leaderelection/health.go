package leaderelection

import (
	"fmt"
	"net/http"
	"time"
)

// HealthCheck is a liveness check for a leader, like client-go's
// HealthzAdaptor: it fails when this candidate's leader work may still be
// running although the Lease has not been renewed for longer than
// LeaseDuration plus a grace period — so another candidate may be leading
// too. That happens when OnStartedLeading ignores its cancelled context,
// or when the process is wedged; restarting it (a failed liveness probe)
// is the remedy. A candidate that does not lead is always healthy.
type HealthCheck struct {
	e     *Elector
	grace time.Duration
}

// HealthCheck returns a check that fails once the term has gone without a
// renewal for LeaseDuration + grace while OnStartedLeading still runs.
// client-go's components use a grace of 20 s.
func (e *Elector) HealthCheck(grace time.Duration) *HealthCheck {
	return &HealthCheck{e: e, grace: grace}
}

// Name returns "leaderElection", the name client-go's adaptor gives its
// check (it appears in /healthz?verbose output).
func (h *HealthCheck) Name() string { return "leaderElection" }

// Check returns nil while the candidate is healthy, and otherwise an error
// naming the Lease and how long it has gone unrenewed. The request is not
// used.
func (h *HealthCheck) Check(_ *http.Request) error {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading && !e.working {
		return nil
	}
	since := e.clock.Now().Sub(e.lastRenew)
	if limit := e.cfg.LeaseDuration + h.grace; since > limit {
		return fmt.Errorf("leaderelection: lease %s: leading, but not renewed for %v (more than lease duration %v + grace %v)",
			e.lock.describe(), since.Round(time.Millisecond), e.cfg.LeaseDuration, h.grace)
	}
	return nil
}
