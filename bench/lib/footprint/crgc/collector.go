package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/kdyn/kdyn/examples/gc/ownergraph"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// errOwnerNotObserved makes the queue retry a dependent, with backoff,
// whose owner exists on the server but is not in the cache yet.
var errOwnerNotObserved = errors.New("crgc: an owner exists but is not in the cache yet")

// Limits and periods, as examples/gc's.
const (
	// maxAbsent bounds the absent-owner cache; it is emptied when full.
	maxAbsent = 10000
	// refreshInterval is how often discovery is read again without a CRD
	// event (kdyn's informer.DefaultRefreshInterval).
	refreshInterval = 30 * time.Second
)

var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

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
// cluster-scoped owner).
type absentKey struct {
	namespace string
	uid       types.UID
}

// resource is one resource discovery offers: its preferred version's
// resource and kind.
type resource struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
}

// trackedSource is a source.Kind that also tells when the controller has
// started it, so that the sync report can wait for it.
type trackedSource struct {
	source.TypedSyncingSource[types.UID]
	started chan struct{}
}

// Start starts the source (the controller calls it).
func (s *trackedSource) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[types.UID]) error {
	defer close(s.started)
	return s.TypedSyncingSource.Start(ctx, q)
}

// waitForSync waits until the controller has started the source and its
// informer and handler have synced.
func (s *trackedSource) waitForSync(ctx context.Context) error {
	select {
	case <-s.started:
	case <-ctx.Done():
		return nil
	}
	return s.WaitForSync(ctx)
}

// collector is the reconciler: informer events feed the owner graph, and
// Reconcile checks one dependent by UID.
type collector struct {
	graph   *ownergraph.Graph
	reader  client.Reader // live reads (the API server, not the cache)
	client  client.Client
	mapper  meta.RESTMapper
	cache   cache.Cache
	disco   discovery.DiscoveryInterface
	ctrl    controller.TypedController[types.UID]
	events  recorder.EventRecorder
	delete  bool
	log     logr.Logger
	requeue chan event.TypedGenericEvent[types.UID]
	// crdChanged is signalled by CRD events: discovery is read again.
	crdChanged chan struct{}

	// outMu serializes lines on out.
	outMu sync.Mutex
	out   io.Writer

	// mu guards watched, absent and reported.
	mu sync.Mutex
	// watched holds the resources whose informers the controller watches.
	watched map[schema.GroupVersionResource]resource
	// absent remembers owners found absent by a live GET.
	absent map[absentKey]struct{}
	// reported holds the orphans already printed in report mode.
	reported map[types.UID]struct{}
}

func newCollector(reader client.Reader, cl client.Client, m meta.RESTMapper, ca cache.Cache, disco discovery.DiscoveryInterface, del bool, out io.Writer, log logr.Logger) *collector {
	return &collector{
		graph: ownergraph.New(), reader: reader, client: cl, mapper: m, cache: ca, disco: disco, delete: del, out: out, log: log,
		requeue:    make(chan event.TypedGenericEvent[types.UID], 1024),
		crdChanged: make(chan struct{}, 1),
		watched:    map[schema.GroupVersionResource]resource{},
		absent:     map[absentKey]struct{}{},
		reported:   map[types.UID]struct{}{},
	}
}

// discover returns every resource, at its preferred version, that supports
// list, watch and delete. Groups that fail discovery are logged and left
// out this time.
func (c *collector) discover() ([]resource, error) {
	lists, err := c.disco.ServerPreferredResources()
	if err != nil {
		if !discovery.IsGroupDiscoveryFailedError(err) || len(lists) == 0 {
			return nil, err
		}
		c.log.Info("discovery failed for some groups; keeping the resources already watched", "error", err)
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "watch", "delete"}}, lists)
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			out = append(out, resource{gvr: gv.WithResource(r.Name), gvk: gv.WithKind(r.Kind)})
		}
	}
	return out, nil
}

// resourceCount returns the number of resources watched.
func (c *collector) resourceCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.watched)
}

// metadataOf returns an empty PartialObjectMetadata of kind gvk: what the
// cache and the clients take to work on metadata only.
func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// watch makes the controller watch r's metadata through the manager's
// cache, with a handler that feeds the graph.
func (c *collector) watch(r resource) (*trackedSource, error) {
	s := &trackedSource{
		TypedSyncingSource: source.TypedKind(c.cache, metadataOf(r.gvk), c.handlerFor(r)),
		started:            make(chan struct{}),
	}
	c.mu.Lock()
	c.watched[r.gvr] = r
	c.mu.Unlock()
	if err := c.ctrl.Watch(s); err != nil {
		c.mu.Lock()
		delete(c.watched, r.gvr)
		c.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// handlerFor returns the event handler of r's informer. It only updates
// the graph and queues UIDs, so it never blocks. (With the priority queue,
// controller-runtime's default, what the initial list queues goes behind
// real changes.)
func (c *collector) handlerFor(r resource) handler.TypedEventHandler[*metav1.PartialObjectMetadata, types.UID] {
	type queue = workqueue.TypedRateLimitingInterface[types.UID]
	return handler.TypedFuncs[*metav1.PartialObjectMetadata, types.UID]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*metav1.PartialObjectMetadata], q queue) {
			c.upsert(r, e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*metav1.PartialObjectMetadata], q queue) {
			c.upsert(r, e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[*metav1.PartialObjectMetadata], q queue) {
			if e.Object == nil {
				return
			}
			if r.gvk.GroupKind() == crdGroupKind {
				c.kickDiscovery()
			}
			uid := e.Object.GetUID()
			gone, deps := c.graph.Remove(r.gvr, uid)
			if !gone {
				return
			}
			c.forgetReported(uid)
			for _, d := range deps {
				q.Add(d)
			}
		},
	}
}

// upsert records an added or changed object and queues what must be
// checked.
func (c *collector) upsert(r resource, obj *metav1.PartialObjectMetadata, q workqueue.TypedRateLimitingInterface[types.UID]) {
	if r.gvk.GroupKind() == crdGroupKind {
		c.kickDiscovery()
	}
	uid := obj.GetUID()
	oldOwners, wasDeleting, added := c.graph.Upsert(r.gvr, r.gvk, obj)
	if added {
		// Dependents that were waiting for this owner to be observed.
		for _, d := range c.graph.DependentsOf(uid) {
			q.Add(d)
		}
	}
	owners := obj.GetOwnerReferences()
	changed := !ownergraph.SameOwners(oldOwners, owners)
	if changed {
		c.forgetReported(uid)
	}
	if len(owners) > 0 && (added || changed || wasDeleting != (obj.GetDeletionTimestamp() != nil)) {
		q.Add(uid)
	}
}

func (c *collector) kickDiscovery() {
	select {
	case c.crdChanged <- struct{}{}:
	default:
	}
}

// follow reads discovery again on CRD events and every refreshInterval —
// watching new resources, removing the informers of resources that left
// and forgetting their objects — and queues every dependent again each
// resync period, until ctx is done.
func (c *collector) follow(ctx context.Context, resync time.Duration) {
	refresh := time.NewTicker(refreshInterval)
	defer refresh.Stop()
	full := time.NewTicker(resync)
	defer full.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-full.C:
			c.enqueue(ctx, c.graph.WithOwners())
		case <-c.crdChanged:
			// Coalesce a burst of CRD events.
			time.Sleep(50 * time.Millisecond)
			select {
			case <-c.crdChanged:
			default:
			}
			c.refresh(ctx)
		case <-refresh.C:
			c.refresh(ctx)
		}
	}
}

// refresh brings the watched resources in step with discovery.
func (c *collector) refresh(ctx context.Context) {
	resources, err := c.discover()
	if err != nil {
		c.log.Info("discovery failed; keeping the resources already watched", "error", err)
		return
	}
	want := map[schema.GroupVersionResource]resource{}
	for _, r := range resources {
		want[r.gvr] = r
	}
	c.mu.Lock()
	var gone []resource
	for gvr, r := range c.watched {
		if _, ok := want[gvr]; !ok {
			gone = append(gone, r)
		}
	}
	var added []resource
	for gvr, r := range want {
		if _, ok := c.watched[gvr]; !ok {
			added = append(added, r)
		}
	}
	c.mu.Unlock()
	for _, r := range gone {
		if err := c.cache.RemoveInformer(ctx, metadataOf(r.gvk)); err != nil {
			c.log.Info("cannot remove the informer of a resource that left", "resource", r.gvr.String(), "error", err)
			continue
		}
		c.mu.Lock()
		delete(c.watched, r.gvr)
		c.mu.Unlock()
		deps := c.graph.ForgetResource(r.gvr)
		c.log.V(4).Info("resource left the set", "gvr", r.gvr.String(), "dependents", len(deps))
		c.enqueue(ctx, deps)
	}
	for _, r := range added {
		if _, err := c.watch(r); err != nil {
			c.log.Info("not watching a resource; retried at the next refresh", "resource", r.gvr.String(), "error", err)
		}
	}
}

// enqueue queues uids through the controller's channel source.
func (c *collector) enqueue(ctx context.Context, uids []types.UID) {
	for _, uid := range uids {
		select {
		case c.requeue <- event.TypedGenericEvent[types.UID]{Object: uid}:
		case <-ctx.Done():
			return
		}
	}
}

// Reconcile checks one dependent: when every owner reference points to an
// object that is gone, it reports or deletes the dependent. An error makes
// the queue retry it with backoff.
func (c *collector) Reconcile(ctx context.Context, uid types.UID) (reconcile.Result, error) {
	n, ok := c.graph.Get(uid)
	if !ok || len(n.Owners) == 0 || n.Deleting {
		return reconcile.Result{}, nil
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
		return reconcile.Result{}, nil
	}
	// The cache may lag: read the dependent itself, then each owner.
	live := metadataOf(n.GVK)
	err := c.reader.Get(ctx, client.ObjectKey{Namespace: n.Namespace, Name: n.Name}, live)
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil // its delete event will come
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get dependent %s: %w", n.String(), err)
	case live.UID != uid || live.DeletionTimestamp != nil || len(live.OwnerReferences) == 0:
		return reconcile.Result{}, nil
	}
	live.SetGroupVersionKind(n.GVK)
	var gone []metav1.OwnerReference
	waiting := false
	for _, ref := range live.OwnerReferences {
		st, err := c.ownerState(ctx, n, ref)
		if err != nil {
			return reconcile.Result{}, err
		}
		switch st {
		case ownerAbsent:
			gone = append(gone, ref)
		case ownerAliveUnobserved:
			waiting = true
		case ownerUnresolvable:
			c.log.V(1).Info("owner kind not served; leaving the dependent alone", "dependent", n.String(), "owner", ownergraph.DescribeRef(ref))
			return reconcile.Result{}, nil
		case ownerInvalid:
			c.log.Info("cluster-scoped object has a namespaced owner, which is invalid; leaving it alone", "dependent", n.String(), "owner", ownergraph.DescribeRef(ref))
			return reconcile.Result{}, nil
		}
	}
	if len(gone) < len(live.OwnerReferences) {
		if waiting {
			return reconcile.Result{}, errOwnerNotObserved
		}
		return reconcile.Result{}, nil
	}
	line := fmt.Sprintf("%s (owners gone: %s)", n.String(), ownergraph.DescribeRefs(gone))
	if !c.delete {
		if c.markReported(uid) {
			c.println("orphan " + line)
			c.events.Eventf(live, nil, corev1.EventTypeWarning, "Orphaned", "Report", "every owner is gone: %s", ownergraph.DescribeRefs(gone))
		}
		return reconcile.Result{}, nil
	}
	// Only the object we looked at, unchanged since: a new owner added
	// meanwhile makes the delete fail with a conflict, and the retry
	// looks again.
	err = c.client.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &uid, ResourceVersion: &live.ResourceVersion})
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("delete %s: %w", n.String(), err)
	}
	c.println("deleted " + line)
	c.events.Eventf(live, nil, corev1.EventTypeNormal, "OrphanDeleted", "Delete", "deleted: every owner is gone: %s", ownergraph.DescribeRefs(gone))
	return reconcile.Result{}, nil
}

// observed reports whether the cache holds the owner ref points to, with
// the kind, name and UID it names, and in a namespace the dependent may
// refer to.
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
// for a namespaced kind.
func (c *collector) ownerState(ctx context.Context, dep ownergraph.Node, ref metav1.OwnerReference) (ownerState, error) {
	if c.observed(dep, ref) {
		return ownerAlive, nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ownerUnresolvable, nil
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	m, err := c.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		// The reference's version may be gone while the kind is served
		// at another one.
		m, err = c.mapper.RESTMapping(gk)
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
	o := metadataOf(m.GroupVersionKind)
	err = c.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, o)
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
	if c.observed(dep, ref) {
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
