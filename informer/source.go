package informer

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
)

// NewSource returns a Source of whole objects of one resource in one
// namespace ("" for all namespaces or a cluster-scoped resource).
func NewSource(rc *rest.Client, gvr schema.GroupVersionResource, namespace string) Source[*unstructured.Unstructured] {
	return &unstructuredSource{rc: rc, gvr: gvr, ns: namespace}
}

type unstructuredSource struct {
	rc  *rest.Client
	gvr schema.GroupVersionResource
	ns  string
}

func request(rc *rest.Client, gvr schema.GroupVersionResource, ns string) *rest.Request {
	return rc.Get().Group(gvr.Group).Version(gvr.Version).Namespace(ns).Resource(gvr.Resource)
}

func (s *unstructuredSource) List(ctx context.Context, opts metav1.ListOptions, each func(*unstructured.Unstructured) error) (ListPage, error) {
	body, err := request(s.rc, s.gvr, s.ns).VersionedParams(&opts).DoRaw(ctx)
	if err != nil {
		return ListPage{}, err
	}
	var page ListPage
	err = dynamic.DecodeListFunc(body, func(meta metav1.ListMeta) {
		page = ListPage{ResourceVersion: meta.ResourceVersion, Continue: meta.Continue}
	}, each)
	return page, err
}

func (s *unstructuredSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return request(s.rc, s.gvr, s.ns).VersionedParams(&opts).WatchUnstructured(ctx)
}

// NewMetadataSource returns a Source of object metadata only
// (PartialObjectMetadata) of one resource.
func NewMetadataSource(rc *rest.Client, gvr schema.GroupVersionResource, namespace string) Source[*metav1.PartialObjectMetadata] {
	return &metadataSource{rc: rc, gvr: gvr, ns: namespace}
}

type metadataSource struct {
	rc  *rest.Client
	gvr schema.GroupVersionResource
	ns  string
}

func (s *metadataSource) List(ctx context.Context, opts metav1.ListOptions, each func(*metav1.PartialObjectMetadata) error) (ListPage, error) {
	body, err := request(s.rc, s.gvr, s.ns).Accept(dynamic.AcceptPartialObjectMetadataList, rest.ContentTypeJSON).VersionedParams(&opts).DoRaw(ctx)
	if err != nil {
		return ListPage{}, err
	}
	var l metav1.PartialObjectMetadataList
	if err := json.Unmarshal(body, &l); err != nil {
		return ListPage{}, fmt.Errorf("informer: decode metadata list of %s: %w", s.gvr.Resource, err)
	}
	gvk := schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "PartialObjectMetadata"}
	for i := range l.Items {
		p := &l.Items[i]
		p.SetGroupVersionKind(gvk)
		if err := each(p); err != nil {
			return ListPage{}, err
		}
	}
	return ListPage{ResourceVersion: l.ResourceVersion, Continue: l.Continue}, nil
}

func (s *metadataSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return request(s.rc, s.gvr, s.ns).Accept(dynamic.AcceptPartialObjectMetadata, rest.ContentTypeJSON).VersionedParams(&opts).
		Watch(ctx, func(data []byte) (runtime.Object, error) {
			p := &metav1.PartialObjectMetadata{}
			if err := json.Unmarshal(data, p); err != nil {
				return nil, err
			}
			return p, nil
		})
}
