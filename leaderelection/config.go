package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/kdyn/kdyn/internal/lease"
	"k8s.io/apimachinery/pkg/util/validation"
)

// client-go's defaults (k8s.io/component-base's leader-election flags).
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
)

// JitterFactor bounds the random spread of a candidate's retries: a
// candidate that does not lead waits between RetryPeriod/JitterFactor and
// RetryPeriod between attempts. As in client-go, RenewDeadline must exceed
// RetryPeriod×JitterFactor.
const JitterFactor = lease.JitterFactor

// Config configures an Elector. Namespace, Name, Identity and
// Callbacks.OnStartedLeading are required; the zero value of every other
// field is client-go's default.
type Config struct {
	// Namespace and Name name the coordination.k8s.io/v1 Lease. It is
	// created when absent.
	Namespace string
	Name      string

	// Identity names this candidate in the Lease's spec.holderIdentity. It
	// must be unique among the candidates (a pod name, or host name plus a
	// random suffix): two candidates with one identity both believe they
	// lead.
	Identity string

	// LeaseDuration is how long a candidate that does not lead waits, from
	// the moment it sees the Lease change, before it takes the Lease over.
	// It is written to spec.leaseDurationSeconds and so must be a whole
	// number of seconds. Zero means DefaultLeaseDuration (15 s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew, counted
	// from the start of its last successful renewal, before it stops
	// leading. It must be less than LeaseDuration. Zero means
	// DefaultRenewDeadline (10 s).
	RenewDeadline time.Duration
	// RetryPeriod is the longest wait between two attempts to acquire or
	// renew. RenewDeadline must exceed RetryPeriod×JitterFactor. Zero means
	// DefaultRetryPeriod (2 s).
	RetryPeriod time.Duration
	// RequestTimeout bounds each request to the Lease (a read, a create,
	// an update), retries included, so that a request that hangs on a dead
	// connection, or keeps being retried, ends in time for the next
	// attempt instead of using up the term. Zero means RenewDeadline/4 or
	// RetryPeriod, whichever is longer; it must not exceed RenewDeadline.
	RequestTimeout time.Duration

	// Callbacks are told of leadership changes; OnStartedLeading is
	// required.
	Callbacks Callbacks

	// ReleaseOnCancel makes a leader give the Lease up when its term ends
	// (Run's context is done, or leadership is lost), once OnStartedLeading
	// has returned: it writes an empty holderIdentity and
	// leaseDurationSeconds 1, as client-go does, so another candidate takes
	// over at its next attempt instead of waiting for the lease to expire.
	ReleaseOnCancel bool

	// Logger receives the elector's logs; the zero value logs nothing.
	Logger logr.Logger

	// Metrics, if set, is told when this candidate starts and stops
	// leading.
	Metrics Metrics
}

// Callbacks are the functions an Elector calls as leadership changes.
// They run on the Elector's goroutines; Run does not return while one of
// them is running.
type Callbacks struct {
	// OnStartedLeading is called, on a goroutine of its own, when this
	// candidate becomes leader. Its context is cancelled the moment
	// leadership is lost or Run's context is done; the work it guards must
	// stop then. It should block until its context is done: if it returns
	// earlier, the candidate keeps the Lease (as in client-go) until Run's
	// context is done or leadership is lost.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading, if set, is called after a term has ended: after
	// OnStartedLeading has returned and, with ReleaseOnCancel, the Lease
	// has been released. Unlike client-go's, it is not called by a
	// candidate that never led.
	OnStoppedLeading func()
	// OnNewLeader, if set, is called with the holder's identity whenever
	// the holder the candidate observes in the Lease changes, this
	// candidate's own identity included; identity is empty when the Lease
	// was released and nobody holds it. Calls are made one at a time, in
	// order; changes seen while a call runs are delivered after it, only
	// the latest one.
	OnNewLeader func(identity string)
}

// Metrics receives the elector's state for an exporter: package metrics
// exports it as leader_election_master_status{name}. It must be cheap and
// safe for concurrent use.
type Metrics interface {
	// Leading is called with false when Run starts (so the series exists
	// while the candidate waits), with true when the candidate starts
	// leading, and with false the moment it stops. name is the Lease's
	// name.
	Leading(name string, leading bool)
}

// ErrInvalidConfig is wrapped by New's error for a Config it refuses; the
// message names every field that is wrong.
var ErrInvalidConfig = errors.New("leaderelection: invalid config")

// noMetrics is the Metrics of an elector without one.
type noMetrics struct{}

func (noMetrics) Leading(string, bool) {}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	t := c.timing().WithDefaults()
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod, c.RequestTimeout = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod, t.RequestTimeout
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	return c
}

// timing is c's lease timing.
func (c Config) timing() lease.Timing {
	return lease.Timing{LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod, RequestTimeout: c.RequestTimeout}
}

// validate checks a Config that has its defaults, naming every field that
// is wrong.
func (c Config) validate() error {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf(format, args...))
	}
	if c.Namespace == "" {
		bad("Namespace is empty")
	} else if msgs := validation.IsDNS1123Label(c.Namespace); len(msgs) > 0 {
		bad("Namespace %q: %s", c.Namespace, strings.Join(msgs, "; "))
	}
	if c.Name == "" {
		bad("Name is empty")
	} else if msgs := validation.IsDNS1123Subdomain(c.Name); len(msgs) > 0 {
		bad("Name %q: %s", c.Name, strings.Join(msgs, "; "))
	}
	if c.Identity == "" {
		bad("Identity is empty")
	}
	errs = append(errs, c.timing().Problems()...)
	if c.Callbacks.OnStartedLeading == nil {
		bad("Callbacks.OnStartedLeading is nil")
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w for lease %s/%s: %s", ErrInvalidConfig, c.Namespace, c.Name, strings.Join(errs, "; "))
}
