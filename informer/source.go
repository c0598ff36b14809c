package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/rest"
)

// NewSource returns a Source of whole objects of one resource in one
// namespace ("" for all namespaces or a cluster-scoped resource).
func NewSource(rc *rest.Client, gvr schema.GroupVersionResource, namespace string, opts ...SourceOption) Source[*unstructured.Unstructured] {
	s := &unstructuredSource{rc: rc, gvr: gvr, ns: namespace}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SourceOption configures NewSource.
type SourceOption func(*unstructuredSource)

// WithoutManagedFields makes the source leave metadata.managedFields out
// of the objects it decodes, without decoding that field at all: cheaper
// than a transform that deletes it (informers from a Factory use it unless
// InformerOptions.KeepManagedFields).
func WithoutManagedFields() SourceOption {
	return func(s *unstructuredSource) { s.omitMF = true }
}

type unstructuredSource struct {
	rc     *rest.Client
	gvr    schema.GroupVersionResource
	ns     string
	omitMF bool
}

// decode decodes one list item.
func (s *unstructuredSource) decode(raw []byte) (map[string]any, error) {
	if s.omitMF {
		return fastjson.DecodeObjectSharedOmittingManagedFields(raw, 1)
	}
	return fastjson.DecodeObjectShared(raw)
}

// watchRequest is the request of a watch with opts. A streaming list of
// whole objects is a bulk request (rest.Request.Bulk): its initial events
// come over HTTP/1.1, on a connection of their own, which costs both ends
// far less than HTTP/2's framing and flow control (the sync takes 0.6–0.75×
// the time; see docs/benchmarks.md). The reflector ends such a stream at
// its initial-events-end bookmark and watches on, from the bookmark, on the
// shared HTTP/2 connection.
func (s *unstructuredSource) watchRequest(opts metav1.ListOptions) *rest.Request {
	opts.Watch = true
	r := request(s.rc, s.gvr, s.ns).VersionedParams(&opts)
	if streamingList(opts) {
		r = r.Bulk()
	}
	if s.omitMF {
		r = r.OmitManagedFields()
	}
	return r
}

// streamingList reports whether opts ask a watch for the initial events.
func streamingList(opts metav1.ListOptions) bool {
	return opts.SendInitialEvents != nil && *opts.SendInitialEvents
}

// request is a GET of the resource, uncompressed (see
// rest.Request.Uncompressed): informers list and watch with it.
func request(rc *rest.Client, gvr schema.GroupVersionResource, ns string) *rest.Request {
	return resourceRequest(rc, gvr, ns).Uncompressed()
}

// resourceRequest is request with the encoding left to the transport.
func resourceRequest(rc *rest.Client, gvr schema.GroupVersionResource, ns string) *rest.Request {
	return rc.Get().Group(gvr.Group).Version(gvr.Version).Namespace(ns).Resource(gvr.Resource)
}

// List streams the page: items are decoded and handed to each as they
// arrive.
func (s *unstructuredSource) List(ctx context.Context, opts metav1.ListOptions, each func(*unstructured.Unstructured) error) (ListPage, error) {
	return s.listItems(ctx, opts, nil, each)
}

func (s *unstructuredSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.watchRequest(opts).WatchUnstructured(ctx)
}

// NewMetadataSource returns a Source of object metadata only
// (PartialObjectMetadata) of one resource. Objects are decoded without
// reflection; managedFields are dropped unless keepManagedFields.
func NewMetadataSource(rc *rest.Client, gvr schema.GroupVersionResource, namespace string, keepManagedFields bool) Source[*metav1.PartialObjectMetadata] {
	return &metadataSource{rc: rc, gvr: gvr, ns: namespace, keepMF: keepManagedFields}
}

type metadataSource struct {
	rc     *rest.Client
	gvr    schema.GroupVersionResource
	ns     string
	keepMF bool
}

// List streams the page: items are decoded and handed to each as they
// arrive.
func (s *metadataSource) List(ctx context.Context, opts metav1.ListOptions, each func(*metav1.PartialObjectMetadata) error) (ListPage, error) {
	lm, err := dynamic.StreamMetadataList(ctx, request(s.rc, s.gvr, s.ns).VersionedParams(&opts), s.keepMF, each)
	if err != nil {
		return ListPage{}, err
	}
	return ListPage{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue}, nil
}

func (s *metadataSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return dynamic.WatchMetadata(ctx, s.watchRequest(opts), s.keepMF)
}

// watchRequest is the request of a watch with opts. A streaming list of
// metadata may come gzip-compressed: its small protobuf events, compressed
// together in the blocks the server flushes, cost both ends far fewer
// writes and reads (the sync's CPU falls by about a third; see
// docs/benchmarks.md). The reflector ends such a stream at its
// initial-events-end bookmark and watches on uncompressed, since each later
// event would be a block of its own. Full objects are not asked compressed:
// compressing them costs the server more than the bytes it saves.
func (s *metadataSource) watchRequest(opts metav1.ListOptions) *rest.Request {
	opts.Watch = true
	if streamingList(opts) {
		return resourceRequest(s.rc, s.gvr, s.ns).VersionedParams(&opts).CompressedWatch()
	}
	return request(s.rc, s.gvr, s.ns).VersionedParams(&opts)
}
