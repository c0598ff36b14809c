package dynamic

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MappedClient reaches objects by kind instead of by resource: it asks a
// REST mapper for the resource and its scope. A mapper miss is refreshed as
// the mapper does, so a kind whose CRD was created a moment ago is found.
type MappedClient struct {
	client    Interface
	mapper    meta.RESTMapperWithContext
	namespace string
}

// NewMapped returns a MappedClient over a client and a REST mapper: any
// meta.RESTMapper, such as restmapper.NewForConfig's, which refreshes
// itself on a miss (give both the same rest.Config, or build the client
// and the mapper's discovery on one rest.Client to share its connection
// pool, rate limiter and warning state).
func NewMapped(client Interface, mapper meta.RESTMapper) *MappedClient {
	return &MappedClient{client: client, mapper: meta.ToRESTMapperWithContext(mapper)}
}

// WithDefaultNamespace returns a copy that puts namespaced objects without
// a namespace into ns (e.g. the kubeconfig context's namespace).
func (c *MappedClient) WithDefaultNamespace(ns string) *MappedClient {
	out := *c
	out.namespace = ns
	return &out
}

// Client returns the underlying dynamic client.
func (c *MappedClient) Client() Interface { return c.client }

// ErrClusterScoped is returned (wrapped) when a namespace is given for a
// cluster-scoped kind.
var ErrClusterScoped = errors.New("dynamic: the kind is cluster-scoped; it has no namespace")

// ErrNamespaceRequired is returned (wrapped) when a namespaced kind is used
// without a namespace and the client has no default.
var ErrNamespaceRequired = errors.New("dynamic: the kind is namespaced and no namespace was given")

// ForKind returns the client and mapping for a kind, at its preferred
// version when gvk.Version is empty. For a namespaced kind the client is
// narrowed to namespace (or the default namespace); "" with no default means
// all namespaces, for List and Watch. A namespace for a cluster-scoped kind
// is an error.
func (c *MappedClient) ForKind(ctx context.Context, gvk schema.GroupVersionKind, namespace string) (ResourceInterface, *meta.RESTMapping, error) {
	var versions []string
	if gvk.Version != "" {
		versions = []string{gvk.Version}
	}
	m, err := c.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), versions...)
	if err != nil {
		return nil, nil, err
	}
	nri := c.client.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		if namespace != "" {
			return nil, nil, fmt.Errorf("%w: %s %q was given namespace %q; remove the namespace", ErrClusterScoped, gvk.Kind, m.Resource.GroupResource(), namespace)
		}
		return nri, m, nil
	}
	if namespace == "" {
		namespace = c.namespace
	}
	if namespace == "" {
		return nri, m, nil
	}
	return nri.Namespace(namespace), m, nil
}

// ForObject returns the client for obj's kind and namespace (or the default
// namespace). A namespaced object without a namespace, and no default, is
// an error; a cluster-scoped object with a namespace is an error.
func (c *MappedClient) ForObject(ctx context.Context, obj *unstructured.Unstructured) (ResourceInterface, *meta.RESTMapping, error) {
	if obj == nil {
		return nil, nil, errors.New("dynamic: nil object")
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, nil, fmt.Errorf("dynamic: object %q has no apiVersion or kind", obj.GetName())
	}
	ri, m, err := c.ForKind(ctx, gvk, obj.GetNamespace())
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && obj.GetNamespace() == "" && c.namespace == "" {
		return nil, nil, fmt.Errorf("%w: %s %q", ErrNamespaceRequired, gvk.Kind, obj.GetName())
	}
	return ri, m, nil
}

// namespaced fills in the namespace of a namespaced object that has none.
func (c *MappedClient) withNamespace(obj *unstructured.Unstructured, m *meta.RESTMapping) *unstructured.Unstructured {
	if m.Scope.Name() == meta.RESTScopeNameNamespace && obj.GetNamespace() == "" && c.namespace != "" {
		obj = obj.DeepCopy()
		obj.SetNamespace(c.namespace)
	}
	return obj
}

// Create creates obj in its namespace.
func (c *MappedClient) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	ri, m, err := c.ForObject(ctx, obj)
	if err != nil {
		return nil, err
	}
	return ri.Create(ctx, c.withNamespace(obj, m), opts)
}

// Update replaces obj.
func (c *MappedClient) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	ri, m, err := c.ForObject(ctx, obj)
	if err != nil {
		return nil, err
	}
	return ri.Update(ctx, c.withNamespace(obj, m), opts)
}

// Apply server-side applies obj (which must not carry managedFields) to its
// namespace.
func (c *MappedClient) Apply(ctx context.Context, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	ri, m, err := c.ForObject(ctx, obj)
	if err != nil {
		return nil, err
	}
	return ri.Apply(ctx, obj.GetName(), c.withNamespace(obj, m), opts)
}

// Get reads an object by kind, namespace and name.
func (c *MappedClient) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
	ri, _, err := c.ForKind(ctx, gvk, namespace)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, name, opts)
}

// Delete deletes an object by kind, namespace and name.
func (c *MappedClient) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts metav1.DeleteOptions) error {
	ri, _, err := c.ForKind(ctx, gvk, namespace)
	if err != nil {
		return err
	}
	return ri.Delete(ctx, name, opts)
}
