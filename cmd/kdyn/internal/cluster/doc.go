// Package cluster holds the kdyn commands that look at the cluster as a
// whole rather than at chosen objects: cluster-info (the control plane's
// address and the kube-system services labelled
// kubernetes.io/cluster-service=true), cluster-info dump (nodes, and per
// namespace the events, replication controllers, services, daemon sets,
// deployments, replica sets and pods, with every pod container's log, to
// standard output or to a directory tree), and top node and top pod (the
// metrics.k8s.io API's NodeMetrics and PodMetrics, read through the
// dynamic client, against node allocatable or capacity).
//
// Each prints what kubectl v1.37 prints, byte for byte where kubectl's
// output is deterministic: cluster-info dump -o json keeps the server's
// member order (kubectl prints the typed lists it decodes, in their Go
// structs' order, which is the order the server writes; it reads them as
// protocol buffers, so an empty list's items are null), and top lays out
// its tables as kubectl's tab writer does (remembering column widths past
// a short row), with its sorting (sort.Sort over the same order, with the
// same comparisons, so ties fall the same way), its truncated percentages
// and its "<unknown>" cells.
//
//	root.AddCommand(cluster.NewClusterInfoCommand(f), cluster.NewTopCommand(f))
package cluster
