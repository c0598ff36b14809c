// Package ownergraph is the owner graph of the example garbage collector
// (examples/gc): every object by UID — its resource, kind, namespace, name,
// owner references and deletion state — and, for every UID named as an
// owner, the objects naming it. One graph across all resources, because an
// owner and its dependents live in different informers and "does this UID
// still exist, anywhere?" needs all of them at once.
//
// It is kept lean, one small entry per object in the cluster, and it is a
// package of its own so that bench/'s gc scenario runs the same graph in
// the same collector written on controller-runtime.
package ownergraph
