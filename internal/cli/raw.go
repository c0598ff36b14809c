package cli

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
)

type restClient = *rest.Client

// resourceRequest starts a request for a resource in a namespace ("" for
// all namespaces or a cluster-scoped resource).
func resourceRequest(r *rest.Request, gvr schema.GroupVersionResource, ns string) *rest.Request {
	return r.Group(gvr.Group).Version(gvr.Version).Namespace(ns).Resource(gvr.Resource)
}

// listRaw returns one list page as the server sent it.
func listRaw(ctx context.Context, rc restClient, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) ([]byte, error) {
	return resourceRequest(rc.Get(), gvr, ns).VersionedParams(&opts).DoRaw(ctx)
}
