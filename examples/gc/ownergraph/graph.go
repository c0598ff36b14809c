package ownergraph

import (
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Node is what the graph knows about one object, as Get hands it out.
type Node struct {
	UID       types.UID
	GVR       schema.GroupVersionResource // the first resource it was seen in
	GVK       schema.GroupVersionKind     // empty when the resource's kind is unknown
	Namespace string
	Name      string
	Owners    []metav1.OwnerReference // shared: read-only
	Deleting  bool                    // metadata.deletionTimestamp is set
}

// resource is one resource of the set, shared by the entries of its
// objects.
type resource struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind // empty until the kind is known
}

// entry is a Node as the graph keeps it, lean because there is one per
// object in the cluster: the resource by reference, the UID only as the
// key.
type entry struct {
	res *resource // the first resource it was seen in
	// also holds the other resources that serve the object, rarely any:
	// a few objects are served by two groups (core v1 and
	// events.k8s.io/v1 events share their UIDs), and the node lives while
	// any of them has it.
	also      []*resource
	namespace string
	name      string
	owners    []metav1.OwnerReference
	deleting  bool
}

// Graph is a garbage collector's view of the cluster: which UIDs exist,
// and which objects name each UID as an owner. It is fed by the events of
// the informers of every resource and is safe for concurrent use.
type Graph struct {
	// mu guards every field below it.
	mu sync.Mutex
	// nodes holds every object seen, by UID.
	nodes map[types.UID]*entry
	// dependents maps an owner UID to the UIDs of the objects naming it in
	// their ownerReferences, whether or not the owner itself was seen (a
	// list: an owner has few dependents, and a map per owner would cost
	// far more).
	dependents map[types.UID][]types.UID
	// resources interns each resource seen.
	resources map[schema.GroupVersionResource]*resource
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{
		nodes:      map[types.UID]*entry{},
		dependents: map[types.UID][]types.UID{},
		resources:  map[schema.GroupVersionResource]*resource{},
	}
}

// resourceLocked interns gvr, recording its kind once known.
func (g *Graph) resourceLocked(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) *resource {
	r, ok := g.resources[gvr]
	if !ok {
		r = &resource{gvr: gvr}
		g.resources[gvr] = r
	}
	if r.gvk.Kind == "" {
		r.gvk = gvk
	}
	return r
}

// Upsert records obj as served by gvr. It returns the previous owner
// references and deleting state (nil, false for a new node) and whether
// the node is new.
func (g *Graph) Upsert(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, obj metav1.Object) (oldOwners []metav1.OwnerReference, wasDeleting, added bool) {
	uid := obj.GetUID()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.resourceLocked(gvr, gvk)
	e, ok := g.nodes[uid]
	if !ok {
		e = &entry{res: r}
		g.nodes[uid] = e
	} else if e.res != r && !slices.Contains(e.also, r) {
		e.also = append(e.also, r)
	}
	oldOwners, wasDeleting = e.owners, e.deleting
	e.namespace, e.name = obj.GetNamespace(), obj.GetName()
	e.deleting = obj.GetDeletionTimestamp() != nil
	// The informer's object is shared and read-only: copy what we keep.
	refs := obj.GetOwnerReferences()
	e.owners = nil
	if len(refs) > 0 {
		e.owners = slices.Clone(refs)
	}
	for _, r := range oldOwners {
		g.removeDependentLocked(r.UID, uid)
	}
	for _, r := range e.owners {
		if !slices.Contains(g.dependents[r.UID], uid) {
			g.dependents[r.UID] = append(g.dependents[r.UID], uid)
		}
	}
	return oldOwners, wasDeleting, !ok
}

// removeDependentLocked forgets that dep names owner.
func (g *Graph) removeDependentLocked(owner, dep types.UID) {
	deps := g.dependents[owner]
	if i := slices.Index(deps, dep); i >= 0 {
		deps = slices.Delete(deps, i, i+1)
	}
	if len(deps) == 0 {
		delete(g.dependents, owner)
	} else {
		g.dependents[owner] = deps
	}
}

// Remove forgets that gvr serves uid. It reports whether the object is
// now gone altogether, with the UIDs of its dependents.
func (g *Graph) Remove(gvr schema.GroupVersionResource, uid types.UID) (gone bool, dependents []types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeLocked(gvr, uid)
}

func (g *Graph) removeLocked(gvr schema.GroupVersionResource, uid types.UID) (bool, []types.UID) {
	e, ok := g.nodes[uid]
	if !ok {
		return false, nil
	}
	switch i := slices.IndexFunc(e.also, func(r *resource) bool { return r.gvr == gvr }); {
	case i >= 0:
		e.also = slices.Delete(e.also, i, i+1)
		return false, nil
	case e.res.gvr != gvr:
		return false, nil // not served by gvr
	case len(e.also) > 0:
		e.res, e.also = e.also[0], e.also[1:]
		return false, nil
	}
	delete(g.nodes, uid)
	for _, r := range e.owners {
		g.removeDependentLocked(r.UID, uid)
	}
	return true, g.dependentsLocked(uid)
}

// ForgetResource drops every object seen in gvr (whose informer stopped
// without telling us about deletions) and returns the dependents of the
// objects that are now gone. It looks at every node: resources leave the
// set rarely (a CRD deleted), and an index by resource would cost memory
// for every object all the time.
func (g *Graph) ForgetResource(gvr schema.GroupVersionResource) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []types.UID
	for uid, e := range g.nodes {
		if e.res.gvr != gvr && !slices.ContainsFunc(e.also, func(r *resource) bool { return r.gvr == gvr }) {
			continue
		}
		if gone, deps := g.removeLocked(gvr, uid); gone {
			out = append(out, deps...)
		}
	}
	return out
}

// DependentsOf returns the UIDs of the objects naming uid as an owner.
func (g *Graph) DependentsOf(uid types.UID) []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dependentsLocked(uid)
}

func (g *Graph) dependentsLocked(uid types.UID) []types.UID {
	return slices.Clone(g.dependents[uid])
}

// Get returns the node of uid.
func (g *Graph) Get(uid types.UID) (Node, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.nodes[uid]
	if !ok {
		return Node{}, false
	}
	return Node{UID: uid, GVR: e.res.gvr, GVK: e.res.gvk, Namespace: e.namespace, Name: e.name, Owners: e.owners, Deleting: e.deleting}, true
}

// WithOwners returns the UIDs of every object that has owner references.
func (g *Graph) WithOwners() []types.UID {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []types.UID
	for uid, e := range g.nodes {
		if len(e.owners) > 0 {
			out = append(out, uid)
		}
	}
	return out
}

// Size returns the number of objects and of owner UIDs with dependents.
func (g *Graph) Size() (objects, owners int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes), len(g.dependents)
}

// String names the object as Kind[.group]/namespace/name (namespace empty
// for a cluster-scoped object), with the resource where the kind is
// unknown.
func (n Node) String() string {
	k := kindName(n.GVK.Group, n.GVK.Kind)
	if n.GVK.Kind == "" {
		k = kindName(n.GVR.Group, n.GVR.Resource)
	}
	return k + "/" + n.Namespace + "/" + n.Name
}

// kindName is "Kind" for the core group, else "Kind.group".
func kindName(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// DescribeRef names an owner reference as Kind[.group]/name uid=UID.
func DescribeRef(r metav1.OwnerReference) string {
	group := ""
	if gv, err := schema.ParseGroupVersion(r.APIVersion); err == nil {
		group = gv.Group
	}
	return kindName(group, r.Kind) + "/" + r.Name + " uid=" + string(r.UID)
}

// DescribeRefs names owner references, comma-separated.
func DescribeRefs(refs []metav1.OwnerReference) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = DescribeRef(r)
	}
	return strings.Join(parts, ", ")
}

// SameOwners compares owner references by the fields a collector reads:
// UID, name, kind and apiVersion, in order.
func SameOwners(a, b []metav1.OwnerReference) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool {
		return x.UID == y.UID && x.Name == y.Name && x.Kind == y.Kind && x.APIVersion == y.APIVersion
	})
}
