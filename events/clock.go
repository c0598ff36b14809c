package events

import "time"

// clock is the time seam: event times, the series window, the update
// interval and the spam filter's refill read time only through it, so tests
// drive them with a fake.
type clock interface {
	Now() time.Time
	// TimerAt returns a timer that fires once the clock reaches deadline (at
	// once if it already has).
	TimerAt(deadline time.Time) timer
}

// timer is the part of *time.Timer the recorder uses.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) TimerAt(deadline time.Time) timer {
	return realTimer{time.NewTimer(time.Until(deadline))}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
