package crcache

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/informer"
)

// backing is one kdyn informer behind a kind's namespace scope, of whole
// objects or of metadata only, read through views.
type backing interface {
	// get returns the object with key in v's form.
	get(v view, key string, share bool) (client.Object, bool, error)
	// list returns the objects of namespace ns ("" for all), or those
	// that every one of match finds in its index, in v's form; keep
	// filters them before conversion and limit (> 0) stops the list.
	list(v view, ns string, match []indexValue, keep func(metav1.Object) bool, limit int, share bool) ([]client.Object, error)
	// addIndexer adds an index whose function reads objects in v's form.
	addIndexer(name string, v view, fn toolscache.IndexFunc) error
	// addHandler registers h, receiving objects in v's form; remove
	// undoes it and synced reports when it has had the initial list.
	addHandler(v view, h toolscache.ResourceEventHandler) (remove func(), synced func() bool, err error)
	hasSynced() bool
	waitForSync(ctx context.Context) error
	// missingFrom returns, as DeletedFinalStateUnknown in v's form, the
	// objects this backing holds and other does not, less those this one
	// saw at a resourceVersion past other's last sync.
	missingFrom(v view, other backing) []toolscache.DeletedFinalStateUnknown
	// has reports whether the backing holds key; lastSync is the
	// resourceVersion it last synced at.
	has(key string) bool
	lastSync() string
	// release stops the informer.
	release()
}

// store is a backing over an informer of T.
type store[T informer.Object] struct {
	inf *informer.Informer[T]
	// conv converts a stored object to a view's form.
	conv func(v view, obj T, share bool) (client.Object, error)
	stop func()
}

func newWholeBacking(inf *informer.Informer[*unstructured.Unstructured], release func()) backing {
	return &store[*unstructured.Unstructured]{inf: inf, conv: view.fromObject, stop: release}
}

func newMetadataBacking(inf *informer.Informer[*metav1.PartialObjectMetadata], release func()) backing {
	return &store[*metav1.PartialObjectMetadata]{inf: inf, conv: view.fromMetadata, stop: release}
}

func (s *store[T]) get(v view, key string, share bool) (client.Object, bool, error) {
	obj, ok := s.inf.Store().Get(key)
	if !ok {
		return nil, false, nil
	}
	out, err := s.conv(v, obj, share)
	return out, err == nil, err
}

// indexValue is one value of one index.
type indexValue struct{ index, value string }

func (s *store[T]) list(v view, ns string, match []indexValue, keep func(metav1.Object) bool, limit int, share bool) ([]client.Object, error) {
	var objs []T
	var err error
	switch {
	case len(match) > 0:
		objs, err = s.byIndexes(match)
	case ns != "":
		objs, err = s.inf.Store().ByIndex(informer.NamespaceIndex, ns)
	default:
		objs = s.inf.Store().List()
	}
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		if limit > 0 && len(out) >= limit {
			break
		}
		if keep != nil && !keep(o) {
			continue
		}
		c, err := s.conv(v, o, share)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// byIndexes returns the objects every one of match finds.
func (s *store[T]) byIndexes(match []indexValue) ([]T, error) {
	objs, err := s.inf.Store().ByIndex(match[0].index, match[0].value)
	for _, m := range match[1:] {
		if err != nil || len(objs) == 0 {
			break
		}
		var also []T
		if also, err = s.inf.Store().ByIndex(m.index, m.value); err != nil {
			break
		}
		in := make(map[string]bool, len(also))
		for _, o := range also {
			in[informer.Key(o)] = true
		}
		objs = slices.DeleteFunc(objs, func(o T) bool { return !in[informer.Key(o)] })
	}
	return objs, err
}

func (s *store[T]) addIndexer(name string, v view, fn toolscache.IndexFunc) error {
	err := s.inf.AddIndexer(name, func(obj T) ([]string, error) {
		c, err := s.conv(v, obj, true)
		if err != nil {
			return nil, err
		}
		return fn(c)
	})
	if err == informer.ErrIndexExists {
		return fmt.Errorf("indexer conflict: map[%s:{}]", name)
	}
	return err
}

func (s *store[T]) addHandler(v view, h toolscache.ResourceEventHandler) (func(), func() bool, error) {
	reg, err := s.inf.AddEventHandler(&handler[T]{s: s, v: v, h: h})
	if err != nil {
		return nil, nil, err
	}
	return reg.Remove, reg.HasSynced, nil
}

func (s *store[T]) hasSynced() bool { return s.inf.HasSynced() }

func (s *store[T]) waitForSync(ctx context.Context) error { return s.inf.WaitForSync(ctx) }

func (s *store[T]) release() { s.stop() }

func (s *store[T]) has(key string) bool {
	_, ok := s.inf.Store().Get(key)
	return ok
}

func (s *store[T]) lastSync() string { return s.inf.LastSyncResourceVersion() }

func (s *store[T]) missingFrom(v view, other backing) []toolscache.DeletedFinalStateUnknown {
	since, sinceErr := strconv.ParseUint(other.lastSync(), 10, 64)
	var out []toolscache.DeletedFinalStateUnknown
	for _, key := range s.inf.Store().Keys() {
		if other.has(key) {
			continue
		}
		obj, ok := s.inf.Store().Get(key)
		if !ok {
			continue
		}
		// resourceVersions are opaque, but etcd's are integers: one past
		// the other store's last sync is a change that store has yet to
		// see (a create, not a delete).
		if rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil && sinceErr == nil && rv > since {
			continue
		}
		c, err := s.conv(v, obj, true)
		if err != nil {
			utilruntime.HandleError(err)
			continue
		}
		out = append(out, toolscache.DeletedFinalStateUnknown{Key: key, Obj: c})
	}
	return out
}

// handler delivers an informer's events to a controller-runtime handler in
// one view's form.
type handler[T informer.Object] struct {
	s *store[T]
	v view
	h toolscache.ResourceEventHandler
}

func (h *handler[T]) convert(obj T) (client.Object, bool) {
	c, err := h.s.conv(h.v, obj, true)
	if err != nil {
		utilruntime.HandleError(err)
		return nil, false
	}
	return c, true
}

func (h *handler[T]) OnAdd(obj T, initial bool) {
	if c, ok := h.convert(obj); ok {
		h.h.OnAdd(c, initial)
	}
}

func (h *handler[T]) OnUpdate(oldObj, newObj T) {
	o, ok := h.convert(oldObj)
	if !ok {
		return
	}
	if n, ok := h.convert(newObj); ok {
		h.h.OnUpdate(o, n)
	}
}

func (h *handler[T]) OnDelete(d informer.Deleted[T]) {
	c, ok := h.convert(d.Obj)
	if !ok {
		return
	}
	if d.FinalStateUnknown {
		h.h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: informer.Key(d.Obj), Obj: c})
		return
	}
	h.h.OnDelete(c)
}
