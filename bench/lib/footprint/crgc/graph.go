package main

// The owner graph of examples/gc (examples/gc/graph.go), unchanged: the
// collector's own data structure, the same in both contenders.

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// node is what the graph knows about one object, by UID.
type node struct {
	uid       types.UID
	gvr       schema.GroupVersionResource // the first resource it was seen in
	gvk       schema.GroupVersionKind     // empty when the resource's kind is unknown
	namespace string
	name      string
	owners    []metav1.OwnerReference
	deleting  bool // metadata.deletionTimestamp is set
	// present holds every resource the object is served by: a few objects
	// are served by two groups (core v1 and events.k8s.io/v1 events share
	// their UIDs), and the node lives while any of them has it.
	present map[schema.GroupVersionResource]struct{}
}

// graph is the controller's view of the cluster: which UIDs exist, and
// which objects name each UID as an owner. It is fed by the resource set's
// events and is safe for concurrent use.
type graph struct {
	// mu guards every field below it.
	mu sync.Mutex
	// nodes holds every object seen, by UID.
	nodes map[types.UID]*node
	// dependents maps an owner UID to the UIDs of the objects naming it in
	// their ownerReferences, whether or not the owner itself was seen.
	dependents map[types.UID]map[types.UID]struct{}
	// byResource maps a resource to the UIDs seen in it, so the objects of
	// a resource that left the set (its CRD was deleted) can be forgotten.
	byResource map[schema.GroupVersionResource]map[types.UID]struct{}
}

func newGraph() *graph {
	return &graph{
		nodes:      map[types.UID]*node{},
		dependents: map[types.UID]map[types.UID]struct{}{},
		byResource: map[schema.GroupVersionResource]map[types.UID]struct{}{},
	}
}

// upsert records obj as served by gvr. It returns the previous owner
// references and deleting state (nil, false for a new node) and whether
// the node is new.
func (g *graph) upsert(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, obj metav1.Object) (oldOwners []metav1.OwnerReference, wasDeleting, added bool) {
	uid := obj.GetUID()
	g.mu.Lock()
	defer g.mu.Unlock()
	n, ok := g.nodes[uid]
	if !ok {
		n = &node{uid: uid, gvr: gvr, gvk: gvk, present: map[schema.GroupVersionResource]struct{}{}}
		g.nodes[uid] = n
	}
	oldOwners, wasDeleting = n.owners, n.deleting
	if n.gvk.Kind == "" {
		n.gvk = gvk
	}
	n.present[gvr] = struct{}{}
	addTo(g.byResource, gvr, uid)
	n.namespace, n.name = obj.GetNamespace(), obj.GetName()
	n.deleting = obj.GetDeletionTimestamp() != nil
	// The informer's object is shared and read-only: copy what we keep.
	refs := obj.GetOwnerReferences()
	n.owners = append([]metav1.OwnerReference(nil), refs...)
	for _, r := range oldOwners {
		removeFrom(g.dependents, r.UID, uid)
	}
	for _, r := range n.owners {
		addTo(g.dependents, r.UID, uid)
	}
	return oldOwners, wasDeleting, !ok
}

// remove forgets that gvr serves uid. It reports whether the object is
// now gone altogether, with the UIDs of its dependents.
func (g *graph) remove(gvr schema.GroupVersionResource, uid types.UID) (gone bool, dependents []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeLocked(gvr, uid)
}

func (g *graph) removeLocked(gvr schema.GroupVersionResource, uid types.UID) (bool, []types.UID) {
	removeFrom(g.byResource, gvr, uid)
	n, ok := g.nodes[uid]
	if !ok {
		return false, nil
	}
	delete(n.present, gvr)
	if len(n.present) > 0 {
		if n.gvr == gvr {
			for other := range n.present {
				n.gvr = other
				break
			}
		}
		return false, nil
	}
	delete(g.nodes, uid)
	for _, r := range n.owners {
		removeFrom(g.dependents, r.UID, uid)
	}
	return true, g.dependentsLocked(uid)
}

// forgetResource drops every object seen in gvr (whose informer stopped
// without telling us about deletions) and returns the dependents of the
// objects that are now gone.
func (g *graph) forgetResource(gvr schema.GroupVersionResource) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []types.UID
	for uid := range g.byResource[gvr] {
		if gone, deps := g.removeLocked(gvr, uid); gone {
			out = append(out, deps...)
		}
	}
	delete(g.byResource, gvr)
	return out
}

// dependentsOf returns the UIDs of the objects naming uid as an owner.
func (g *graph) dependentsOf(uid types.UID) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dependentsLocked(uid)
}

func (g *graph) dependentsLocked(uid types.UID) []types.UID {
	deps := g.dependents[uid]
	out := make([]types.UID, 0, len(deps))
	for d := range deps {
		out = append(out, d)
	}
	return out
}

// get returns a copy of the node for uid.
func (g *graph) get(uid types.UID) (node, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n, ok := g.nodes[uid]
	if !ok {
		return node{}, false
	}
	c := *n
	c.present = nil
	return c, true
}

// withOwners returns the UIDs of every object that has owner references.
func (g *graph) withOwners() []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []types.UID
	for uid, n := range g.nodes {
		if len(n.owners) > 0 {
			out = append(out, uid)
		}
	}
	return out
}

// size returns the number of objects and of owner UIDs with dependents.
func (g *graph) size() (objects, owners int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes), len(g.dependents)
}

func addTo[K comparable](m map[K]map[types.UID]struct{}, k K, uid types.UID) {
	s, ok := m[k]
	if !ok {
		s = map[types.UID]struct{}{}
		m[k] = s
	}
	s[uid] = struct{}{}
}

func removeFrom[K comparable](m map[K]map[types.UID]struct{}, k K, uid types.UID) {
	if s, ok := m[k]; ok {
		delete(s, uid)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}
