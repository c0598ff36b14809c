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
	initial time.Duration
	max     time.Duration
	next    time.Duration
	lastErr time.Time
	jitter  func() float64
}

// newBackoff returns the sequence first, doubling up to limit, each with
// up to 25% jitter added; zero durations take the defaults (0.8 s, 30 s),
// and a limit below first is first.
func newBackoff(first, limit time.Duration) *backoff {
	if first <= 0 {
		first = backoffInitial
	}
	if limit <= 0 {
		limit = backoffMax
	}
	limit = max(limit, first)
	return &backoff{initial: first, max: limit, next: first, jitter: rand.Float64}
}

// delay returns the wait before the next attempt and advances the
// sequence. A failure after a healthy period starts over.
func (b *backoff) delay() time.Duration {
	now := time.Now()
	if !b.lastErr.IsZero() && now.Sub(b.lastErr) > backoffReset {
		b.next = b.initial
	}
	b.lastErr = now
	d := b.next
	b.next = min(b.next*2, b.max)
	return d + time.Duration(float64(d)*backoffJitter*b.jitter())
}

// reset starts the sequence over (after a success).
func (b *backoff) reset() {
	b.next = b.initial
	b.lastErr = time.Time{}
}
