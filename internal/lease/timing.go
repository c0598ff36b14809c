package lease

import (
	"fmt"
	"time"
)

// client-go's defaults (k8s.io/component-base's leader-election flags).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// JitterFactor bounds the random spread of retries; as in client-go,
// RenewDeadline must exceed RetryPeriod×JitterFactor.
const JitterFactor = 1.2

// Timing is how a holder keeps its Lease.
type Timing struct {
	// LeaseDuration: others treat the Lease as expired this long after
	// they saw it change. Whole seconds.
	LeaseDuration time.Duration
	// RenewDeadline: the holder stops acting this long after it sent its
	// last accepted renewal. Less than LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two attempts.
	RetryPeriod time.Duration
	// RequestTimeout bounds each request to a Lease, retries included.
	RequestTimeout time.Duration
}

// WithDefaults returns t with its zero fields set to the defaults.
func (t Timing) WithDefaults() Timing {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = DefaultLeaseDuration
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = DefaultRenewDeadline
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = DefaultRetryPeriod
	}
	if t.RequestTimeout == 0 {
		t.RequestTimeout = max(t.RenewDeadline/4, t.RetryPeriod)
	}
	return t
}

// Problems returns what is wrong with a Timing that has its defaults, one
// sentence per field, naming it; none when it is good.
func (t Timing) Problems() []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch {
	case t.LeaseDuration < 0:
		bad("LeaseDuration %v is negative", t.LeaseDuration)
	case t.LeaseDuration%time.Second != 0:
		bad("LeaseDuration %v is not a whole number of seconds (the Lease records spec.leaseDurationSeconds)", t.LeaseDuration)
	}
	if t.RenewDeadline < 0 {
		bad("RenewDeadline %v is negative", t.RenewDeadline)
	}
	if t.RetryPeriod < 0 {
		bad("RetryPeriod %v is negative", t.RetryPeriod)
	}
	if t.LeaseDuration <= t.RenewDeadline {
		bad("LeaseDuration %v must be greater than RenewDeadline %v", t.LeaseDuration, t.RenewDeadline)
	}
	if t.RenewDeadline <= time.Duration(JitterFactor*float64(t.RetryPeriod)) {
		bad("RenewDeadline %v must be greater than RetryPeriod×JitterFactor (%v×%v)", t.RenewDeadline, t.RetryPeriod, JitterFactor)
	}
	if t.RequestTimeout < 0 || t.RequestTimeout > t.RenewDeadline {
		bad("RequestTimeout %v must be positive and at most RenewDeadline %v", t.RequestTimeout, t.RenewDeadline)
	}
	return out
}
