package controller

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/informer"
)

// Source is what a Watch takes its events from: an informer, of full
// objects (*informer.Informer[*unstructured.Unstructured]) or of metadata
// only (*informer.Informer[*metav1.PartialObjectMetadata]), for a kind
// known at compile time or found at run time.
type Source[T informer.Object] interface {
	AddEventHandler(h informer.Handler[T]) (*informer.Registration[T], error)
}

// Watch connects a Source to a controller's queue: each event's object is
// mapped to the keys to reconcile. Make one with For, Owns or Watches and
// give it to Controller.Watch.
type Watch[K comparable] struct {
	what     string
	register func(q enqueuer[K]) error
}

// enqueuer is the part of a Controller a Watch feeds.
type enqueuer[K comparable] interface {
	Add(key K)
	AddInitial(key K)
}

// For watches the controller's primary resource: every object maps to its
// own key, "namespace/name" ("name" when cluster-scoped), as informer.Key
// makes it and as the informer's Store is keyed, so a reconcile reads the
// object with Store().Get(key) and finds it gone after a delete.
func For[T informer.Object](src Source[T]) Watch[string] {
	return Watches(src, func(obj T) []string { return []string{informer.Key(obj)} })
}

// Owns watches resources the primary kind owns: an object maps to the key
// of its controller — the ownerReference with controller: true — when that
// reference is to owner (group and kind; the version does not matter). An
// owner is in the object's namespace, so the key is "namespace/name" (just
// "name" for a cluster-scoped owner of a cluster-scoped object). On an
// update whose controller changed, both the old and the new owner are
// reconciled; on a delete, the owner the object had.
func Owns[T informer.Object](src Source[T], owner schema.GroupKind) Watch[string] {
	w := Watches(src, func(obj T) []string {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != owner.Kind {
			return nil
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != owner.Group {
			return nil
		}
		if ns := obj.GetNamespace(); ns != "" {
			return []string{ns + "/" + ref.Name}
		}
		return []string{ref.Name}
	})
	w.what = "owned by " + owner.String()
	return w
}

// Watches watches any resource, mapping each object to the keys keysOf
// returns (none: the event is ignored). On an update both the old and the
// new object are mapped, so a key the change moves away from is
// reconciled too. keysOf must be cheap and must not modify the object,
// which the informer's cache shares.
func Watches[T informer.Object, K comparable](src Source[T], keysOf func(obj T) []K) Watch[K] {
	return Watch[K]{what: "mapped", register: func(q enqueuer[K]) error {
		if src == nil || keysOf == nil {
			return errors.New("a nil source or mapping function")
		}
		_, err := src.AddEventHandler(informer.HandlerFuncs[T]{
			AddFunc: func(obj T, initial bool) {
				for _, k := range keysOf(obj) {
					if initial {
						q.AddInitial(k) // behind real changes
					} else {
						q.Add(k)
					}
				}
			},
			UpdateFunc: func(oldObj, newObj T) {
				keys := keysOf(newObj)
				for _, k := range keys {
					q.Add(k)
				}
				for _, k := range keysOf(oldObj) {
					if !slices.Contains(keys, k) {
						q.Add(k)
					}
				}
			},
			DeleteFunc: func(d informer.Deleted[T]) {
				if d.ShardMove {
					return // not deleted: another replica has it now
				}
				// A tombstone (FinalStateUnknown) carries the last state
				// the informer knew: its keys are the best there is.
				for _, k := range keysOf(d.Obj) {
					q.Add(k)
				}
			},
		})
		return err
	}}
}

// Watch registers the watches' event handlers with their sources, so that
// their events queue keys for this controller: the objects of an initial
// list with AddInitial (behind real changes), every later add, update and
// delete with Add; a delete the informer inferred (a tombstone) maps the
// object's last known state, and a shard move (the object left this
// replica's shard) is not an event to act on. Call it before the sources'
// informers run, so the initial lists are seen. The object in a reconcile
// is read from the cache by key, never from the event.
func (c *Controller[K]) Watch(watches ...Watch[K]) error {
	for i, w := range watches {
		if w.register == nil {
			return fmt.Errorf("controller %s: watch %d is the zero Watch; make one with For, Owns or Watches", c.name, i)
		}
		if err := w.register(c); err != nil {
			return fmt.Errorf("controller %s: watch %d (%s): %w", c.name, i, w.what, err)
		}
	}
	return nil
}

// SetSource is what WatchesSet takes events from: an
// informer.ResourceSet, whose resources are found at run time.
type SetSource interface {
	AddHandler(h func(informer.Event)) error
}

// WatchesSet watches every resource of a set, mapping each event to the
// keys keysOf returns (none: nothing is queued). The keys of an initial
// list's event are queued with AddInitial (behind real changes), every
// other event's with Add. keysOf gets the whole event — its type and
// resource, the object (metadata only unless the set caches full
// objects), the old object of an update, and on a delete whether it was
// inferred (FinalStateUnknown), the resource left the set (ResourceGone)
// or the object left this replica's shard (ShardMove) — so it can keep
// an index of its own in step as it maps, as a garbage collector keeps its
// owner graph. It is called from each resource's informer goroutine:
// concurrently across resources, in order within one; it must not block
// and must not modify the object, which the cache shares.
func WatchesSet[K comparable](set SetSource, keysOf func(e informer.Event) []K) Watch[K] {
	return Watch[K]{what: "a resource set", register: func(q enqueuer[K]) error {
		if set == nil || keysOf == nil {
			return errors.New("a nil set or mapping function")
		}
		return set.AddHandler(func(e informer.Event) {
			for _, k := range keysOf(e) {
				if e.InInitialList {
					q.AddInitial(k)
				} else {
					q.Add(k)
				}
			}
		})
	}}
}
