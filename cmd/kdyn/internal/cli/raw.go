package cli

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
)

// ResourceRequest starts a request for a resource in a namespace ("" for
// all namespaces or a cluster-scoped resource).
func ResourceRequest(r *rest.Request, gvr schema.GroupVersionResource, ns string) *rest.Request {
	return r.Group(gvr.Group).Version(gvr.Version).Namespace(ns).Resource(gvr.Resource)
}

// ListRaw returns one list page as the server sent it.
func ListRaw(ctx context.Context, rc *rest.Client, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) ([]byte, error) {
	return ResourceRequest(rc.Get(), gvr, ns).VersionedParams(&opts).DoRaw(ctx)
}
