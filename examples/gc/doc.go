// Command gc is a garbage-collector-style controller built on kdyn: it
// finds objects whose owners are all gone and reports them or, with
// --delete, deletes them, over every resource the server has — built-in
// kinds and custom resources alike, including CRDs created after it
// started.
//
// # How it works
//
// A metadata-only informer.ResourceSet watches every resource that
// supports list, watch and delete (restmapper's SupportsVerbs), following
// CRDs as they come and go. The controller watches the whole set
// (controller.WatchesSet): each event, tagged with its resource, feeds an
// owner graph of the controller's own — UID → object (kind, namespace,
// name, owner references, being-deleted) and owner UID → dependent UIDs —
// and maps to the UIDs to check. One graph across all resources is used
// rather than a per-informer OwnerUIDIndex because an owner and its
// dependents live in different informers (a ConfigMap owned by a custom
// resource), and the question "does this UID still exist, anywhere?" needs
// every informer at once; the graph also outlives informers that the set
// releases when their CRD is deleted (the objects of a resource that left
// the set are forgotten, and their dependents checked).
//
// The mapping only updates the graph and names UIDs, which the controller
// queues in its rate-limited work queue (package workqueue; an initial
// list's behind real changes), keyed by the dependent's UID, so a burst of
// events for one object is checked once and a failed check is retried with
// backoff (50 ms doubling to 30 s). An object is queued when it appears,
// when its owner references or deletion state change, when one of its
// owners is deleted, and every --resync period.
//
// A check needs no request when the cache holds every owner. Otherwise it
// reads the dependent with a live metadata GET (the cache may lag), then
// each owner that the cache does not confirm: the mapper turns the
// reference's apiVersion and kind into a resource and scope, and a GET by
// name — in the dependent's namespace for a namespaced kind — must find
// an object with the reference's UID. As in Kubernetes, an owner in
// another namespace is therefore gone for this dependent, and a UID
// mismatch (the owner was deleted and recreated) is gone too. Owners found
// absent are remembered (UIDs are never reused). When every owner is gone
// the controller prints
//
//	orphan <Kind[.group]>/<namespace>/<name> (owners gone: <Kind[.group]>/<name> uid=<uid>, ...)
//
// once per object or, with --delete, deletes it with propagationPolicy
// Background and preconditions on its UID and resourceVersion (so an owner
// added meanwhile makes the delete fail and the check run again) and
// prints the same line starting with "deleted". The namespace is empty for
// cluster-scoped objects. After the first list of every resource it prints
// "synced <n> resources, <m> objects". Logs go to stderr.
//
// With --leader-elect or --shard-ring, several replicas run. With
// --leader-elect a standby caches nothing until it takes the Lease
// (--warm-standby fills its caches while it waits, for a take-over without
// a sync). Leader election and ring membership use a client of their own, so their
// requests never wait behind the collector's. Right before a delete the
// collector checks its fence: the Manager's IsLeader (with leader
// election) and the shard's HoldsValue of the dependent's namespace
// (sharded), both false from the moment the replica's Lease passes its
// renew deadline, so a replica resumed after a pause, or cut off, deletes
// nothing another replica may be checking. A replica frozen between that
// check and its delete is stopped by the delete's resourceVersion
// precondition.
//
// # What it leaves alone
//
// This is an example, not a replacement for kube-controller-manager's
// collector:
//
//   - Objects with at least one live owner, even when others are gone (the
//     real collector removes the dangling references; this one does not
//     write owner references).
//   - Objects already being deleted (deletionTimestamp set).
//   - Foreground and orphan deletion are not driven. An owner deleted with
//     propagationPolicy Foreground or Orphan stays, with its
//     foregroundDeletion or orphan finalizer, until a real collector
//     handles it; it still exists, so its dependents are not orphans here.
//     blockOwnerDeletion therefore changes nothing: it only blocks the
//     foreground deletion of an owner, and this controller deletes only
//     objects whose owners are already gone (with Background propagation,
//     so their own dependents are found when they disappear).
//   - References whose kind the server does not serve (a deleted CRD, a
//     misspelt apiVersion): the owner cannot be looked up, so, like the real
//     collector, it does not guess; the next resync looks again.
//   - Cluster-scoped objects with a namespaced owner, which Kubernetes
//     treats as invalid: logged, never deleted.
//
// An owner that exists but is not cached yet (its informer is still
// listing) makes the check retry with backoff until the cache has it, so
// an owner deleted before its informer ever saw it is still noticed.
//
// # Running it
//
// Start a control plane in one terminal and point the controller at the
// kubeconfig it prints (report mode first):
//
//	make cluster
//	go run ./examples/gc --kubeconfig .cluster/kubeconfig
//	go run ./examples/gc --kubeconfig .cluster/kubeconfig --delete -v
//
// Then, in another terminal, make an orphan: create a ConfigMap whose
// ownerReference names an object, and delete the object. The control plane
// of `make cluster` has no controller manager, so nothing else collects it.
//
// Flags: --kubeconfig, --context, --namespace (dependents in one
// namespace only), --delete, --resync (default 5m), --workers (default 2),
// -v (debug logs); --leader-elect (with --warm-standby), --shard-ring and
// their Lease flags;
// --metrics-bind-address, with --metrics-secure (default true): TLS with a
// self-signed certificate, and /metrics only for bearer tokens the API
// server authorizes for get on the non-resource URL /metrics (it reviews
// each with a TokenReview and a SubjectAccessReview, so the controller
// needs the ClusterRole system:auth-delegator); /healthz and /readyz stay
// open for the kubelet's probes.
package main
