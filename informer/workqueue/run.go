package workqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Run processes the queue with workers goroutines until ctx is done or the
// queue is shut down, and returns only when every goroutine it started has
// exited.
//
// Each worker loops on Get; it calls fn(ctx, item), then on success Forget,
// and on failure AddRateLimited, or, once the item has failed
// [Options.MaxRetries] times beyond the first, Forget and [Options.OnDrop].
// Then it calls Done.
//
// When ctx is done Run calls ShutDownWithDrain: the queued items and those in
// processing are still handed to fn, whose ctx is then already done, so fn
// should return promptly; a failure once ctx is done is not retried (nor
// passed to OnDrop), and its backoff is left as it was. Run
// returns nil after a shutdown either way, and an error only for a workers
// count below 1 or a nil fn.
func (q *Queue[T]) Run(ctx context.Context, workers int, fn func(ctx context.Context, item T) error) error {
	if workers < 1 {
		return fmt.Errorf("workqueue: Run needs at least 1 worker, got %d", workers)
	}
	if fn == nil {
		return errors.New("workqueue: Run needs a non-nil fn")
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for q.processNext(ctx, fn) {
			}
		})
	}
	workersDone := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		select {
		case <-ctx.Done():
			q.ShutDownWithDrain()
		case <-workersDone: // shut down by someone else
		}
	})
	wg.Wait()
	close(workersDone)
	watcher.Wait()
	return nil
}

// processNext handles one item; it reports false once the queue is shut down.
func (q *Queue[T]) processNext(ctx context.Context, fn func(context.Context, T) error) bool {
	item, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(item)
	err := fn(ctx, item)
	switch {
	case err == nil:
		q.Forget(item)
	case ctx.Err() != nil:
		// Stopping: the queue is being drained and will drop the retry
		// anyway; deciding here keeps that independent of whether the
		// drain has begun yet.
	case q.maxRetries > 0 && q.NumRequeues(item) >= q.maxRetries:
		q.Forget(item)
		q.recordDrop()
		if q.onDrop != nil {
			q.onDrop(item, err)
		}
	default:
		q.AddRateLimited(item)
	}
	return true
}
