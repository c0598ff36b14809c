package informer

import (
	"math/rand/v2"
	"time"
)

// Backoff between failures: about 0.8 s doubling to 30 s, with jitter, and
// back to the start after a healthy period.
const (
	backoffInitial = 800 * time.Millisecond
	backoffMax     = 30 * time.Second
	backoffReset   = 2 * time.Minute
	backoffJitter  = 0.25
)

type backoff struct {
	clock   clock
	next    time.Duration
	lastErr time.Time
	jitter  func() float64
}

func newBackoff(c clock) *backoff {
	return &backoff{clock: c, next: backoffInitial, jitter: rand.Float64}
}

// delay returns the wait before the next attempt and advances the
// sequence. A failure after a healthy period starts over.
func (b *backoff) delay() time.Duration {
	now := b.clock.Now()
	if !b.lastErr.IsZero() && now.Sub(b.lastErr) > backoffReset {
		b.next = backoffInitial
	}
	b.lastErr = now
	d := b.next
	b.next = min(b.next*2, backoffMax)
	return d + time.Duration(float64(d)*backoffJitter*b.jitter())
}

// reset starts the sequence over (after a success).
func (b *backoff) reset() {
	b.next = backoffInitial
	b.lastErr = time.Time{}
}
