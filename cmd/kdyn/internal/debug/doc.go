// Package debug is "kdyn debug", kubectl debug (v1.37) on the dynamic
// client: a pod's objects are unstructured maps throughout.
//
// # What is created
//
// For a pod (NAME, pod/NAME or -f), an ephemeral container is added with a
// strategic merge patch of the pod's ephemeralcontainers subresource, the
// bytes kubectl's two-way merge patch gives: {"spec":{"ephemeralContainers":
// [the new container]}}, with "$setElementOrder/ephemeralContainers" (every
// container's name, in order) when the pod had ephemeral containers
// already. With --copy-to a copy of the pod is created instead (its name,
// namespace, labels, annotations and spec; no ephemeral containers, no
// node unless --same-node), with a debug container added or the container
// -c changed; --replace then deletes the pod. For a node (node/NAME), a
// pod node-debugger-NAME-xxxxx is created on it in the current namespace,
// labelled app.kubernetes.io/managed-by=kubectl-debug, tolerating every
// taint.
//
// # Profiles
//
// --profile changes the debug container and the pod as kubectl's profiles
// do for each way of debugging (ephemeral container, copy, node):
// general (the default: SYS_PTRACE for pods; host namespaces, the host's
// root at /host and no security context for a node; a copy drops what the
// --keep-* flags do not keep and shares its process namespace), baseline,
// restricted, netadmin, sysadmin and the deprecated legacy. --custom is a
// partial container (JSON or YAML) read as kubectl reads it into a typed
// Container (unknown members and empty values dropped) and merged into
// the debug container as a strategic merge patch of a Container merges:
// env, ports, volumeMounts and volumeDevices by their keys, other lists
// replaced, maps merged.
//
// # Attaching
//
// With --attach (implied by -i) debug waits for the debug container's
// status to say it runs or has ended, then attaches through package pods
// as kdyn attach does (an ended container's log is printed instead, and a
// failed attach falls back to the log with a warning).
//
// # Differences from kubectl
//
// --env is added sorted by
// name, where kubectl's order is random. Writes record the field manager
// "kubectl", the name the server gives kubectl's (which sends none).
package debug
