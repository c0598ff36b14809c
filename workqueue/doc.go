// Package workqueue is a typed, de-duplicating, rate-limited work queue for
// controllers: event handlers add keys (typically "namespace/name"), workers
// take them, reconcile, and report success or failure.
//
// # Usage
//
// controller.Controller is the worker loop over a Queue, the one kdyn has:
// N workers, outcomes turned into Forget, AddRateLimited or AddAfter,
// panics recovered, a graceful stop. By hand, a worker is:
//
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := reconcile(ctx, key); err != nil {
//			q.AddRateLimited(key)
//		} else {
//			q.Forget(key)
//		}
//		q.Done(key)
//	}
//
// # Guarantees
//
//   - De-duplication: an item added any number of times before a worker gets
//     it is handed out once ([Queue.Add]).
//   - Single processing: an item is never handed to two workers at once. An
//     item added while it is being processed is not queued until the worker
//     calls [Queue.Done]; it is then queued once, however many times it was
//     added meanwhile.
//   - Order: items are handed out in the order they entered the queue (an
//     item re-added during processing enters at Done); delayed items
//     ([Queue.AddAfter]) enter in deadline order, and an item delayed twice
//     keeps the earlier deadline.
//   - Priority: [Queue.AddLowPriority] queues an item behind those of Add
//     (a controller's initial list, so that real changes overtake it), but
//     never starves it: while both kinds wait, at least one item in every
//     [LowPriorityShare] handed out is a low-priority one. An Add of an item
//     waiting with low priority moves it ahead.
//   - Backoff: [Queue.AddRateLimited] waits as long as the [RateLimiter] says.
//     The default, [DefaultRateLimiter], is client-go's: per-item exponential
//     backoff 5 ms, 10 ms, 20 ms, … capped at 1000 s, and an overall token
//     bucket of 10 retries per second with a burst of 100, the longer delay
//     winning. [Queue.Forget] resets an item's backoff; [Queue.NumRequeues]
//     reports its failures.
//
// # Lifecycle and shutdown
//
// [New] returns a queue ready for use; it starts one goroutine, for delayed
// adds, on the first positive delay. A queue cannot be restarted. Both
// shutdowns drop every later add, discard the delayed items not yet due, and
// return only after that goroutine has exited, so a shut-down queue leaks
// nothing:
//
//   - [Queue.ShutDown] is immediate: the queued items are discarded and every
//     [Queue.Get], blocked or future, returns shutdown=true at once. It does
//     not wait for items in processing.
//   - [Queue.ShutDownWithDrain] finishes the accepted work first: Get keeps
//     handing out the queued items (and those re-added during processing,
//     after Done), and ShutDownWithDrain returns once no item is queued or in
//     processing. Get returns shutdown=true once nothing is left to hand out.
//
// # Concurrency
//
// Every method of [Queue] and every rate limiter in this package is safe for
// concurrent use. Get blocks; the other methods do not, except the two
// shutdowns as described above.
//
// # Errors and metrics
//
// The queue reports no errors: adds after shutdown are dropped silently, and
// Done or Forget of an unknown item does nothing. The queue does not log; [Queue.Stats] returns its
// figures (depth, adds, retries, in-flight work, latency and work duration),
// and [Options.Metrics] receives them as they happen, for an exporter
// (package metrics exports them to Prometheus under client-go's names).
package workqueue
