package dynamic

import (
	"context"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/wire"
	"github.com/kdyn/kdyn/rest"
)

// MetadataClient reads and writes object metadata only, for any resource —
// what garbage collectors and namespace cleaners need. The server sends
// *metav1.PartialObjectMetadata instead of whole objects, which is much
// smaller for resources with large specs.
type MetadataClient struct {
	client *rest.Client
}

// Metadata returns a metadata-only client sharing c's connection.
func (c *DynamicClient) Metadata() *MetadataClient { return &MetadataClient{client: c.client} }

// NewMetadataForConfig returns a metadata-only client for cfg.
func NewMetadataForConfig(cfg *rest.Config) (*MetadataClient, error) {
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &MetadataClient{client: rc}, nil
}

// MetadataResourceInterface is the metadata-only counterpart of
// ResourceInterface.
type MetadataResourceInterface interface {
	// Get reads one object's metadata.
	Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error)
	// List reads the metadata of every object matching opts (one page).
	List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
	// Watch streams changes; event objects are *metav1.PartialObjectMetadata.
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// Patch patches an object and returns its metadata.
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*metav1.PartialObjectMetadata, error)
	// Delete deletes one object.
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error
	// DeleteCollection deletes every object matching listOptions.
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOptions metav1.ListOptions) error
}

// NamespaceableMetadataResourceInterface can be narrowed to one namespace.
type NamespaceableMetadataResourceInterface interface {
	// Namespace returns the client for one namespace.
	Namespace(string) MetadataResourceInterface
	MetadataResourceInterface
}

// Resource returns the metadata-only client for one resource.
func (m *MetadataClient) Resource(gvr schema.GroupVersionResource) NamespaceableMetadataResourceInterface {
	return &metadataResource{rc: resourceClient{client: m.client, resource: gvr}}
}

type metadataResource struct {
	rc resourceClient
}

func (m *metadataResource) Namespace(ns string) MetadataResourceInterface {
	out := *m
	out.rc.namespace = ns
	return &out
}

func (m *metadataResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	if name == "" {
		return nil, errNameRequired
	}
	return decodeMetadata(m.rc.request(m.rc.client.Get(), name, subresources).Accept(wire.AcceptMetadataProtobuf).VersionedParams(&opts).Do(ctx))
}

func (m *metadataResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	res := m.rc.request(m.rc.client.Get(), "", nil).Accept(wire.AcceptMetadataListProtobuf).VersionedParams(&opts).Do(ctx)
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	l, err := wire.DecodeMetadataList(res.ContentType(), body, true)
	if err != nil {
		return nil, errorf("%w", err)
	}
	return l, nil
}

func (m *metadataResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	ctx, cancel := context.WithCancel(ctx)
	resp, err := m.rc.open(ctx, &opts, http.Header{"Accept": {wire.AcceptMetadataProtobuf}, "Accept-Encoding": {"identity"}})
	if err != nil {
		cancel()
		return nil, err
	}
	return wire.NewMetadataWatch(resp.Body, cancel, resp.Header.Get("Content-Type"), true, nil), nil
}

func (m *metadataResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	if name == "" {
		return nil, errNameRequired
	}
	return decodeMetadata(m.rc.request(m.rc.client.Patch(string(pt)), name, subresources).Accept(wire.AcceptMetadataProtobuf).Body(data).VersionedParams(&opts).Do(ctx))
}

// decodeMetadata decodes one metadata answer in whichever encoding the
// server chose.
func decodeMetadata(res rest.Result) (*metav1.PartialObjectMetadata, error) {
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	p, err := wire.DecodeMetadata(res.ContentType(), body, true)
	if err != nil {
		return nil, errorf("%w", err)
	}
	return p, nil
}

func (m *metadataResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	return m.rc.Delete(ctx, name, opts, subresources...)
}

func (m *metadataResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOptions metav1.ListOptions) error {
	return m.rc.DeleteCollection(ctx, opts, listOptions)
}
