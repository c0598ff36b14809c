package workqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// noDelay counts failures but never delays, so Run tests need no clock.
func noDelay() RateLimiter[string] { return NewItemExponentialRateLimiter[string](0, 0) }

var errBoom = errors.New("boom")

func TestRunRetriesFailuresAndForgetsSuccesses(t *testing.T) {
	q, _ := newTestQueue(t, Options[string]{RateLimiter: noDelay()})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var (
		mu       sync.Mutex
		attempts = map[string]int{}
		requeues []int // NumRequeues("flaky") seen by each attempt
		pending  sync.WaitGroup
	)
	pending.Add(2) // flaky and steady succeed once each
	q.Add("flaky")
	q.Add("steady")

	runErr := make(chan error, 1)
	go func() {
		runErr <- q.Run(ctx, 2, func(ctx context.Context, item string) error {
			mu.Lock()
			defer mu.Unlock()
			attempts[item]++
			if item == "flaky" {
				requeues = append(requeues, q.NumRequeues(item))
				if attempts[item] < 3 {
					return errBoom
				}
			}
			pending.Done()
			return nil
		})
	}()
	pending.Wait()
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}

	if diff := cmp.Diff(map[string]int{"flaky": 3, "steady": 1}, attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1, 2}, requeues); diff != "" {
		t.Errorf("NumRequeues seen by flaky's attempts (-want +got):\n%s", diff)
	}
	if got := q.NumRequeues("flaky"); got != 0 {
		t.Errorf("NumRequeues(flaky) after success = %d, want 0 (forgotten)", got)
	}
	if m := q.Stats(); m.Retries != 2 || m.Processing != 0 {
		t.Errorf("Retries = %d, Processing = %d; want 2, 0", m.Retries, m.Processing)
	}
	if !q.ShuttingDown() {
		t.Error("queue not shut down after Run")
	}
}

func TestRunDropsAfterMaxRetries(t *testing.T) {
	type drop struct {
		item string
		err  error
	}
	drops := make(chan drop, 1)
	q, _ := newTestQueue(t, Options[string]{
		RateLimiter: noDelay(),
		MaxRetries:  2,
		OnDrop:      func(item string, err error) { drops <- drop{item, err} },
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var attempts int // only the single worker touches it
	q.Add("x")
	runErr := make(chan error, 1)
	go func() {
		runErr <- q.Run(ctx, 1, func(context.Context, string) error {
			attempts++
			return errBoom
		})
	}()
	var d drop
	select {
	case d = <-drops:
	case <-time.After(liveness):
		t.Fatal("OnDrop not called")
	}
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d.item != "x" || !errors.Is(d.err, errBoom) {
		t.Errorf("OnDrop(%q, %v), want (x, boom)", d.item, d.err)
	}
	if attempts != 3 {
		t.Errorf("attempts = %d, want 3 (the first and MaxRetries=2 retries)", attempts)
	}
	if got := q.NumRequeues("x"); got != 0 {
		t.Errorf("NumRequeues after the drop = %d, want 0", got)
	}
	if m := q.Stats(); m.Dropped != 1 || m.Retries != 2 {
		t.Errorf("Dropped = %d, Retries = %d; want 1, 2", m.Dropped, m.Retries)
	}
}

func TestRunDrainsWhenTheContextIsDone(t *testing.T) {
	q, _ := newTestQueue(t, Options[string]{RateLimiter: noDelay()})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	q.Add("a")
	q.Add("b")

	var seen []string // only the single worker touches it
	started := make(chan struct{})
	runErr := make(chan error, 1)
	go func() {
		runErr <- q.Run(ctx, 1, func(ctx context.Context, item string) error {
			seen = append(seen, item)
			if item == "a" {
				close(started)
				<-ctx.Done() // a slow item, interrupted by the cancel
				return ctx.Err()
			}
			return nil
		})
	}()
	<-started
	cancel()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// b, still queued at cancel, is drained; a's failure during the drain is
	// not retried.
	if diff := cmp.Diff([]string{"a", "b"}, seen); diff != "" {
		t.Errorf("processed (-want +got):\n%s", diff)
	}
	if m := q.Stats(); m.Depth != 0 || m.Processing != 0 || m.Retries != 0 {
		t.Errorf("Depth = %d, Processing = %d, Retries = %d; want 0, 0, 0", m.Depth, m.Processing, m.Retries)
	}
}

func TestRunReturnsWhenTheQueueIsShutDown(t *testing.T) {
	q, _ := newTestQueue(t, Options[string]{})
	runErr := make(chan error, 1)
	go func() {
		runErr <- q.Run(t.Context(), 3, func(context.Context, string) error { return nil })
	}()
	q.ShutDown()
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(liveness):
		t.Fatal("Run still running after ShutDown")
	}
}

func TestRunRejectsBadArguments(t *testing.T) {
	q, _ := newTestQueue(t, Options[string]{})
	ok := func(context.Context, string) error { return nil }
	for _, tc := range []struct {
		name    string
		workers int
		fn      func(context.Context, string) error
	}{
		{"no workers", 0, ok},
		{"negative workers", -1, ok},
		{"nil fn", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := q.Run(t.Context(), tc.workers, tc.fn); err == nil {
				t.Error("Run: nil error")
			}
		})
	}
	if q.ShuttingDown() {
		t.Error("a rejected Run shut the queue down")
	}
}
