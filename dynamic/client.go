package dynamic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/internal/wire"
	"github.com/kdyn/kdyn/rest"
)

// DynamicClient is the client-go-compatible dynamic client. It is safe for
// concurrent use; create one per server and share it.
//
//nolint:revive // The name is part of the client-go contract.
type DynamicClient struct {
	client *rest.Client
}

var _ Interface = (*DynamicClient)(nil)

// NewForConfig returns a DynamicClient for cfg.
func NewForConfig(cfg *rest.Config) (*DynamicClient, error) {
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return New(rc), nil
}

// NewForConfigAndClient returns a DynamicClient for cfg that sends its
// requests through hc (for sharing one connection pool between clients).
func NewForConfigAndClient(cfg *rest.Config, hc *http.Client) (*DynamicClient, error) {
	rc, err := rest.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return New(rc), nil
}

// New returns a DynamicClient over an existing rest.Client.
func New(c *rest.Client) *DynamicClient { return &DynamicClient{client: c} }

// RESTClient returns the underlying rest.Client.
func (c *DynamicClient) RESTClient() *rest.Client { return c.client }

// Resource returns the client for one resource.
func (c *DynamicClient) Resource(resource schema.GroupVersionResource) NamespaceableResourceInterface {
	return &resourceClient{client: c.client, resource: resource}
}

type resourceClient struct {
	client    *rest.Client
	resource  schema.GroupVersionResource
	namespace string
}

var (
	_ NamespaceableResourceInterface = (*resourceClient)(nil)
	_ wire.Provider                  = (*resourceClient)(nil)
)

func (c *resourceClient) Namespace(ns string) ResourceInterface {
	out := *c
	out.namespace = ns
	return &out
}

// request starts a request for this resource, namespace and name.
func (c *resourceClient) request(r *rest.Request, name string, subresources []string) *rest.Request {
	r = r.Group(c.resource.Group).Version(c.resource.Version).Namespace(c.namespace).Resource(resourceSegment(c.resource.Resource))
	if name != "" {
		r = r.Name(name)
	}
	return r.SubResource(subresourceSegments(subresources)...)
}

var errNameRequired = errors.New("name is required")

func encodeObject(obj *unstructured.Unstructured) ([]byte, error) {
	if obj == nil {
		return nil, errors.New("dynamic: nil object")
	}
	return runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
}

func (c *resourceClient) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	body, err := encodeObject(obj)
	if err != nil {
		return nil, err
	}
	name := ""
	if len(subresources) > 0 {
		if name = obj.GetName(); name == "" {
			return nil, errNameRequired
		}
	}
	res := c.request(c.client.Post(), name, subresources).ContentType(rest.ContentTypeJSON).Body(body).VersionedParams(&opts).Do(ctx)
	return decodeResult(res)
}

func (c *resourceClient) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, errors.New("dynamic: nil object")
	}
	name := obj.GetName()
	if name == "" {
		return nil, errNameRequired
	}
	body, err := encodeObject(obj)
	if err != nil {
		return nil, err
	}
	res := c.request(c.client.Put(), name, subresources).ContentType(rest.ContentTypeJSON).Body(body).VersionedParams(&opts).Do(ctx)
	return decodeResult(res)
}

func (c *resourceClient) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return c.Update(ctx, obj, opts, "status")
}

// encodeDeleteOptions encodes DeleteOptions the way client-go does: with
// kind DeleteOptions and apiVersion v1.
func encodeDeleteOptions(opts metav1.DeleteOptions) ([]byte, error) {
	opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}
	b, err := json.Marshal(&opts)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func (c *resourceClient) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	if name == "" {
		return errNameRequired
	}
	body, err := encodeDeleteOptions(opts)
	if err != nil {
		return err
	}
	return c.request(c.client.Delete(), name, subresources).ContentType(rest.ContentTypeJSON).Body(body).Do(ctx).Error()
}

func (c *resourceClient) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOptions metav1.ListOptions) error {
	body, err := encodeDeleteOptions(opts)
	if err != nil {
		return err
	}
	return c.request(c.client.Delete(), "", nil).ContentType(rest.ContentTypeJSON).Body(body).VersionedParams(&listOptions).Do(ctx).Error()
}

func (c *resourceClient) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if name == "" {
		return nil, errNameRequired
	}
	res := c.request(c.client.Get(), name, subresources).VersionedParams(&opts).Do(ctx)
	return decodeResult(res)
}

func (c *resourceClient) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	body, err := c.request(c.client.Get(), "", nil).VersionedParams(&opts).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return DecodeList(body)
}

func (c *resourceClient) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request(c.client.Get(), "", nil).VersionedParams(&opts).Watch(ctx)
}

func (c *resourceClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if name == "" {
		return nil, errNameRequired
	}
	res := c.request(c.client.Patch(string(pt)), name, subresources).Body(data).VersionedParams(&opts).Do(ctx)
	return decodeResult(res)
}

// ErrManagedFieldsSet is returned by Apply for an object that carries
// managedFields: the server would read them as a claim to set them.
var ErrManagedFieldsSet = errors.New("dynamic: cannot apply an object with managedFields already set; strip metadata.managedFields (e.g. with unstructured.StripManagedFields) and send only the fields this manager owns")

func (c *resourceClient) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	body, err := applyBody(name, obj)
	if err != nil {
		return nil, err
	}
	patchOpts := opts.ToPatchOptions()
	res := c.request(c.client.Patch(string(types.ApplyPatchType)), name, subresources).Body(body).VersionedParams(&patchOpts).Do(ctx)
	return decodeResult(res)
}

// applyBody checks an Apply's arguments and encodes its configuration.
func applyBody(name string, obj *unstructured.Unstructured) ([]byte, error) {
	if name == "" {
		return nil, errNameRequired
	}
	if obj == nil {
		return nil, errors.New("dynamic: nil object")
	}
	if len(obj.GetManagedFields()) > 0 {
		return nil, ErrManagedFieldsSet
	}
	// client-go marshals the apply configuration with encoding/json (no
	// trailing newline, unlike the other writes).
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, errorf("encode apply configuration: %w", err)
	}
	return body, nil
}

func (c *resourceClient) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return c.Apply(ctx, name, obj, opts, "status")
}

func decodeResult(res rest.Result) (*unstructured.Unstructured, error) {
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	return DecodeObject(body)
}

// WireEndpoint hands kdyn's informers the fast paths of this resource
// (see internal/wire). It is not part of the client-go contract.
func (c *resourceClient) WireEndpoint() wire.Endpoint {
	return wire.Endpoint{Open: c.open}
}

// open sends a GET of the collection with opts and header: the wire
// layer's Opener.
func (c *resourceClient) open(ctx context.Context, opts *metav1.ListOptions, header http.Header) (*http.Response, error) {
	r := c.request(c.client.Get(), "", nil).VersionedParams(opts)
	for k, vs := range header {
		r.SetHeader(k, vs...)
	}
	return r.StreamResponse(ctx)
}

// errorf wraps decode failures with the package name.
func errorf(format string, args ...any) error { return fmt.Errorf("dynamic: "+format, args...) }
