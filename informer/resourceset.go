package informer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/restmapper"
)

// DefaultRefreshInterval is how often a ResourceSet re-reads discovery
// without being told that a CRD changed.
const DefaultRefreshInterval = 30 * time.Second

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Event is one change in a ResourceSet, tagged with its resource.
type Event struct {
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type watch.EventType
	// GVR is the resource the object belongs to.
	GVR schema.GroupVersionResource
	// Resource is what discovery said about it: kind, scope, verbs, …
	// (shared; read-only).
	Resource *discovery.Resource
	// Object is the object (for Deleted, as deleted or as last seen):
	// *metav1.PartialObjectMetadata by default, *unstructured.Unstructured
	// with ResourceSetOptions.FullObjects. Read-only.
	Object metav1.Object
	// Old is the previous version, for Modified.
	Old metav1.Object
	// InInitialList marks Added events of an informer's first list.
	InInitialList bool
	// FinalStateUnknown marks Deleted events inferred from a relist, or
	// sent because the resource itself left the set (ResourceGone).
	FinalStateUnknown bool
	// ShardMove marks Deleted events of objects that left the set's Shard
	// (ResourceSetOptions.Informer.Shard): another shard has them now.
	ShardMove bool
	// ResourceGone marks the Deleted events sent for every cached object of
	// a resource that left the set (its CRD was deleted, or it no longer
	// matches Keep), just before its informer is released.
	ResourceGone bool
}

// ResourceSetOptions configure a ResourceSet.
type ResourceSetOptions struct {
	// Keep selects resources (at their preferred version). Nil means every
	// resource that supports list and watch.
	Keep func(*discovery.Resource) bool
	// FullObjects caches whole objects instead of metadata only.
	FullObjects bool
	// Informer options for every member (namespace, selectors).
	Informer InformerOptions
	// Handler receives every event of every member. It is called from each
	// member's own goroutine: concurrently across resources, in order within
	// one resource. It must not block for long.
	Handler func(Event)
	// RefreshInterval: see DefaultRefreshInterval.
	RefreshInterval time.Duration
	// OnDiscoveryError receives discovery failures (including partial ones);
	// the set keeps what it has and retries at the next refresh.
	OnDiscoveryError func(error)
	// OnSyncError, when set, makes WaitForSync tolerate members that cannot
	// sync, as an "every resource" controller must (some resources it may
	// not list, an aggregated API that is down): a member whose listing is
	// forbidden or not served, or that has not synced SyncTimeout after it
	// started, is reported here once (a *SyncError) and left out, and
	// WaitForSync returns once every other member has synced. The member
	// keeps trying and its events flow once it syncs. Nil: WaitForSync
	// fails at once on a forbidden or unserved member, and waits for the
	// others as long as its context lasts.
	OnSyncError func(error)
	// SyncTimeout is how long a member may take to sync before
	// OnSyncError gives up waiting for it; zero means no limit. It applies
	// only with OnSyncError.
	SyncTimeout time.Duration
	// Logger receives debug logs (logr: V(1) and above); the zero value
	// logs nothing.
	Logger logr.Logger
}

// ResourceSet keeps one informer per resource for "every resource" that
// matches a filter, as the garbage collector and namespace controller
// need: it re-reads discovery when a CRD is created, changed or deleted
// (it watches customresourcedefinitions), when one of its informers is
// answered 404, and every RefreshInterval; it starts informers for new
// resources and releases those whose resource is gone. Group-versions
// that fail discovery are reported and retried; their informers keep
// running meanwhile. A custom resource that discovery lacks while its CRD
// is still there (not being deleted) keeps its informer: a server that
// restarts lists its own groups before it serves custom resources again,
// and releasing them would deliver a ResourceGone delete for each of
// their objects and list them all again.
type ResourceSet struct {
	f      *Factory
	mapper *restmapper.Mapper
	opts   ResourceSetOptions
	log    logr.Logger

	trigger chan struct{}
	// handlers are Options.Handler and those AddHandler added; running
	// is set by Run, after which none may be added. handlersMu guards both.
	handlersMu sync.Mutex
	handlers   []func(Event)
	running    bool
	// crds is the set's cache of CustomResourceDefinitions (set by Run).
	crds atomic.Pointer[Informer[*metav1.PartialObjectMetadata]]

	// mu guards members and excused.
	mu      sync.Mutex
	members map[schema.GroupVersionResource]*member
	// excused holds the members OnSyncError was told of, which WaitForSync
	// no longer waits for.
	excused map[schema.GroupVersionResource]bool
}

type member struct {
	// ns is the namespace the member's informer watches ("" for all).
	ns string
	// started is when the set started the member.
	started time.Time
	synced  func() bool
	// lastErr returns the informer's last error and its number.
	lastErr func() (uint64, error)
	// seenErr is the number of the last error memberGone looked at.
	seenErr uint64
	givenUp func() error
	remove  func()
	// drain delivers a Deleted event for every cached object.
	drain func()
}

// NewResourceSet returns a set that creates its informers with f and
// finds resources with mapper.
func NewResourceSet(f *Factory, mapper *restmapper.Mapper, opts ResourceSetOptions) *ResourceSet {
	if opts.Keep == nil {
		opts.Keep = restmapper.SupportsVerbs("list", "watch")
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = DefaultRefreshInterval
	}
	log := opts.Logger
	s := &ResourceSet{f: f, mapper: mapper, opts: opts, log: log, trigger: make(chan struct{}, 1), members: map[schema.GroupVersionResource]*member{}}
	if opts.Handler != nil {
		s.handlers = append(s.handlers, opts.Handler)
	}
	return s
}

// AddHandler adds a handler that receives every event of every member, as
// ResourceSetOptions.Handler does (after it, and after handlers added
// before). Handlers are added before Run: AddHandler returns an error once
// the set runs, since the handler would miss the initial lists.
func (s *ResourceSet) AddHandler(h func(Event)) error {
	if h == nil {
		return errors.New("informer: ResourceSet.AddHandler: nil handler")
	}
	s.handlersMu.Lock()
	defer s.handlersMu.Unlock()
	if s.running {
		return errors.New("informer: ResourceSet.AddHandler after Run: add handlers before the set runs, so they see the initial lists")
	}
	s.handlers = append(s.handlers, h)
	return nil
}

// Run keeps the set in step with discovery until ctx is done, then
// releases its informers and returns. The factory's Run must run too, for
// at least as long: it runs the informers the set takes from it.
func (s *ResourceSet) Run(ctx context.Context) error {
	s.handlersMu.Lock()
	s.running = true
	s.handlersMu.Unlock()
	crds := s.f.ForResourceMetadata(crdGVR, InformerOptions{AllNamespaces: true})
	s.crds.Store(crds)
	reg, err := crds.AddEventHandler(HandlerFuncs[*metav1.PartialObjectMetadata]{
		AddFunc:    func(_ *metav1.PartialObjectMetadata, initial bool) { s.kick() },
		UpdateFunc: func(_, _ *metav1.PartialObjectMetadata) { s.kick() },
		DeleteFunc: func(Deleted[*metav1.PartialObjectMetadata]) { s.kick() },
	})
	if err != nil {
		return err
	}
	defer reg.Remove()
	t := time.NewTimer(0)
	defer t.Stop()
	check := time.NewTicker(time.Second)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			s.releaseAll()
			return nil
		case <-check.C:
			if !s.memberGone() {
				continue
			}
		case <-t.C:
		case <-s.trigger:
			// Coalesce a burst of CRD events.
			time.Sleep(50 * time.Millisecond)
			select {
			case <-s.trigger:
			default:
			}
		}
		s.sync(ctx)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(s.opts.RefreshInterval)
	}
}

func (s *ResourceSet) kick() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// Resources returns the resources the set currently watches, sorted.
func (s *ResourceSet) Resources() []schema.GroupVersionResource {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]schema.GroupVersionResource, 0, len(s.members))
	for gvr := range s.members {
		out = append(out, gvr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// HasSynced reports whether every member informer has synced.
func (s *ResourceSet) HasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.members) == 0 {
		return false
	}
	for _, m := range s.members {
		if !m.synced() {
			return false
		}
	}
	return true
}

// WaitForSync waits until the set has members and all have synced,
// returning at once the members whose listing is forbidden or not found
// (as *SyncError, joined) — unless OnSyncError is set: then those, and
// those not synced within SyncTimeout, are reported to it and not waited
// for. When ctx ends first, the error names each member not yet synced (a
// *SyncError wrapping ctx's error), or is ctx's error alone while the set
// has no members.
func (s *ResourceSet) WaitForSync(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		var errs, pending, excuse []error
		s.mu.Lock()
		n := len(s.members)
		for gvr, m := range s.members {
			if m.synced() || s.excused[gvr] {
				continue
			}
			err := m.givenUp()
			if err == nil && s.opts.OnSyncError != nil && s.opts.SyncTimeout > 0 && time.Since(m.started) >= s.opts.SyncTimeout {
				err = fmt.Errorf("not synced within %v", s.opts.SyncTimeout)
			}
			switch {
			case err != nil && s.opts.OnSyncError != nil:
				if s.excused == nil {
					s.excused = map[schema.GroupVersionResource]bool{}
				}
				s.excused[gvr] = true
				excuse = append(excuse, &SyncError{GVR: gvr, Namespace: m.ns, Err: err})
			case err != nil:
				errs = append(errs, &SyncError{GVR: gvr, Namespace: m.ns, Err: err})
			default:
				pending = append(pending, &SyncError{GVR: gvr, Namespace: m.ns, Err: ctx.Err()})
			}
		}
		s.mu.Unlock()
		for _, err := range excuse {
			s.opts.OnSyncError(err)
		}
		if n > 0 && len(errs)+len(pending) == 0 {
			return nil
		}
		if len(errs) > 0 {
			return joinSorted(errs)
		}
		select {
		case <-ctx.Done():
			if len(pending) == 0 {
				return ctx.Err()
			}
			for i := range pending {
				pending[i].(*SyncError).Err = ctx.Err()
			}
			return joinSorted(pending)
		case <-t.C:
		}
	}
}

// joinSorted joins errs in the order of their messages.
func joinSorted(errs []error) error {
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// sync reconciles members with discovery.
func (s *ResourceSet) sync(ctx context.Context) {
	if err := s.mapper.Refresh(ctx); err != nil {
		if ctx.Err() == nil {
			s.reportDiscovery(err)
		}
		return
	}
	resources, err := s.mapper.Resources(ctx, s.opts.Keep)
	if ctx.Err() != nil {
		return
	}
	failedGroups := map[string]bool{}
	if err != nil {
		s.reportDiscovery(err)
		var gdf *discovery.GroupDiscoveryFailedError
		if !errors.As(err, &gdf) {
			return
		}
		for gv := range gdf.Groups {
			failedGroups[gv.Group] = true
		}
	}
	want := map[schema.GroupVersionResource]*discovery.Resource{}
	for _, r := range resources {
		want[r.GVR()] = r
	}
	wantGR := map[schema.GroupResource]bool{}
	for gvr := range want {
		wantGR[gvr.GroupResource()] = true
	}
	s.mu.Lock()
	var gone []schema.GroupVersionResource
	for gvr := range s.members {
		if _, ok := want[gvr]; ok || failedGroups[gvr.Group] {
			continue
		}
		if !wantGR[gvr.GroupResource()] && s.crdServes(gvr) {
			// Discovery lacks a custom resource whose CRD is there and
			// not being deleted: a server coming back lists its own
			// groups before it serves the custom resources again (and
			// rebuilds their storage). Releasing the member would send
			// a ResourceGone delete for every object, and a new list.
			continue
		}
		gone = append(gone, gvr)
	}
	var added []*discovery.Resource
	for gvr, r := range want {
		if _, ok := s.members[gvr]; !ok {
			added = append(added, r)
		}
	}
	s.mu.Unlock()
	for _, gvr := range gone {
		s.release(gvr, true)
	}
	for _, r := range added {
		s.start(r)
	}
	if len(gone)+len(added) > 0 {
		s.log.V(4).Info("resource set changed", "added", len(added), "released", len(gone))
	}
}

// crdServes reports whether the set's CRD cache holds the definition of
// gvr's resource ("<plural>.<group>"), not being deleted.
func (s *ResourceSet) crdServes(gvr schema.GroupVersionResource) bool {
	crds := s.crds.Load()
	if crds == nil || !crds.HasSynced() {
		return false
	}
	crd, ok := crds.Store().Get(gvr.Resource + "." + gvr.Group)
	return ok && crd.GetDeletionTimestamp() == nil
}

func (s *ResourceSet) reportDiscovery(err error) {
	s.log.V(4).Info("discovery failed for the resource set", "error", err)
	if s.opts.OnDiscoveryError != nil {
		s.opts.OnDiscoveryError(err)
	}
}

func (s *ResourceSet) informerOptions(r *discovery.Resource) InformerOptions {
	o := s.opts.Informer
	if !r.Namespaced {
		o.Namespace, o.AllNamespaces = "", true
	}
	return o
}

func (s *ResourceSet) start(r *discovery.Resource) {
	var m *member
	var err error
	if s.opts.FullObjects {
		m, err = startMember(s, wholeObjects, r)
	} else {
		m, err = startMember(s, metadataOnly, r)
	}
	if err != nil {
		s.log.Info("resource set: not watching a resource; retried at the next refresh", "resource", r.GVR().String(), "error", err)
		return
	}
	s.mu.Lock()
	s.members[r.GVR()] = m
	s.mu.Unlock()
}

// startMember takes the factory's informer of kind k for r, held by the
// set (given back with releaseHeld when the member goes, or at once if it
// cannot be added), and registers the set's handler on it.
func startMember[T Object](s *ResourceSet, k objectKind[T], r *discovery.Resource) (*member, error) {
	gvr := r.GVR()
	opts := s.informerOptions(r)
	s.handlersMu.Lock()
	handlers := s.handlers // fixed from Run on
	s.handlersMu.Unlock()
	h := func(e Event) {
		for _, h := range handlers {
			h(e)
		}
	}
	key := s.f.key(gvr, opts, k.metadata)
	inf := shared(s.f, k, gvr, opts, false)
	reg, err := inf.AddEventHandler(HandlerFuncs[T]{
		AddFunc: func(o T, initial bool) {
			h(Event{Type: watch.Added, GVR: gvr, Resource: r, Object: o, InInitialList: initial})
		},
		UpdateFunc: func(old, o T) {
			h(Event{Type: watch.Modified, GVR: gvr, Resource: r, Object: o, Old: old})
		},
		DeleteFunc: func(d Deleted[T]) {
			h(Event{Type: watch.Deleted, GVR: gvr, Resource: r, Object: d.Obj, FinalStateUnknown: d.FinalStateUnknown, ShardMove: d.ShardMove})
		},
	})
	if err != nil {
		s.f.releaseHeld(key)
		return nil, err
	}
	return &member{ns: key.ns, started: time.Now(), synced: func() bool { return inf.HasSynced() && reg.HasSynced() }, lastErr: inf.lastErrorSeq, givenUp: inf.givenUp, remove: func() {
		reg.Remove()
		s.f.releaseHeld(key)
	}, drain: func() {
		// One object at a time: a compact cache decodes on every read.
		st := inf.Store()
		for _, k := range st.Keys() {
			if o, ok := st.Get(k); ok {
				h(Event{Type: watch.Deleted, GVR: gvr, Resource: r, Object: o, FinalStateUnknown: true, ResourceGone: true})
			}
		}
	}}, nil
}

// release stops a member whose resource left the set, after delivering a
// Deleted event (ResourceGone) for each object it had cached.
func (s *ResourceSet) release(gvr schema.GroupVersionResource, drain bool) {
	s.mu.Lock()
	m, ok := s.members[gvr]
	delete(s.members, gvr)
	delete(s.excused, gvr)
	s.mu.Unlock()
	if !ok {
		return
	}
	m.remove()
	if drain {
		m.drain()
	}
}

// releaseAll stops every member at shutdown (no events: the objects did
// not go anywhere).
func (s *ResourceSet) releaseAll() {
	for _, gvr := range s.Resources() {
		s.release(gvr, false)
	}
}

// memberGone reports whether a member's informer met a 404 since the last
// look: its resource vanished from the server, so discovery should be read
// again. The CRD watch usually triggers that first, but the server may
// still list a deleted CRD's resource when that re-read comes; the 404 of
// the informer's next list or watch then triggers another. Each 404 counts
// once, and the informer backs off between them, so a resource that
// discovery lists but that answers 404 costs one discovery revalidation
// per failed attempt, not a loop.
func (s *ResourceSet) memberGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	gone := false
	for _, m := range s.members {
		n, err := m.lastErr()
		if n == m.seenErr {
			continue
		}
		m.seenErr = n
		if apierrors.IsNotFound(err) {
			gone = true
		}
	}
	return gone
}
