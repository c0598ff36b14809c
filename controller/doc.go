// Package controller runs reconcilers: the loop every controller writes by
// hand, written once.
//
// A Controller holds a work queue of keys (typically "namespace/name", or
// anything comparable) and runs N workers over it. Event handlers Add keys;
// each worker takes one, calls the ReconcileFunc, and acts on the outcome:
//
//   - success: the key's backoff starts over;
//   - an error, or a panic (recovered, logged with its stack and counted):
//     the key is retried with per-key exponential backoff, 5 ms doubling to
//     1000 s by default, as client-go's default controller rate limiter;
//   - Result.RequeueAfter: the key comes back after that long.
//
// A key is never reconciled by two workers at once, and a key added many
// times while it waits is reconciled once. Keys from an informer's initial
// list go in with AddInitial: they wait behind real changes, so a restart
// does not delay the reaction to a change behind thousands of no-op
// reconciles, yet they never starve (at least one key in every
// workqueue.LowPriorityShare handed out is an initial one while both wait).
// Options.ReconciliationTimeout bounds each reconcile's context.
//
// # Lifecycle
//
// Run(ctx) runs the workers until ctx is done, then stops taking keys and
// lets the reconciles in flight finish: their context stays live for
// Options.ShutdownGracePeriod (30 s by default) and is cancelled after.
// Keys still queued are dropped — the next start, or the next leader, lists
// them again. Run returns once every worker has exited. A Controller is
// safe for concurrent use.
//
// # Metrics
//
// Options.Metrics receives each reconcile's outcome and duration, panics
// and the worker count; package metrics exports them under
// controller-runtime's names (controller_runtime_reconcile_total and the
// like), and Options.QueueMetrics exports the queue's workqueue_* families.
package controller
