package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface is the entry point: one NamespaceableResourceInterface per
// resource. Its method set is exactly that of k8s.io/client-go/dynamic's
// Interface.
type Interface interface {
	// Resource returns the client for one group-version-resource.
	Resource(resource schema.GroupVersionResource) NamespaceableResourceInterface
}

// ResourceInterface does everything to one resource, in one namespace (or
// cluster-wide). Its method set is exactly that of
// k8s.io/client-go/dynamic's ResourceInterface, and so are the requests it
// sends.
type ResourceInterface interface {
	// Create POSTs obj (to the subresource, for which obj's name is used).
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
	// Update PUTs obj to its name (or a subresource of it).
	Update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error)
	// UpdateStatus PUTs obj to its status subresource.
	UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions) (*unstructured.Unstructured, error)
	// Delete deletes one object (DeleteOptions in the request body).
	Delete(ctx context.Context, name string, options metav1.DeleteOptions, subresources ...string) error
	// DeleteCollection deletes every object matching listOptions.
	DeleteCollection(ctx context.Context, options metav1.DeleteOptions, listOptions metav1.ListOptions) error
	// Get reads one object (or a subresource of it).
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	// List reads one page of objects (all of them unless opts.Limit is set).
	// Items without apiVersion/kind get them from the list.
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	// Watch streams changes; opts.Watch is set for the caller.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// Patch applies a JSON, merge, strategic-merge or apply patch.
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
	// Apply sends obj as a server-side apply patch. obj must not carry
	// managedFields.
	Apply(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error)
	// ApplyStatus is Apply to the status subresource.
	ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions) (*unstructured.Unstructured, error)
}

// NamespaceableResourceInterface is a ResourceInterface for all namespaces
// (or a cluster-scoped resource) that can be narrowed to one namespace.
type NamespaceableResourceInterface interface {
	// Namespace returns the client for one namespace.
	Namespace(string) ResourceInterface
	ResourceInterface
}
