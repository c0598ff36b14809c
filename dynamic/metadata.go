package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/rest"
)

// Accept headers of metadata-only requests: the server sends only
// apiVersion, kind and metadata of each object.
const (
	AcceptPartialObjectMetadata     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	AcceptPartialObjectMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
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
	return decodeMetadataAny(m.rc.request(m.rc.client.Get(), name, subresources).Accept(AcceptPartialObjectMetadataProtobuf).VersionedParams(&opts).Do(ctx), true)
}

func (m *metadataResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return ListMetadata(ctx, m.rc.request(m.rc.client.Get(), "", nil).VersionedParams(&opts), true)
}

// decodeMetadataListJSON decodes a JSON PartialObjectMetadataList without
// reflection.
func decodeMetadataListJSON(body []byte, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	l := &metav1.PartialObjectMetadataList{}
	list, err := fastjson.DecodeListShared(body, func(_ int, obj map[string]any) error {
		p, err := PartialObjectMetadataFromMap(obj, keepManagedFields)
		if err != nil {
			return err
		}
		l.Items = append(l.Items, *p)
		return nil
	})
	if err != nil {
		return nil, errorf("decode metadata list: %w", err)
	}
	l.APIVersion, _ = list["apiVersion"].(string)
	l.Kind, _ = list["kind"].(string)
	if md, ok := list["metadata"].(map[string]any); ok {
		l.ResourceVersion, _ = md["resourceVersion"].(string)
		l.Continue, _ = md["continue"].(string)
		if n, ok := md["remainingItemCount"].(int64); ok {
			l.RemainingItemCount = &n
		}
	}
	return l, nil
}

func (m *metadataResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return WatchMetadata(ctx, m.rc.request(m.rc.client.Get(), "", nil).VersionedParams(&opts), true)
}

func (m *metadataResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	if name == "" {
		return nil, errNameRequired
	}
	return decodeMetadataAny(m.rc.request(m.rc.client.Patch(string(pt)), name, subresources).Accept(AcceptPartialObjectMetadataProtobuf).Body(data).VersionedParams(&opts).Do(ctx), true)
}

func (m *metadataResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	return m.rc.Delete(ctx, name, opts, subresources...)
}

func (m *metadataResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOptions metav1.ListOptions) error {
	return m.rc.DeleteCollection(ctx, opts, listOptions)
}
