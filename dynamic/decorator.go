package dynamic

import "k8s.io/apimachinery/pkg/runtime/schema"

// decoratedInterface applies wrap to every ResourceInterface it hands out,
// namespaced or not. The decorators in this package are built on it.
type decoratedInterface struct {
	next Interface
	wrap func(ResourceInterface) ResourceInterface
}

func (d *decoratedInterface) Resource(gvr schema.GroupVersionResource) NamespaceableResourceInterface {
	nri := d.next.Resource(gvr)
	return &decoratedNamespaceable{ResourceInterface: d.wrap(nri), nri: nri, wrap: d.wrap}
}

type decoratedNamespaceable struct {
	ResourceInterface
	nri  NamespaceableResourceInterface
	wrap func(ResourceInterface) ResourceInterface
}

func (d *decoratedNamespaceable) Namespace(ns string) ResourceInterface {
	return d.wrap(d.nri.Namespace(ns))
}
