package workqueue_test

import (
	"fmt"

	"github.com/kdyn/kdyn/workqueue"
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
