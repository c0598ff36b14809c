package fake

import (
	"encoding/json"
	"net/http"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"
)

const (
	// generateNameSuffix and maxGenerateNameBase are the API server's:
	// a generated name is generateName cut to 58 characters plus 5 random
	// ones.
	generateNameSuffix  = 5
	maxGenerateNameBase = 63 - generateNameSuffix
	// generateNameRetries is how many random names Create tries before it
	// gives up, as the server retries on collisions.
	generateNameRetries = 8
)

type createOptions struct {
	dryRun bool
	// seed keeps the system fields the object carries.
	seed bool
}

type updateOptions struct {
	dryRun      bool
	subresource string // "" or "status"
	// patch is set for patches: a uid in the patched object is then not a
	// precondition but an (invalid) change.
	patch bool
}

// checkScope rejects requests a real server has no route for: a namespaced
// resource without a namespace (except list and watch), a cluster-scoped
// one with a namespace.
func (r resource) checkScope(namespace, name, verb string) error {
	if !r.scopeKnown {
		return nil
	}
	if r.info.Namespaced && namespace == "" && verb != "list" && verb != "watch" {
		return noRoute(r.gr(), name, "%s is namespaced: %s needs a namespace (use Namespace(ns)); a real server has no route for it", r.gr(), verb)
	}
	if !r.info.Namespaced && namespace != "" {
		return noRoute(r.gr(), name, "%s is cluster-scoped: %s must not name a namespace (got %q); a real server has no route for it", r.gr(), verb, namespace)
	}
	return nil
}

// expectedNamespace is the namespace objects of a request must have.
func (r resource) expectedNamespace(namespace string) string {
	if r.scopeKnown && !r.info.Namespaced {
		return ""
	}
	return namespace
}

// checkSubresource accepts the main resource and, for resources with one,
// the status subresource.
func (r resource) checkSubresource(name, verb string, subresources []string) (string, error) {
	switch {
	case len(subresources) == 0:
		return "", nil
	case len(subresources) == 1 && subresources[0] == "status":
		if !r.info.Status {
			return "", noStatusSubresource(r.gr(), name)
		}
		return "status", nil
	default:
		return "", unsupportedSubresource(r.gr(), name, verb, subresources)
	}
}

// ensureNamespace is the API server's rule for the namespace of an object
// in a request: unset takes the request's, cluster-scoped clears it, and a
// different one is an error.
func ensureNamespace(expected string, obj *unstructured.Unstructured) error {
	switch ns := obj.GetNamespace(); {
	case ns == expected:
		return nil
	case ns == "":
		obj.SetNamespace(expected)
		return nil
	case expected == "":
		obj.SetNamespace("")
		return nil
	default:
		return apierrors.NewBadRequest(msgNamespaceMismatch)
	}
}

// checkType defaults a missing apiVersion and kind from the resource, and
// rejects ones the resource does not serve.
func checkType(r resource, obj *unstructured.Unstructured) error {
	gv := r.info.GVR.GroupVersion().String()
	switch av := obj.GetAPIVersion(); {
	case av == "":
		obj.SetAPIVersion(gv)
	case av != gv:
		return badRequest("fake: the object's apiVersion %q does not match the request's %q (resource %s)", av, gv, r.gr())
	}
	switch kind := obj.GetKind(); {
	case kind == "" && r.kindKnown:
		obj.SetKind(r.info.Kind)
	case kind == "":
		return badRequest("fake: the object has no kind and nothing registered %s: set kind", r.info.GVR)
	case r.kindKnown && kind != r.info.Kind:
		return badRequest("fake: %s serves kind %q, not %q", r.gr(), r.info.Kind, kind)
	}
	return nil
}

// createLocked stores a new object; obj is the client's to keep.
func (c *Client) createLocked(res resource, namespace string, obj *unstructured.Unstructured, opts createOptions) (*unstructured.Unstructured, error) {
	gr := res.gr()
	if !opts.seed {
		if err := res.checkScope(namespace, obj.GetName(), "create"); err != nil {
			return nil, err
		}
	}
	if err := checkType(res, obj); err != nil {
		return nil, err
	}
	namespaced := res.info.Namespaced
	if res.scopeKnown {
		if err := ensureNamespace(res.expectedNamespace(namespace), obj); err != nil {
			return nil, err
		}
	} else {
		// Nobody said: the request's namespace, else the object's, decides.
		if namespace != "" {
			if err := ensureNamespace(namespace, obj); err != nil {
				return nil, err
			}
		}
		namespaced = obj.GetNamespace() != ""
	}
	if res.info.Status && !opts.seed {
		unstructured.RemoveNestedField(obj.Object, "status")
	}
	stored := c.objects[res.info.GVR]
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		base := obj.GetGenerateName()
		if len(base) > maxGenerateNameBase {
			base = base[:maxGenerateNameBase]
		}
		for range generateNameRetries {
			name := base + utilrand.String(generateNameSuffix)
			if _, taken := stored[objectKey(obj.GetNamespace(), name)]; !taken {
				obj.SetName(name)
				break
			}
		}
		if obj.GetName() == "" {
			return nil, apierrors.NewGenerateNameConflict(gr, base, 1)
		}
	}
	if errs := validation.ValidateObjectMetaAccessor(obj, namespaced, res.nameFn, field.NewPath("metadata")); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schemaKind(res, obj), obj.GetName(), errs)
	}
	key := objectKey(obj.GetNamespace(), obj.GetName())
	if _, exists := stored[key]; exists {
		return nil, apierrors.NewAlreadyExists(gr, obj.GetName())
	}
	now := metav1.Now()
	if !opts.seed || obj.GetUID() == "" {
		obj.SetUID(newUID())
	}
	if !opts.seed || obj.GetCreationTimestamp().Time.IsZero() {
		obj.SetCreationTimestamp(now)
	}
	if !opts.seed || obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	if !opts.seed {
		obj.SetDeletionTimestamp(nil)
		obj.SetDeletionGracePeriodSeconds(nil)
	}
	obj.SetResourceVersion("")
	obj.SetSelfLink("")
	if opts.dryRun {
		return obj, nil
	}
	res = c.learnLocked(res, obj.GetKind(), namespaced)
	return c.commitLocked(res.info.GVR, key, watch.Added, obj, nil), nil
}

// updateLocked replaces a stored object (or its status); obj is the
// client's to keep.
func (c *Client) updateLocked(res resource, namespace string, obj *unstructured.Unstructured, opts updateOptions) (*unstructured.Unstructured, error) {
	gr, name := res.gr(), obj.GetName()
	if name == "" {
		return nil, badRequest("fake: the object to update has no name")
	}
	if err := res.checkScope(namespace, name, "update"); err != nil {
		return nil, err
	}
	if err := checkType(res, obj); err != nil {
		return nil, err
	}
	if err := ensureNamespace(res.expectedNamespace(namespace), obj); err != nil {
		return nil, err
	}
	key := objectKey(obj.GetNamespace(), name)
	old := c.objects[res.info.GVR][key]
	if old == nil {
		return nil, apierrors.NewNotFound(gr, name)
	}
	switch rv := obj.GetResourceVersion(); {
	case rv == "":
		// Unconditional update.
	case rv != old.GetResourceVersion():
		return nil, conflict(gr, name, msgOptimisticLock)
	}
	if uid := obj.GetUID(); !opts.patch && uid != "" && uid != old.GetUID() {
		return nil, conflict(gr, name, "Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, old.GetUID())
	}

	next := obj
	switch {
	case opts.subresource == "status":
		next = old.DeepCopy()
		copyTopLevel(next, obj, "status")
	case res.info.Status:
		copyTopLevel(next, old, "status")
	}
	next.SetResourceVersion(old.GetResourceVersion())
	next.SetGeneration(old.GetGeneration())
	next.SetCreationTimestamp(old.GetCreationTimestamp())
	if ts := old.GetDeletionTimestamp(); ts != nil {
		next.SetDeletionTimestamp(ts)
	}
	if gp := old.GetDeletionGracePeriodSeconds(); gp != nil && next.GetDeletionGracePeriodSeconds() == nil {
		next.SetDeletionGracePeriodSeconds(gp)
	}
	if next.GetUID() == "" {
		next.SetUID(old.GetUID())
	}
	next.SetSelfLink("")
	errs := validation.ValidateObjectMetaAccessorUpdate(next, old, field.NewPath("metadata"))
	errs = append(errs, validation.ValidateFinalizers(next.GetFinalizers(), field.NewPath("metadata", "finalizers"))...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schemaKind(res, next), name, errs)
	}
	if specChanged(old, next) {
		next.SetGeneration(old.GetGeneration() + 1)
	}
	if reflect.DeepEqual(next.Object, old.Object) {
		// A no-op: like the server, write nothing and keep the
		// resourceVersion.
		return old, nil
	}
	typ := watch.Modified
	if next.GetDeletionTimestamp() != nil && len(next.GetFinalizers()) == 0 {
		// The last finalizer is gone from an object being deleted.
		typ = watch.Deleted
	}
	if opts.dryRun {
		return next, nil
	}
	return c.commitLocked(res.info.GVR, key, typ, next, old), nil
}

// patchLocked patches a stored object (or, for apply, creates it).
func (c *Client) patchLocked(res resource, namespace, name string, pt types.PatchType, data []byte, opts updateOptions) (*unstructured.Unstructured, error) {
	gr := res.gr()
	if err := res.checkScope(namespace, name, "patch"); err != nil {
		return nil, err
	}
	old := c.objects[res.info.GVR][objectKey(res.expectedNamespace(namespace), name)]
	if old == nil && pt != types.ApplyPatchType {
		return nil, apierrors.NewNotFound(gr, name)
	}
	var oldJSON []byte
	if old != nil {
		b, err := json.Marshal(old.Object)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		oldJSON = b
	}
	var patched []byte
	switch pt {
	case types.ApplyPatchType:
		body, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, badRequest("error encoding patch: %v", err)
		}
		if old == nil {
			if opts.subresource != "" {
				return nil, apierrors.NewNotFound(gr, name)
			}
			obj, err := decodeObject(body)
			if err != nil {
				return nil, badRequest("fake: apply patch: %v", err)
			}
			if obj.GetName() != name {
				return nil, nameMismatch(obj.GetName(), name)
			}
			return c.createLocked(res, namespace, obj, createOptions{dryRun: opts.dryRun})
		}
		if patched, err = jsonpatch.MergePatch(oldJSON, body); err != nil {
			return nil, badRequest("fake: apply patch: %v", err)
		}
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = p.Apply(oldJSON); err != nil {
			return nil, statusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, nil, "%s", err.Error())
		}
	case types.MergePatchType, types.StrategicMergePatchType:
		var err error
		if patched, err = jsonpatch.MergePatch(oldJSON, data); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	default:
		return nil, statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, nil,
			"fake: patch type %q is not supported", pt)
	}
	obj, err := decodeObject(patched)
	if err != nil {
		return nil, apierrors.NewInvalid(schemaKind(res, old), name, field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), err.Error())})
	}
	if obj.GetName() != name {
		return nil, nameMismatch(obj.GetName(), name)
	}
	return c.updateLocked(res, namespace, obj, opts)
}

func nameMismatch(objName, urlName string) error {
	return badRequest("the name of the object (%s) does not match the name on the URL (%s)", objName, urlName)
}

// deleteLocked deletes a stored object, or marks it deleted while
// finalizers remain.
func (c *Client) deleteLocked(res resource, key string, old *unstructured.Unstructured, opts metav1.DeleteOptions) error {
	gr, name := res.gr(), old.GetName()
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.GetUID() {
			return conflict(gr, name, "Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, old.GetUID())
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != old.GetResourceVersion() {
			return conflict(gr, name, "Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, old.GetResourceVersion())
		}
	}
	if old.GetDeletionTimestamp() != nil {
		// Already being deleted: it goes when its finalizers do.
		return nil
	}
	if len(opts.DryRun) > 0 {
		return nil
	}
	if len(old.GetFinalizers()) > 0 {
		next := old.DeepCopy()
		now := metav1.Now()
		next.SetDeletionTimestamp(&now)
		zero := int64(0)
		next.SetDeletionGracePeriodSeconds(&zero)
		c.commitLocked(res.info.GVR, key, watch.Modified, next, old)
		return nil
	}
	c.commitLocked(res.info.GVR, key, watch.Deleted, old.DeepCopy(), old)
	return nil
}

// copyTopLevel sets dst's top-level field to src's, or removes it when src
// has none.
func copyTopLevel(dst, src *unstructured.Unstructured, field string) {
	if v, ok := src.Object[field]; ok {
		dst.Object[field] = runtime.DeepCopyJSONValue(v)
	} else {
		delete(dst.Object, field)
	}
}

// specChanged reports whether anything outside metadata and status
// differs: the changes that increment metadata.generation.
func specChanged(old, next *unstructured.Unstructured) bool {
	strip := func(m map[string]any) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return !reflect.DeepEqual(strip(old.Object), strip(next.Object))
}

// schemaKind is the group and kind Invalid errors name.
func schemaKind(res resource, obj *unstructured.Unstructured) schema.GroupKind {
	kind := res.info.Kind
	if obj != nil && obj.GetKind() != "" {
		kind = obj.GetKind()
	}
	return schema.GroupKind{Group: res.info.GVR.Group, Kind: kind}
}
