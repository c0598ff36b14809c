package workqueue_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kdyn/kdyn/informer/workqueue"
)

// A worker loop by hand: duplicates are merged, and after ShutDown Get
// reports shutdown.
func Example() {
	q := workqueue.New(workqueue.Options[string]{Name: "configmaps"})
	for _, key := range []string{"default/a", "default/b", "default/a"} {
		q.Add(key)
	}
	fmt.Println("queued:", q.Len())
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println("reconcile", key)
		q.Forget(key)
		q.Done(key)
	}
	q.ShutDown()
	_, shutdown := q.Get()
	fmt.Println("shutdown:", shutdown)
	// Output:
	// queued: 2
	// reconcile default/a
	// reconcile default/b
	// shutdown: true
}

// Run retries a failed item with backoff (5 ms here) and stops, draining
// the queue, when its context is done.
func ExampleQueue_Run() {
	q := workqueue.New(workqueue.Options[string]{Name: "deployments"})
	q.Add("default/web")
	q.Add("default/db")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := map[string]int{} // one worker: no locking needed
	err := q.Run(ctx, 1, func(ctx context.Context, key string) error {
		attempts[key]++
		if key == "default/db" && attempts[key] == 1 {
			fmt.Println(key, "failed, will retry")
			return errors.New("conflict")
		}
		fmt.Println(key, "reconciled, attempt", attempts[key])
		if key == "default/db" {
			cancel() // all done
		}
		return nil
	})
	fmt.Println("Run returned", err, "; shutting down:", q.ShuttingDown())
	// Output:
	// default/web reconciled, attempt 1
	// default/db failed, will retry
	// default/db reconciled, attempt 2
	// Run returned <nil> ; shutting down: true
}
