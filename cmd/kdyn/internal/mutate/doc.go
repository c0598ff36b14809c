// Package mutate holds the kubectl commands that change a few fields of
// existing objects: cordon and uncordon, taint, set image, set env (the
// keys of --from sorted, where kubectl's order is random), set resources,
// set serviceaccount, set subject, rollout pause and resume, and
// certificate approve and deny (through the approval subresource).
//
// They share one loop (Run): resolve the objects (TYPE NAME..., TYPE/NAME,
// -l, --all), read each, change a copy, and send the difference as a JSON
// merge patch carrying the object's resourceVersion, so a change computed
// from a stale read fails with a Conflict instead of overwriting newer
// data; a conflict is retried from a fresh read. Lists (containers,
// taints, subjects) are sent whole, which merge patch requires and the
// precondition makes safe. An unchanged object is not sent. Output is
// kubectl's ("node/n1 cordoned", "deployment.apps/web image updated"), or
// the changed object with -o; --dry-run=client prints the change without
// sending it. -f names the objects by manifests; with --local the
// manifests' objects are changed and printed without the server (as
// written plus the change, where kubectl prints its typed object with zero
// values filled in).
//
// drain cordons nodes with the same change, then evicts their pods (a
// policy/v1 Eviction each, all at once, retried while a
// PodDisruptionBudget answers 429) or deletes them (--disable-eviction),
// and polls until they are gone, as kubectl drain does, with its filters
// (DaemonSet, mirror, emptyDir and unreplicated pods), output and errors.
// Where kubectl's order comes from a map or from goroutines finishing (the
// kinds of pods in one warning or error, the failed evictions), kdyn's
// follows the pods' list order.
package mutate
