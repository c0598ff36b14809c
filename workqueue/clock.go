package workqueue

import "time"

// clock is the time seam: the queue, its delayed adds and the bucket rate
// limiter read time only through it, so tests can drive them with a fake.
type clock interface {
	Now() time.Time
	// TimerAt returns a timer that fires once the clock reaches deadline
	// (at once if it already has). Taking an absolute deadline, rather than a
	// duration measured from a Now read a moment earlier, leaves no window in
	// which a fake clock could move between the two calls.
	TimerAt(deadline time.Time) timer
}

// timer is the part of *time.Timer the queue uses.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) TimerAt(deadline time.Time) timer {
	return realTimer{time.NewTimer(time.Until(deadline))}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
