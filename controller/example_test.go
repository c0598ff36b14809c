package controller_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/informer/workqueue"
)

// A controller reconciles each key it is given; an error retries the key
// with per-key backoff, and Result.RequeueAfter comes back to it later.
// Here "b" fails once, then succeeds.
func ExampleController() {
	var (
		mu       sync.Mutex
		attempts = map[string]int{}
		done     = make(chan struct{})
	)
	reconcile := func(ctx context.Context, key string) (controller.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if key == "b" && attempts[key] == 1 {
			return controller.Result{}, errors.New("not yet")
		}
		if attempts["a"] == 1 && attempts["b"] == 2 {
			close(done)
		}
		return controller.Result{}, nil
	}
	c, err := controller.New("example", reconcile, controller.Options[string]{
		RateLimiter: workqueue.NewItemExponentialRateLimiter[string](time.Millisecond, time.Second),
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- c.Run(ctx) }()
	c.Add("a")
	c.Add("b")
	<-done
	cancel()
	fmt.Println(<-stopped)
	fmt.Println("a:", attempts["a"], "b:", attempts["b"])
	// Output:
	// <nil>
	// a: 1 b: 2
}
