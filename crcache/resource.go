package crcache

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kdyn/kdyn/informer"
)

// resource is everything the cache holds of one kind: one store per
// namespace scope, whatever form callers read it in. Its stores hold
// metadata only while every caller has asked for metadata only; the first
// typed or Unstructured request turns them into stores of whole objects
// (see upgrade).
type resource struct {
	c          *Cache
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	scopes     []*scope // sorted by namespace ("" first)

	mu       sync.Mutex
	whole    bool
	handlers map[*registration]struct{}
	indexers []namedIndexer
	removed  bool
	// stopped is closed once the resource is removed.
	stopped chan struct{}
}

// scope is one namespace ("" for all, less those named beside it) of a
// resource.
type scope struct {
	ns      string
	cfg     scopeConfig
	backing backing
}

// namedIndexer is an index added through IndexField or AddIndexers,
// re-added to the stores of an upgrade.
type namedIndexer struct {
	name string
	v    view
	fn   toolscache.IndexFunc
}

// newResource builds the stores of a kind (not yet running unless the
// cache is).
func (c *Cache) newResource(gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, namespaced bool, cfg kindConfig, whole bool) *resource {
	r := &resource{c: c, gvk: gvk, gvr: gvr, namespaced: namespaced, whole: whole,
		handlers: map[*registration]struct{}{}, stopped: make(chan struct{})}
	for ns, sc := range cfg {
		r.scopes = append(r.scopes, &scope{ns: ns, cfg: sc})
	}
	sort.Slice(r.scopes, func(i, j int) bool { return r.scopes[i].ns < r.scopes[j].ns })
	for _, s := range r.scopes {
		s.backing = r.newBacking(s, whole)
	}
	return r
}

// newBacking starts (or prepares, before Start) the informer of s.
func (r *resource) newBacking(s *scope, whole bool) backing {
	f := r.c.factory(s.cfg.syncPeriod)
	opts := informer.InformerOptions{
		Namespace:         s.ns,
		AllNamespaces:     s.ns == "",
		KeepManagedFields: r.c.o.KeepManagedFields,
		Compact:           r.c.o.Compact,
		Shard:             r.c.o.Shard,
	}
	if s.cfg.label != nil && !s.cfg.label.Empty() {
		opts.LabelSelector = s.cfg.label.String()
	}
	if s.cfg.field != nil && !s.cfg.field.Empty() {
		opts.FieldSelector = s.cfg.field.String()
	}
	if !whole {
		opts.MetadataTransform = metadataTransform(r.gvk, s.cfg.transform)
		return newMetadataBacking(f.ForResourceMetadata(r.gvr, opts), func() { f.ReleaseMetadata(r.gvr, opts) })
	}
	if typ := r.c.protoType(r.gvk); typ != nil {
		p := proto(r.gvk, typ, s.cfg.transform)
		return newTypedBacking(informer.ForResourceProto(f, r.gvr, opts, p), opts.Compact, func() { informer.ReleaseProto(f, r.gvr, opts, p) })
	}
	opts.Transform = r.c.transform(r.gvk, s.cfg.transform)
	return newWholeBacking(f.ForResource(r.gvr, opts), func() { f.Release(r.gvr, opts) })
}

// scopeFor returns the scope holding objects of namespace ns, or nil.
func (r *resource) scopeFor(ns string) *scope {
	if !r.namespaced {
		return r.scopes[0]
	}
	var all *scope
	for _, s := range r.scopes {
		switch s.ns {
		case ns:
			return s
		case "":
			all = s
		}
	}
	return all
}

// backings returns the scopes' backings as they are now.
func (r *resource) backings() []backing {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]backing, len(r.scopes))
	for i, s := range r.scopes {
		out[i] = s.backing
	}
	return out
}

// hasSynced reports whether every scope's store has synced (without
// allocating: reads call it first).
func (r *resource) hasSynced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.scopes {
		if !s.backing.hasSynced() {
			return false
		}
	}
	return true
}

func (r *resource) waitForSync(ctx context.Context) error {
	if r.hasSynced() {
		return nil
	}
	for _, b := range r.backings() {
		if err := b.waitForSync(ctx); err != nil {
			return err
		}
	}
	return nil
}

// upgrade makes the resource's stores hold whole objects. Handlers move
// to the new stores: each gets the new store's initial list (as adds)
// and stays on the old one until the new one has delivered it, so no
// change is missed (some may be seen twice). Indexes are added again.
func (r *resource) upgrade() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.whole || r.removed {
		return
	}
	r.whole = true
	old := make([]backing, len(r.scopes))
	for i, s := range r.scopes {
		old[i] = s.backing
		s.backing = r.newBacking(s, true)
		for _, ix := range r.indexers {
			// The names are new to the new store.
			_ = s.backing.addIndexer(ix.name, ix.v, ix.fn)
		}
	}
	var moved []*registration
	for reg := range r.handlers {
		reg.moveTo(r.scopes)
		moved = append(moved, reg)
	}
	now := make([]backing, len(r.scopes))
	for i, s := range r.scopes {
		now[i] = s.backing
	}
	go func() {
		for _, reg := range moved {
			reg.finishMove(r.c.ctxDone(), r.stopped, old, now)
		}
		for _, b := range old {
			b.release()
		}
	}()
}

// remove stops the resource's informers.
func (r *resource) remove() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed {
		return
	}
	r.removed = true
	close(r.stopped)
	for _, s := range r.scopes {
		s.backing.release()
	}
}

// registration is a controller-runtime handler's registration with every
// scope of a resource.
type registration struct {
	r *resource
	v view
	h toolscache.ResourceEventHandler

	mu      sync.Mutex
	removes []func()
	synced  []func() bool
	// old are the registrations being replaced during an upgrade.
	oldRemoves []func()
	removed    bool
	checker    *doneChecker
}

// addHandler registers h with every scope of r.
func (r *resource) addHandler(v view, h toolscache.ResourceEventHandler) (*registration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Several stores deliver to one handler (scopes, and both stores while
	// an upgrade moves it): it still gets one event at a time.
	reg := &registration{r: r, v: v, h: &serialHandler{h: h}}
	for _, s := range r.scopes {
		remove, synced, err := s.backing.addHandler(v, h)
		if err != nil {
			reg.removeLocked()
			return nil, err
		}
		reg.removes = append(reg.removes, remove)
		reg.synced = append(reg.synced, synced)
	}
	r.handlers[reg] = struct{}{}
	return reg, nil
}

// moveTo registers the handler with the scopes' new backings (under r.mu).
func (reg *registration) moveTo(scopes []*scope) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.oldRemoves = append(reg.oldRemoves, reg.removes...)
	reg.removes, reg.synced = nil, nil
	for _, s := range scopes {
		remove, synced, err := s.backing.addHandler(reg.v, reg.h)
		if err != nil {
			continue
		}
		reg.removes = append(reg.removes, remove)
		reg.synced = append(reg.synced, synced)
	}
}

// finishMove removes the old registrations once the new ones have synced
// (or the cache or resource stopped). An object the old store holds and
// the new one does not was deleted while the handler moved, perhaps unseen
// by the old store's watch: the handler gets it as a
// DeletedFinalStateUnknown (unless the old store saw it after the new
// store's last resourceVersion, which then will bring it).
func (reg *registration) finishMove(cacheDone, stopped <-chan struct{}, old, now []backing) {
	if !pollUntil(reg.HasSynced, cacheDone, stopped) {
		return
	}
	reg.mu.Lock()
	for _, rm := range reg.oldRemoves {
		rm()
	}
	reg.oldRemoves = nil
	removed := reg.removed
	reg.mu.Unlock()
	if removed {
		return
	}
	for i, b := range old {
		for _, gone := range b.missingFrom(reg.v, now[i]) {
			reg.h.OnDelete(gone)
		}
	}
}

// HasSynced reports whether the handler has had the initial list of
// every scope.
func (reg *registration) HasSynced() bool {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.removed {
		return false
	}
	for _, s := range reg.synced {
		if !s() {
			return false
		}
	}
	return len(reg.synced) > 0
}

// HasSyncedChecker returns a DoneChecker closed once HasSynced.
func (reg *registration) HasSyncedChecker() toolscache.DoneChecker {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.checker == nil {
		reg.checker = newDoneChecker("handler of "+reg.r.gvk.String(), reg.HasSynced, reg.r.stopped)
	}
	return reg.checker
}

func (reg *registration) remove() {
	reg.r.mu.Lock()
	defer reg.r.mu.Unlock()
	delete(reg.r.handlers, reg)
	reg.removeLocked()
}

func (reg *registration) removeLocked() {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for _, rm := range append(reg.removes, reg.oldRemoves...) {
		rm()
	}
	reg.removes, reg.oldRemoves, reg.synced = nil, nil, nil
	reg.removed = true
}

// doneChecker is a toolscache.DoneChecker over a polled condition.
type doneChecker struct {
	name string
	done chan struct{}
}

func newDoneChecker(name string, cond func() bool, stopped <-chan struct{}) *doneChecker {
	d := &doneChecker{name: name, done: make(chan struct{})}
	go func() {
		if pollUntil(cond, stopped) {
			close(d.done)
		}
	}()
	return d
}

// pollUntil checks cond every 10 ms until it holds (true) or one of stops
// is closed (false; a nil channel never is).
func pollUntil(cond func() bool, stops ...<-chan struct{}) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		for _, stop := range stops {
			select {
			case <-stop:
				return false
			default:
			}
		}
		<-t.C
	}
	return true
}

// Name names what is waited for.
func (d *doneChecker) Name() string { return d.name }

// Done is closed once it is done.
func (d *doneChecker) Done() <-chan struct{} { return d.done }

// transform adapts a controller-runtime transform to kdyn's informers: it
// gets each object as the scheme's type when the scheme knows the kind (as
// controller-runtime's typed informers give it), else as Unstructured.
func (c *Cache) transform(gvk schema.GroupVersionKind, t toolscache.TransformFunc) func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if t == nil {
		return nil
	}
	v := view{form: unstructuredForm, gvk: gvk}
	if obj, err := c.scheme.New(gvk); err == nil {
		if tv, err := viewOf(obj, gvk); err == nil {
			v = tv
		}
	}
	return func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		in, err := v.fromObject(u, true)
		if err != nil {
			return nil, err
		}
		out, err := t(in)
		if err != nil {
			return nil, err
		}
		return toUnstructured(out)
	}
}

// metadataTransform adapts a controller-runtime transform to kdyn's
// metadata-only informers: it gets each object as PartialObjectMetadata of
// kind gvk, as controller-runtime's metadata informers give it (the server
// sends them as kind PartialObjectMetadata). Without a transform it only
// sets the kind.
func metadataTransform(gvk schema.GroupVersionKind, t toolscache.TransformFunc) func(*metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
	return func(m *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		m.SetGroupVersionKind(gvk)
		if t == nil {
			return m, nil
		}
		out, err := t(m)
		if err != nil {
			return nil, err
		}
		pm, ok := out.(*metav1.PartialObjectMetadata)
		if !ok {
			return nil, fmt.Errorf("crcache: a transform of metadata-only objects returned %T, not *metav1.PartialObjectMetadata", out)
		}
		return pm, nil
	}
}

// serialHandler delivers one event at a time to h.
type serialHandler struct {
	mu sync.Mutex
	h  toolscache.ResourceEventHandler
}

func (s *serialHandler) OnAdd(obj any, initial bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.OnAdd(obj, initial)
}

func (s *serialHandler) OnUpdate(oldObj, newObj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.OnUpdate(oldObj, newObj)
}

func (s *serialHandler) OnDelete(obj any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h.OnDelete(obj)
}
