package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// Lister reads an informer's cache. Returned objects are shared and
// read-only.
type Lister[T Object] struct {
	store     *Store[T]
	namespace string
	scoped    bool
}

// List returns the cached objects whose labels match selector (nil or
// labels.Everything() for all), sorted by key.
func (l *Lister[T]) List(selector labels.Selector) ([]T, error) {
	var objs []T
	if l.scoped {
		var err error
		if objs, err = l.store.ByIndex(NamespaceIndex, l.namespace); err != nil {
			return nil, err
		}
	} else {
		objs = l.store.List()
	}
	if selector == nil || selector.Empty() {
		return objs, nil
	}
	out := objs[:0]
	for _, o := range objs {
		if selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Get returns the object with this name (in the lister's namespace, when
// it has one; for a cluster-wide lister, name may be "namespace/name").
func (l *Lister[T]) Get(name string) (T, error) {
	key := name
	if l.scoped && l.namespace != "" {
		key = l.namespace + "/" + name
	}
	obj, ok := l.store.Get(key)
	if !ok {
		var zero T
		return zero, &NotFoundError{Key: key}
	}
	return obj, nil
}

// Namespace returns a lister limited to one namespace.
func (l *Lister[T]) Namespace(ns string) *Lister[T] {
	return &Lister[T]{store: l.store, namespace: ns, scoped: true}
}

// ByIndex returns the objects the named index holds under value (limited
// to the lister's namespace, when it has one).
func (l *Lister[T]) ByIndex(index, value string) ([]T, error) {
	objs, err := l.store.ByIndex(index, value)
	if err != nil || !l.scoped {
		return objs, err
	}
	out := objs[:0]
	for _, o := range objs {
		if o.GetNamespace() == l.namespace {
			out = append(out, o)
		}
	}
	return out, nil
}

// NotFoundError is returned by Lister.Get for an object not in the cache.
type NotFoundError struct {
	// Key is the cache key that was looked up.
	Key string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("informer: %q is not in the cache", e.Key)
}
