package workqueue

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// whens calls When n times for item and returns the delays.
func whens[T comparable](r RateLimiter[T], item T, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = r.When(item)
	}
	return out
}

func TestItemExponentialRateLimiter(t *testing.T) {
	r := NewItemExponentialRateLimiter[string](5*time.Millisecond, 1000*time.Second)
	var want []time.Duration
	for d := 5 * time.Millisecond; d < 1000*time.Second; d *= 2 {
		want = append(want, d) // 5ms, 10ms, 20ms, … 655.36s
	}
	want = append(want, 1000*time.Second, 1000*time.Second, 1000*time.Second)
	if diff := cmp.Diff(want, whens[string](r, "a", len(want))); diff != "" {
		t.Fatalf("delays (-want +got):\n%s", diff)
	}
	if got, want := want[:4], []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}; !cmp.Equal(got, want) {
		t.Fatalf("first delays %v, want %v", got, want)
	}
	if got := r.NumRequeues("a"); got != len(want) {
		t.Errorf("NumRequeues(a) = %d, want %d", got, len(want))
	}

	// Items back off independently.
	if got := r.When("b"); got != 5*time.Millisecond {
		t.Errorf("first delay of b = %v, want 5ms", got)
	}

	r.Forget("a")
	if got := r.NumRequeues("a"); got != 0 {
		t.Errorf("NumRequeues(a) after Forget = %d, want 0", got)
	}
	if got := r.When("a"); got != 5*time.Millisecond {
		t.Errorf("delay after Forget = %v, want 5ms", got)
	}
	if got := r.NumRequeues("b"); got != 1 {
		t.Errorf("NumRequeues(b) = %d, want 1: Forget(a) must not touch b", got)
	}
}

func TestItemExponentialRateLimiterEdges(t *testing.T) {
	t.Run("no base, no delay", func(t *testing.T) {
		r := NewItemExponentialRateLimiter[int](0, time.Second)
		if diff := cmp.Diff(make([]time.Duration, 3), whens[int](r, 1, 3)); diff != "" {
			t.Errorf("delays (-want +got):\n%s", diff)
		}
		if got := r.NumRequeues(1); got != 3 {
			t.Errorf("NumRequeues = %d, want 3", got)
		}
	})
	t.Run("no cap saturates instead of overflowing", func(t *testing.T) {
		r := NewItemExponentialRateLimiter[int](time.Millisecond, 0)
		got := whens[int](r, 1, 200)
		for i := 1; i < len(got); i++ {
			if got[i] < got[i-1] {
				t.Fatalf("delay %d = %v, below delay %d = %v", i, got[i], i-1, got[i-1])
			}
		}
		if last := got[len(got)-1]; last != math.MaxInt64 {
			t.Errorf("last delay = %v, want the largest Duration", last)
		}
	})
}

func TestBucketRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewBucketRateLimiter[string](10, 2)
		// Burst of 2, then one token per 100ms, shared by all items.
		want := []time.Duration{0, 0, 100 * time.Millisecond, 200 * time.Millisecond}
		got := []time.Duration{r.When("a"), r.When("b"), r.When("a"), r.When("c")}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("delays (-want +got):\n%s", diff)
		}
		// A second later the bucket has refilled (to its burst, no further).
		time.Sleep(time.Second)
		want = []time.Duration{0, 0, 100 * time.Millisecond}
		if diff := cmp.Diff(want, whens[string](r, "a", 3)); diff != "" {
			t.Fatalf("delays after refill (-want +got):\n%s", diff)
		}
		r.Forget("a")
		if got := r.NumRequeues("a"); got != 0 {
			t.Errorf("NumRequeues = %d, want 0: the bucket keeps no per-item state", got)
		}
	})
}

func TestBucketRateLimiterEdges(t *testing.T) {
	t.Run("no qps means no limit", func(t *testing.T) {
		r := NewBucketRateLimiter[int](0, 1)
		for i, d := range whens[int](r, 1, 1000) {
			if d != 0 {
				t.Fatalf("delay %d = %v, want 0", i, d)
			}
		}
	})
	t.Run("burst below 1 is 1", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := NewBucketRateLimiter[int](10, 0)
			if diff := cmp.Diff([]time.Duration{0, 100 * time.Millisecond}, whens[int](r, 1, 2)); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
		})
	})
}

// stubLimiter returns fixed figures and records Forget.
type stubLimiter struct {
	delay    time.Duration
	requeues int
	whens    int
	forgot   []string
}

func (s *stubLimiter) When(string) time.Duration { s.whens++; return s.delay }
func (s *stubLimiter) Forget(item string)        { s.forgot = append(s.forgot, item) }
func (s *stubLimiter) NumRequeues(string) int    { return s.requeues }

func TestMaxOfRateLimiter(t *testing.T) {
	short := &stubLimiter{delay: time.Millisecond, requeues: 7}
	long := &stubLimiter{delay: time.Second, requeues: 2}
	r := NewMaxOfRateLimiter[string](short, long)
	if got := r.When("a"); got != time.Second {
		t.Errorf("When = %v, want 1s (the longer)", got)
	}
	if short.whens != 1 || long.whens != 1 {
		t.Errorf("When calls: %d, %d; want every limiter to record the failure", short.whens, long.whens)
	}
	if got := r.NumRequeues("a"); got != 7 {
		t.Errorf("NumRequeues = %d, want 7 (the larger)", got)
	}
	r.Forget("a")
	if diff := cmp.Diff([]string{"a"}, short.forgot); diff != "" {
		t.Errorf("short forgot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, long.forgot); diff != "" {
		t.Errorf("long forgot (-want +got):\n%s", diff)
	}
	if got := NewMaxOfRateLimiter[string]().When("a"); got != 0 {
		t.Errorf("When with no limiters = %v, want 0", got)
	}
}

func TestDefaultRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := DefaultRateLimiter[int]()
		// The first 100 distinct items fit in the burst: the 5ms backoff wins.
		for i := range 100 {
			if got := r.When(i); got != 5*time.Millisecond {
				t.Fatalf("item %d: When = %v, want 5ms", i, got)
			}
		}
		// The 101st waits for the bucket: 100ms at 10 qps beats its 5ms backoff.
		if got := r.When(100); got != 100*time.Millisecond {
			t.Errorf("item 100: When = %v, want 100ms", got)
		}
		// Once the bucket has refilled, an item's own backoff shows again.
		time.Sleep(time.Hour)
		if got := r.When(0); got != 10*time.Millisecond {
			t.Errorf("item 0, second failure: When = %v, want 10ms", got)
		}
		if got := r.NumRequeues(0); got != 2 {
			t.Errorf("NumRequeues(0) = %d, want 2", got)
		}
		r.Forget(0)
		if got := r.When(0); got != 5*time.Millisecond {
			t.Errorf("after Forget: When = %v, want 5ms", got)
		}
	})
}
