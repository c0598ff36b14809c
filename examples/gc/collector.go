package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/examples/gc/ownergraph"
	"github.com/kdyn/kdyn/informer"
)

// errOwnerNotObserved makes the queue retry a dependent, with backoff,
// whose owner exists on the server but is not in the cache yet: its
// informer may still be listing, and if the owner is deleted before it is
// ever cached no delete event will tell us.
var errOwnerNotObserved = errors.New("gc: an owner exists but is not in the cache yet")

// maxAbsent bounds the absent-owner cache; it is emptied when full.
const maxAbsent = 10000

// ownerState is what a live check found out about one owner reference.
type ownerState int

const (
	ownerAlive           ownerState = iota // exists, and the cache has it
	ownerAliveUnobserved                   // exists, the cache does not have it yet
	ownerAbsent                            // no object of that kind, name and UID where it must be
	ownerUnresolvable                      // the kind is not served (or the apiVersion is malformed)
	ownerInvalid                           // a namespaced owner of a cluster-scoped object
)

// absentKey names an owner UID looked up in one namespace ("" for a
// cluster-scoped owner). UIDs are never reused, so a UID absent from a
// namespace stays absent.
type absentKey struct {
	namespace string
	uid       types.UID
}

// mapper is what the collector needs of a REST mapper.
type mapper interface {
	RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
}

// adder is where the collector queues dependents to check: the
// controller.
type adder interface {
	Add(uid types.UID)
}

// collector turns the resource set's events into the owner graph and
// checks dependents from the work queue.
type collector struct {
	graph  *ownergraph.Graph
	meta   *dynamic.MetadataClient
	mapper mapper
	queue  adder
	delete bool
	log    logr.Logger
	// shard, when sharded, holds the namespaces this replica checks.
	shard *informer.Shard
	// leading reports whether this replica may act now: with leader
	// election, whether it leads with a fresh Lease (nil: always).
	leading func() bool
	// events records an Event for each orphan reported or deleted.
	events events.EventRecorder

	// outMu serializes lines on out.
	outMu sync.Mutex
	out   io.Writer

	// mu guards kinds, absent and reported.
	mu sync.Mutex
	// kinds maps each resource of the set to its kind, recorded by keep.
	kinds map[schema.GroupVersionResource]schema.GroupVersionKind
	// absent remembers owners found absent by a live GET.
	absent map[absentKey]struct{}
	// reported holds the orphans already printed in report mode, so a
	// resync does not print them again.
	reported map[types.UID]struct{}
}

func newCollector(md *dynamic.MetadataClient, m mapper, del bool, sh *informer.Shard, out io.Writer, log logr.Logger) *collector {
	return &collector{
		graph: ownergraph.New(), meta: md, mapper: m, delete: del, shard: sh, out: out, log: log, events: events.Discard,
		kinds:    map[schema.GroupVersionResource]schema.GroupVersionKind{},
		absent:   map[absentKey]struct{}{},
		reported: map[types.UID]struct{}{},
	}
}

// keep is the resource set's filter: every resource that can be listed,
// watched and deleted. It also records each kept resource's kind, since
// metadata-only objects do not carry theirs.
func (c *collector) keep(r *discovery.Resource) bool {
	if !r.HasVerbs("list", "watch", "delete") {
		return false
	}
	c.mu.Lock()
	c.kinds[r.GVR()] = r.GVK()
	c.mu.Unlock()
	return true
}

func (c *collector) kindOf(gvr schema.GroupVersionResource) schema.GroupVersionKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[gvr]
}

// keys maps a resource set's event to the dependents to check (the
// controller's WatchesSet queues them): it keeps the owner graph in step
// and returns the object itself when it has owners and they (or its
// deletion) changed, and the dependents of an owner that appeared (they
// may have been waiting for it to be observed) or left. It never blocks.
func (c *collector) keys(e informer.Event) []types.UID {
	uid := e.Object.GetUID()
	switch e.Type {
	case watch.Added, watch.Modified:
		oldOwners, wasDeleting, added := c.graph.Upsert(e.GVR, c.kindOf(e.GVR), e.Object)
		var keys []types.UID
		if added {
			// Dependents that were waiting for this owner to be observed.
			keys = c.graph.DependentsOf(uid)
		}
		owners := e.Object.GetOwnerReferences()
		changed := !ownergraph.SameOwners(oldOwners, owners)
		if changed {
			c.forgetReported(uid)
		}
		if len(owners) > 0 && (added || changed || wasDeleting != (e.Object.GetDeletionTimestamp() != nil)) {
			keys = append(keys, uid)
		}
		return keys
	case watch.Deleted:
		gone, deps := c.graph.Remove(e.GVR, uid)
		if !gone {
			return nil
		}
		c.forgetReported(uid)
		return deps
	}
	return nil
}

// owns reports whether this replica checks uid: always unsharded; sharded,
// when its namespace is in the replica's share and the member's Lease is
// fresh (informer.Shard.HoldsValue).
func (c *collector) owns(uid types.UID) bool {
	if c.shard == nil {
		return true
	}
	n, ok := c.graph.Get(uid)
	return ok && c.shard.HoldsValue(n.Namespace)
}

// mayAct is the fence checked right before a delete: this replica leads
// (with leader election) and holds the namespace's range (sharded), each
// with a Lease fresh enough that no other replica can have taken over.
// The one gap no lease closes — a process frozen between this check and
// the delete — is closed by the delete's preconditions.
func (c *collector) mayAct(namespace string) bool {
	if c.leading != nil && !c.leading() {
		return false
	}
	return c.shard == nil || c.shard.HoldsValue(namespace)
}

// forgetResource drops the objects of a resource that left the set and
// queues their dependents.
func (c *collector) forgetResource(gvr schema.GroupVersionResource) {
	deps := c.graph.ForgetResource(gvr)
	c.mu.Lock()
	delete(c.kinds, gvr)
	c.mu.Unlock()
	for _, d := range deps {
		c.queue.Add(d)
	}
	c.log.V(4).Info("resource left the set", "gvr", gvr.String(), "dependents", len(deps))
}

// resync queues every object that has owners.
func (c *collector) resync() {
	uids := c.graph.WithOwners()
	for _, uid := range uids {
		c.queue.Add(uid)
	}
	objects, owners := c.graph.Size()
	c.log.V(4).Info("resync", "objects", objects, "ownerUIDs", owners, "queued", len(uids))
}

// process checks one dependent: when every owner reference points to an
// object that is gone, it reports or deletes the dependent. An error makes
// the queue retry it with backoff.
func (c *collector) process(ctx context.Context, uid types.UID) error {
	n, ok := c.graph.Get(uid)
	if !ok || len(n.Owners) == 0 || n.Deleting {
		return nil
	}
	// Fast path, no request: the cache has every owner, where it must be.
	all := true
	for _, ref := range n.Owners {
		if !c.observed(n, ref) {
			all = false
			break
		}
	}
	if all {
		return nil
	}
	// The cache may lag: read the dependent itself, then each owner.
	live, err := c.meta.Resource(n.GVR).Namespace(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil // its delete event will come
	case err != nil:
		return fmt.Errorf("get dependent %s: %w", n.String(), err)
	case live.UID != uid || live.DeletionTimestamp != nil || len(live.OwnerReferences) == 0:
		return nil
	}
	var gone []metav1.OwnerReference
	waiting := false
	for _, ref := range live.OwnerReferences {
		st, err := c.ownerState(ctx, n, ref)
		if err != nil {
			return err
		}
		switch st {
		case ownerAbsent:
			gone = append(gone, ref)
		case ownerAliveUnobserved:
			waiting = true
		case ownerUnresolvable:
			// Like Kubernetes' collector: an owner whose kind cannot be
			// resolved might exist; leave the dependent alone. The next
			// resync looks again.
			c.log.V(1).Info("owner kind not served; leaving the dependent alone", "dependent", n.String(), "owner", ownergraph.DescribeRef(ref))
			return nil
		case ownerInvalid:
			c.log.Info("cluster-scoped object has a namespaced owner, which is invalid; leaving it alone", "dependent", n.String(), "owner", ownergraph.DescribeRef(ref))
			return nil
		}
	}
	if len(gone) < len(live.OwnerReferences) {
		if waiting {
			return errOwnerNotObserved
		}
		return nil
	}
	line := fmt.Sprintf("%s (owners gone: %s)", n.String(), ownergraph.DescribeRefs(gone))
	ref := events.ReferenceFor(live, n.GVK)
	if !c.delete {
		if c.markReported(uid) {
			c.println("orphan " + line)
			c.record(ref, events.Warning, "Orphaned", "Report", "every owner is gone: %s", ownergraph.DescribeRefs(gone))
		}
		return nil
	}
	if !c.mayAct(n.Namespace) {
		return nil // another replica's now: it checks the dependent itself
	}
	bg := metav1.DeletePropagationBackground
	err = c.meta.Resource(n.GVR).Namespace(n.Namespace).Delete(ctx, n.Name, metav1.DeleteOptions{
		PropagationPolicy: &bg,
		// Only the object we looked at, unchanged since: a new owner added
		// meanwhile (or a replica that acted while this one was frozen
		// after its fence check) makes the delete fail with a conflict,
		// and the retry looks again.
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &live.ResourceVersion},
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("delete %s: %w", n.String(), err)
	}
	c.println("deleted " + line)
	c.record(ref, events.Normal, "OrphanDeleted", "Delete", "deleted: every owner is gone: %s", ownergraph.DescribeRefs(gone))
	return nil
}

// record writes an Event about a dependent, when the collector has a
// recorder.
func (c *collector) record(ref events.Reference, eventType, reason, action, note string, args ...any) {
	c.events.Eventf(ref, nil, eventType, reason, action, note, args...)
}

// observed reports whether the cache holds the owner ref points to, with
// the kind, name and UID it names, and in a namespace the dependent may
// refer to (a namespaced owner must share the dependent's namespace).
func (c *collector) observed(dep ownergraph.Node, ref metav1.OwnerReference) bool {
	o, ok := c.graph.Get(ref.UID)
	if !ok || o.Name != ref.Name || o.GVK.Kind != ref.Kind {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != o.GVK.Group {
		return false
	}
	return o.Namespace == "" || o.Namespace == dep.Namespace
}

// ownerState finds out, with a live GET, whether ref's owner exists: an
// object of its kind and name, with its UID, in the dependent's namespace
// for a namespaced kind. As in Kubernetes, a reference to an owner in
// another namespace is therefore dangling.
func (c *collector) ownerState(ctx context.Context, dep ownergraph.Node, ref metav1.OwnerReference) (ownerState, error) {
	if c.observed(dep, ref) {
		return ownerAlive, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ownerUnresolvable, nil
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	m, err := c.mapper.RESTMappingWithContext(ctx, gk, gv.Version)
	if meta.IsNoMatchError(err) {
		// The reference's version may be gone while the kind is served
		// at another one: objects are the same at every version.
		m, err = c.mapper.RESTMappingWithContext(ctx, gk)
	}
	switch {
	case meta.IsNoMatchError(err):
		return ownerUnresolvable, nil
	case err != nil:
		return 0, fmt.Errorf("map owner %s: %w", ownergraph.DescribeRef(ref), err)
	}
	ns := ""
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if dep.Namespace == "" {
			return ownerInvalid, nil
		}
		ns = dep.Namespace
	}
	key := absentKey{namespace: ns, uid: ref.UID}
	if c.isAbsent(key) {
		return ownerAbsent, nil
	}
	o, err := c.meta.Resource(m.Resource).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.addAbsent(key)
		return ownerAbsent, nil
	case err != nil:
		return 0, fmt.Errorf("get owner %s: %w", ownergraph.DescribeRef(ref), err)
	case o.UID != ref.UID:
		// Same name, another object: the owner was deleted and recreated.
		c.addAbsent(key)
		return ownerAbsent, nil
	}
	if c.observed(dep, ref) || (c.shard != nil && !c.shard.ContainsValue(ns)) {
		// Cached, or alive in another replica's share (a cluster-scoped
		// owner, when sharded by namespace).
		return ownerAlive, nil
	}
	return ownerAliveUnobserved, nil
}

func (c *collector) isAbsent(k absentKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.absent[k]
	return ok
}

func (c *collector) addAbsent(k absentKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.absent) >= maxAbsent {
		clear(c.absent)
	}
	c.absent[k] = struct{}{}
}

// markReported records uid as reported; it returns false if it already was.
func (c *collector) markReported(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.reported[uid]; ok {
		return false
	}
	c.reported[uid] = struct{}{}
	return true
}

func (c *collector) forgetReported(uid types.UID) {
	c.mu.Lock()
	delete(c.reported, uid)
	c.mu.Unlock()
}

func (c *collector) println(s string) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	fmt.Fprintln(c.out, s)
}
