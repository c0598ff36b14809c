// Package pods holds the kdyn commands that reach into running pods through
// the API server, as kubectl's do: logs (the pods/log subresource), exec
// and attach (WebSocket v5 with SPDY fallback, package remote),
// port-forward (SPDY portforward.k8s.io) and cp (a tar stream through
// exec), and what they share: picking a pod behind a workload or service
// and a container in it, with kubectl's ranking and messages.
// AttachOptions, WaitPod and Logs serve run --attach and debug --attach
// (packages generate and debug): wait for the created pod or container,
// print its log so far, attach, and fall back to the log when the attach
// fails, as kubectl does.
package pods
