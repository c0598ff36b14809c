// Package pods holds the kdyn commands that reach into running pods through
// the API server, as kubectl's do: logs (the pods/log subresource), and
// the helpers they share to pick a pod behind a workload or service and a
// container in it, with kubectl's ranking and messages.
package pods
