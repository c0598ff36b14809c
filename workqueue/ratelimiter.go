package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item waits before it is retried.
// Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records a failure of item and returns how long to wait before
	// retrying it.
	When(item T) time.Duration
	// Forget clears what the limiter remembers about item, typically after it
	// was processed successfully.
	Forget(item T)
	// NumRequeues reports how many failures of item the limiter remembers.
	NumRequeues(item T) int
}

var (
	_ RateLimiter[string] = (*ItemExponentialRateLimiter[string])(nil)
	_ RateLimiter[string] = (*BucketRateLimiter[string])(nil)
	_ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)
)

// Defaults of [DefaultRateLimiter], the same figures as client-go's default
// controller rate limiter.
const (
	DefaultBaseDelay = 5 * time.Millisecond
	DefaultMaxDelay  = 1000 * time.Second
	DefaultQPS       = 10
	DefaultBurst     = 100
)

// DefaultRateLimiter returns the limiter a [Queue] uses when
// [Options.RateLimiter] is nil: per-item exponential backoff from 5 ms
// doubling up to 1000 s, combined (the larger delay wins) with an overall
// token bucket of 10 retries per second and a burst of 100.
func DefaultRateLimiter[T comparable]() *MaxOfRateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialRateLimiter[T](DefaultBaseDelay, DefaultMaxDelay),
		NewBucketRateLimiter[T](DefaultQPS, DefaultBurst),
	)
}

// ItemExponentialRateLimiter delays the n-th consecutive failure of an item
// (counting from zero) by base·2ⁿ, capped at a maximum.
type ItemExponentialRateLimiter[T comparable] struct {
	base, maxDelay time.Duration

	// mu guards failures.
	mu       sync.Mutex
	failures map[T]int
}

// NewItemExponentialRateLimiter returns a limiter whose delays are base,
// 2·base, 4·base, … up to maxDelay for each item's consecutive failures. A
// base of zero or less gives no delay (failures are still counted); a maxDelay
// of zero or less means no cap other than the largest time.Duration.
func NewItemExponentialRateLimiter[T comparable](base, maxDelay time.Duration) *ItemExponentialRateLimiter[T] {
	if maxDelay <= 0 {
		maxDelay = math.MaxInt64
	}
	return &ItemExponentialRateLimiter[T]{base: base, maxDelay: maxDelay, failures: map[T]int{}}
}

// When records a failure of item and returns base·2ⁿ capped at maxDelay, where n
// is the number of earlier failures since the item was last forgotten.
func (r *ItemExponentialRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item]
	r.failures[item] = n + 1
	r.mu.Unlock()

	if r.base <= 0 {
		return 0
	}
	d := float64(r.base) * math.Pow(2, float64(n))
	if d >= float64(r.maxDelay) {
		return r.maxDelay
	}
	return time.Duration(d)
}

// Forget resets item's backoff to base.
func (r *ItemExponentialRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	delete(r.failures, item)
	r.mu.Unlock()
}

// NumRequeues reports the failures of item since it was last forgotten.
func (r *ItemExponentialRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter limits retries of all items together with a token bucket;
// it does not tell items apart.
type BucketRateLimiter[T comparable] struct {
	limiter *rate.Limiter
}

// NewBucketRateLimiter returns a token bucket that refills at qps tokens per
// second and holds at most burst tokens; each retry takes a token, waiting for
// one if the bucket is empty. A qps of zero or less means no limit; a burst
// below 1 is raised to 1.
func NewBucketRateLimiter[T comparable](qps float64, burst int) *BucketRateLimiter[T] {
	limit := rate.Limit(qps)
	if qps <= 0 {
		limit = rate.Inf
	}
	burst = max(burst, 1)
	return &BucketRateLimiter[T]{limiter: rate.NewLimiter(limit, burst)}
}

// When takes a token and returns how long until that token is available.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	now := time.Now()
	return r.limiter.ReserveN(now, 1).DelayFrom(now)
}

// Forget does nothing: the bucket keeps no per-item state.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues always returns 0: the bucket keeps no per-item state.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// MaxOfRateLimiter combines limiters: an item waits for the longest delay any
// of them asks for.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter combines limiters. With no limiters, When always
// returns 0.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: append([]RateLimiter[T](nil), limiters...)}
}

// When calls When on every limiter (each records the failure) and returns the
// largest delay.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget forgets item in every limiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues returns the largest count any limiter reports.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	var n int
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}
