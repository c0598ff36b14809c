// Command crd-controller is a controller for a custom resource, Widget,
// written with kdyn and no generated code: objects are
// *unstructured.Unstructured, read through informers and written with
// server-side apply.
//
// # The resource
//
// crd.yaml (built into the binary; --install-crd applies it and waits until
// it is established) defines widgets.examples.kdyn.io/v1, a namespaced kind:
//
//	apiVersion: examples.kdyn.io/v1
//	kind: Widget
//	metadata: {name: web, namespace: default}
//	spec:
//	  data: {color: blue, size: large}   # a map of strings
//	status:                              # written by the controller only
//	  observedGeneration: 1
//	  conditions:
//	  - {type: Ready, status: "True", reason: ConfigMapSynced, message: ..., lastTransitionTime: ..., observedGeneration: 1}
//
// # What it does
//
// For each Widget it keeps a ConfigMap of the same name and namespace whose
// data is exactly spec.data, labelled examples.kdyn.io/widget=<name> and with
// an ownerReference to the Widget (controller: true, blockOwnerDeletion:
// true). The ConfigMap is written with server-side apply, forced, as field
// manager kdyn-widget-controller (dynamic.WithFieldManager), so a change
// anyone else makes to those fields is reverted; keys another manager added
// are removed with a merge patch, since apply can only drop fields it owns.
// An existing ConfigMap of that name without a controller is adopted; one
// controlled by something else cannot be (an object has one controller),
// and the Widget reports it.
//
// Then it writes status.observedGeneration (the metadata.generation it
// acted on) and the Ready condition — True/ConfigMapSynced, or
// False/ConfigMapApplyFailed with the error — through the status
// subresource (ApplyStatus; the conditions list is a map keyed by type, so
// conditions written by others stay). Nothing is written when the status is
// already right; lastTransitionTime changes only when the condition's status
// does, decided on a live read so a lagging cache cannot bump it.
//
// Deleting a Widget leaves its ConfigMap to the garbage collector, through
// the ownerReference. The control plane of `make cluster` has none: run
// examples/gc --delete beside this controller to see it collected.
//
// # How it is wired
//
// An informer factory (one namespace with --namespace, else all) runs an
// informer on Widgets and one on ConfigMaps selected by the owner label.
// Widget events queue the Widget's namespace/name; ConfigMap events —
// including someone else's edit or delete — queue the owning Widget, found
// from the controller reference (or the label). A rate-limited work queue
// (package workqueue) coalesces bursts, hands a key to one worker at a
// time (--workers of them) and retries failures with backoff from 5 ms to
// one minute. Reconciling reads the caches and writes only what differs.
//
// # Writing safely beside other replicas
//
// With --leader-elect only the replica holding the Lease reconciles; its
// election runs on a client of its own, so its renewals never wait behind
// the reconciles' requests. Each write is fenced: right before it, the
// controller checks the Manager's IsLeader, which is false from the moment
// the Lease's renew deadline passes (a replica resumed after a pause, or
// cut off, writes nothing more). The one gap a lease cannot close — a
// process frozen between that check and its write — is closed by
// preconditions: the ConfigMap apply carries the resourceVersion of the
// cached ConfigMap (when there is one), the merge patch that removes keys
// the uid and resourceVersion of the apply's answer, and the status apply
// the resourceVersion of the live Widget it was decided on. A write
// computed from a stale read therefore fails with a Conflict, and the
// Widget is reconciled again on fresh data.
//
// # Running it
//
//	make cluster                      # in one terminal
//	go run ./examples/crd-controller --kubeconfig .cluster/kubeconfig --install-crd
//	kdyn --kubeconfig .cluster/kubeconfig apply -f - <<EOF
//	apiVersion: examples.kdyn.io/v1
//	kind: Widget
//	metadata: {name: web, namespace: default}
//	spec: {data: {color: blue}}
//	EOF
//	kdyn --kubeconfig .cluster/kubeconfig get widgets,configmaps -n default
//
// Flags: --kubeconfig, --context, --namespace, --workers (default 2),
// --install-crd, -v (debug logs), --leader-elect, --metrics-bind-address
// and --metrics-secure (default true: TLS, and /metrics only for bearer
// tokens the API server authorizes for get on /metrics, reviewed with a
// TokenReview and a SubjectAccessReview — the controller needs the
// ClusterRole system:auth-delegator). Logs go to stderr; SIGINT or SIGTERM
// stops it cleanly.
package main
