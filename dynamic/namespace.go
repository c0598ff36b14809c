package dynamic

import "k8s.io/apimachinery/pkg/runtime/schema"

// WithDefaultNamespace returns a client in which a namespaced resource
// used without Namespace(...) acts in ns instead of across all namespaces.
// namespaced reports a resource's scope — for example a
// *restmapper.Mapper's ResourceInfo, or a fixed set in tests; resources it
// reports cluster-scoped are unchanged. Namespace(other) still selects
// another namespace.
func WithDefaultNamespace(c Interface, ns string, namespaced func(schema.GroupVersionResource) bool) Interface {
	return &defaultNamespace{next: c, ns: ns, namespaced: namespaced}
}

type defaultNamespace struct {
	next       Interface
	ns         string
	namespaced func(schema.GroupVersionResource) bool
}

func (d *defaultNamespace) Resource(gvr schema.GroupVersionResource) NamespaceableResourceInterface {
	nri := d.next.Resource(gvr)
	if d.ns == "" || d.namespaced == nil || !d.namespaced(gvr) {
		return nri
	}
	identity := func(ri ResourceInterface) ResourceInterface { return ri }
	return &decoratedNamespaceable{ResourceInterface: nri.Namespace(d.ns), nri: nri, wrap: identity}
}
