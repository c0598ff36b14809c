package fake

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
)

// resourceClient serves one resource in one namespace ("" for all
// namespaces or a cluster-scoped resource).
type resourceClient struct {
	c         *Client
	gvr       schema.GroupVersionResource
	namespace string
}

var _ dynamic.NamespaceableResourceInterface = (*resourceClient)(nil)

// Namespace returns the client for one namespace.
func (r *resourceClient) Namespace(ns string) dynamic.ResourceInterface {
	out := *r
	out.namespace = ns
	return &out
}

// action describes a request for Intercept.
func (r *resourceClient) action(verb, name, subresource string) Action {
	return Action{Verb: verb, Resource: r.gvr, Namespace: r.namespace, Name: name, Subresource: subresource}
}

// nameOf is obj's name, "" for nil.
func nameOf(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	return obj.GetName()
}

// sub is the subresource path of a request ("" for the object itself).
func sub(subresources []string) string { return strings.Join(subresources, "/") }

// input checks and copies an object a caller passes in.
func input(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, badRequest("fake: nil object")
	}
	u, err := normalize(obj)
	if err != nil {
		return nil, badRequest("fake: %v", err)
	}
	return u, nil
}

// output copies a stored object for a caller.
func output(obj *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	return obj.DeepCopy(), nil
}

func requireName(name string) error {
	if name == "" {
		return badRequest("fake: resource name may not be empty")
	}
	return nil
}

// Create stores a new object. Subresources are not supported.
func (r *resourceClient) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if err := r.c.begin(ctx, r.action("create", nameOf(obj), sub(subresources))); err != nil {
		return nil, err
	}
	if err := invalidOptions("CreateOptions", metav1validation.ValidateCreateOptions(&opts)); err != nil {
		return nil, err
	}
	in, err := input(obj)
	if err != nil {
		return nil, err
	}
	if in.GetResourceVersion() != "" {
		// The API server's storage refuses this, and the server passes the
		// plain error on as a 500 with no reason.
		return nil, statusError(http.StatusInternalServerError, metav1.StatusReasonUnknown, nil, "%s", msgRVOnCreate)
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	if len(subresources) > 0 {
		return nil, unsupportedSubresource(res.gr(), in.GetName(), "create", subresources)
	}
	return output(r.c.createLocked(res, r.namespace, in, createOptions{dryRun: len(opts.DryRun) > 0}))
}

// Update replaces an object, or with subresource "status" its status.
func (r *resourceClient) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if err := r.c.begin(ctx, r.action("update", nameOf(obj), sub(subresources))); err != nil {
		return nil, err
	}
	if err := invalidOptions("UpdateOptions", metav1validation.ValidateUpdateOptions(&opts)); err != nil {
		return nil, err
	}
	in, err := input(obj)
	if err != nil {
		return nil, err
	}
	if ns := in.GetNamespace(); r.namespace != "" && ns != "" && ns != r.namespace {
		// The server's handler checks this before anything else.
		return nil, apierrors.NewBadRequest(msgNamespaceMismatch)
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	sub, err := res.checkSubresource(in.GetName(), "update", subresources)
	if err != nil {
		return nil, err
	}
	return output(r.c.updateLocked(res, r.namespace, in, updateOptions{dryRun: len(opts.DryRun) > 0, subresource: sub}))
}

// UpdateStatus replaces an object's status.
func (r *resourceClient) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return r.Update(ctx, obj, opts, "status")
}

// Delete deletes an object, or marks it deleted while it has finalizers.
func (r *resourceClient) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	if err := r.c.begin(ctx, r.action("delete", name, sub(subresources))); err != nil {
		return err
	}
	if err := requireName(name); err != nil {
		return err
	}
	if err := invalidOptions("DeleteOptions", metav1validation.ValidateDeleteOptions(&opts)); err != nil {
		return err
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	if len(subresources) > 0 {
		return unsupportedSubresource(res.gr(), name, "delete", subresources)
	}
	if err := res.checkScope(r.namespace, name, "delete"); err != nil {
		return err
	}
	key := objectKey(res.expectedNamespace(r.namespace), name)
	old := r.c.objects[r.gvr][key]
	if old == nil {
		return apierrors.NewNotFound(res.gr(), name)
	}
	return r.c.deleteLocked(res, key, old, opts)
}

// DeleteCollection deletes every object listOptions selects, each as Delete
// would with opts; it returns the first error and goes on past it.
func (r *resourceClient) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOptions metav1.ListOptions) error {
	if err := r.c.begin(ctx, r.action("deletecollection", "", "")); err != nil {
		return err
	}
	if err := invalidOptions("DeleteOptions", metav1validation.ValidateDeleteOptions(&opts)); err != nil {
		return err
	}
	req, err := parseListOptions(listOptions, false)
	if err != nil {
		return err
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	if err := res.checkScope(r.namespace, "", "deletecollection"); err != nil {
		return err
	}
	stored := r.c.objects[r.gvr]
	var first error
	for _, k := range sortedKeys(stored) {
		old := stored[k]
		if !matches(old, r.namespace, req.labels, req.fields) {
			continue
		}
		if err := r.c.deleteLocked(res, k, old, opts); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Get returns an object; with subresource "status", the whole object too,
// as the server does.
func (r *resourceClient) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if err := r.c.begin(ctx, r.action("get", name, sub(subresources))); err != nil {
		return nil, err
	}
	if err := requireName(name); err != nil {
		return nil, err
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	if _, err := res.checkSubresource(name, "get", subresources); err != nil {
		return nil, err
	}
	if err := res.checkScope(r.namespace, name, "get"); err != nil {
		return nil, err
	}
	obj := r.c.objects[r.gvr][objectKey(res.expectedNamespace(r.namespace), name)]
	if obj == nil {
		return nil, apierrors.NewNotFound(res.gr(), name)
	}
	return obj.DeepCopy(), nil
}

// List returns one page of the objects opts selects, sorted by namespace
// and name.
func (r *resourceClient) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := r.c.begin(ctx, r.action("list", "", "")); err != nil {
		return nil, err
	}
	req, err := parseListOptions(opts, false)
	if err != nil {
		return nil, err
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	if err := res.checkScope(r.namespace, "", "list"); err != nil {
		return nil, err
	}
	return r.c.listLocked(res, r.namespace, req)
}

// Watch streams the changes opts selects; see the package documentation.
func (r *resourceClient) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := r.c.begin(ctx, r.action("watch", "", "")); err != nil {
		return nil, err
	}
	req, err := parseListOptions(opts, true)
	if err != nil {
		return nil, err
	}
	r.c.mu.Lock()
	res := r.c.resourceLocked(r.gvr)
	if err := res.checkScope(r.namespace, "", "watch"); err != nil {
		r.c.mu.Unlock()
		return nil, err
	}
	w, err := r.c.watchLocked(res, r.namespace, req)
	r.c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	w.arm(ctx, timeout)
	return w, nil
}

// Patch applies a JSON, merge, strategic-merge (as a merge patch) or apply
// (create, or merge onto the stored object) patch.
func (r *resourceClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if err := r.c.begin(ctx, r.action("patch", name, sub(subresources))); err != nil {
		return nil, err
	}
	if err := requireName(name); err != nil {
		return nil, err
	}
	if err := invalidOptions("PatchOptions", metav1validation.ValidatePatchOptions(&opts, pt)); err != nil {
		return nil, err
	}
	if pt != types.ApplyPatchType && pt != types.ApplyCBORPatchType && !json.Valid(data) {
		// The server checks this before it looks for the object.
		return nil, badRequest("invalid JSON patch")
	}
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	res := r.c.resourceLocked(r.gvr)
	sub, err := res.checkSubresource(name, "patch", subresources)
	if err != nil {
		return nil, err
	}
	return output(r.c.patchLocked(res, r.namespace, name, pt, data, updateOptions{dryRun: len(opts.DryRun) > 0, subresource: sub, patch: true}))
}

// Apply sends obj as an apply patch: see Patch.
func (r *resourceClient) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error) {
	if err := r.c.begin(ctx, r.action("apply", name, sub(subresources))); err != nil {
		return nil, err
	}
	if err := requireName(name); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, badRequest("fake: nil object")
	}
	if len(obj.GetManagedFields()) > 0 {
		// The real client refuses this before sending anything.
		return nil, dynamic.ErrManagedFieldsSet
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, badRequest("fake: encode object: %v", err)
	}
	return r.Patch(ctx, name, types.ApplyPatchType, body, opts.ToPatchOptions(), subresources...)
}

// ApplyStatus is Apply to the status subresource.
func (r *resourceClient) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return r.Apply(ctx, name, obj, opts, "status")
}
