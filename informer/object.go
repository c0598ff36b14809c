package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Object is what informers cache: a runtime.Object with object metadata,
// such as *unstructured.Unstructured or *metav1.PartialObjectMetadata.
type Object interface {
	metav1.Object
	runtime.Object
}

// ListPage is what one list request returned besides its items.
type ListPage struct {
	// ResourceVersion of the list (the snapshot the items come from).
	ResourceVersion string
	// Continue is the token of the next page, "" on the last page.
	Continue string
	// ShardSelector is the shard selector the server says it applied
	// (ListMeta.shardInfo.selector), "" when none.
	ShardSelector string
}

// Source lists and watches one resource for a reflector.
type Source[T Object] interface {
	// List returns one page, calling each for every item in order.
	List(ctx context.Context, opts metav1.ListOptions, each func(T) error) (ListPage, error)
	// Watch opens a watch; event objects are T (bookmarks included) or
	// *metav1.Status for ERROR events. The watches of kdyn's own clients
	// are read in the informer's goroutine, others from ResultChan.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Key returns the cache key of an object: "namespace/name", or "name" for
// cluster-scoped objects.
func Key(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Deleted is what OnDelete receives: the deleted object, or — when the
// informer missed the deletion (a watch gap ended by a relist) — the last
// version it knew, with FinalStateUnknown set.
type Deleted[T Object] struct {
	// Obj is the object as deleted, or as last seen.
	Obj T
	// FinalStateUnknown reports that the deletion was inferred from a
	// relist: Obj may be stale.
	FinalStateUnknown bool
	// ShardMove reports that the object was not deleted but left the
	// informer's Shard (its ranges changed): another shard has it now.
	ShardMove bool
}
