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
// # Wiring watches to keys
//
// Controller.Watch takes what the controller watches and turns every event
// into keys: For (the primary resource: each object's own key), Owns
// (resources it owns: an object's controller ownerReference, matched by
// group and kind, names the key) and Watches (any resource, with a mapping
// function). They take any informer — whole objects or metadata only, of a
// kind known at compile time or found at run time — and handle the
// initial list (AddInitial), updates (the old and the new object's keys),
// deletes and tombstones; a shard move is not an event to act on. The
// reconcile reads the object from the cache by its key. WatchesSet watches
// every resource of an informer.ResourceSet (kinds found at run time, as a
// garbage collector needs), handing its mapping each whole event, so that
// an index of the controller's own (an owner graph) follows the cache.
//
//	ctrl, _ := controller.New("widgets", reconcile, controller.Options[string]{Workers: 4})
//	err := ctrl.Watch(
//		controller.For(factory.ForResource(widgetGVR, informer.InformerOptions{})),
//		controller.Owns(factory.ForResourceMetadata(configMapGVR, informer.InformerOptions{}), widgetKind),
//	)
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
// # Manager
//
// A Manager runs a controller process. Caches (an informer.Factory, an
// informer.ResourceSet) run from the start — with leader election, once the
// replica leads: a standby holds no objects and makes no list or watch
// (LeaderElection.WarmStandby runs them in every replica, for a hand-over
// without a sync); controllers (Add) start once every cache has synced —
// with leader election (ManagerOptions.LeaderElection), only in the
// replica that leads, and they
// stop the moment it stops leading (Run then returns an error wrapping
// leaderelection.ErrLeadershipLost: exit and let the Deployment restart the
// replica). A Runnable whose NeedLeaderElection is false (a shard.Member)
// runs in every replica. One address (ManagerOptions.BindAddress) serves
// /metrics, /healthz (liveness: the leader-election check and checks of
// your own) and /readyz (caches synced and, with leader election,
// leading). On the way out the controllers stop first — letting their
// reconciles finish — then the runnables that run in every replica (an
// events.Recorder flushes), then the caches, then the server; Run returns
// once all have stopped, or, after ManagerOptions.ShutdownTimeout, with an
// error naming each one that has not.
//
//	leaseClient, _ := dynamic.NewForConfig(rest.CopyConfig(cfg)) // the election's own
//	mgr, _ := controller.NewManager(controller.ManagerOptions{
//		BindAddress:    ":8080",
//		MetricsHandler: metrics.Handler(registry),
//		LeaderElection: &controller.LeaderElection{Client: leaseClient, Namespace: "kube-system", Name: "gc", Identity: podName},
//	})
//	mgr.AddCache(factory)
//	mgr.Add(ctrl)
//	return mgr.Run(ctx)
//
// # Secure metrics
//
// ManagerOptions.SecureMetrics serves the address over TLS (a certificate
// of your own, or a self-signed one made at start) and /metrics only to a
// bearer token the API server authenticates (TokenReview) and authorizes
// for get on the non-resource URL /metrics (SubjectAccessReview), caching
// each answer for CacheTTL by the token's hash; /healthz and /readyz stay
// open. A missing or unauthenticated token gets 401, an unauthorized one
// 403, a failed review 500.
//
// # Metrics
//
// Options.Metrics receives each reconcile's outcome and duration, panics
// and the worker count; package metrics exports them under
// controller-runtime's names (controller_runtime_reconcile_total and the
// like), and Options.QueueMetrics exports the queue's workqueue_* families.
package controller
