package leaderelection

import "time"

// clock is the time seam: the elector reads time and waits only through
// it, so unit tests drive acquisitions, renewals and deadlines with a fake.
type clock interface {
	Now() time.Time
	// TimerAt returns a timer that fires once the clock reaches deadline
	// (at once if it already has). An absolute deadline leaves no window in
	// which a fake clock could move between reading Now and arming.
	TimerAt(deadline time.Time) timer
}

// timer is the part of *time.Timer the elector uses.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

// realClock is the system clock; durations between its readings use the
// monotonic clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) TimerAt(deadline time.Time) timer {
	return realTimer{time.NewTimer(time.Until(deadline))}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
