package unstructured

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LastAppliedAnnotation is the annotation in which client-side apply keeps
// the configuration it last applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// NeatOptions tunes Neat. The zero value removes everything Neat knows of,
// status included.
type NeatOptions struct {
	// KeepStatus keeps the status stanza.
	KeepStatus bool
}

// serverMetadata are the metadata fields that the server sets and that a
// manifest author does not write.
var serverMetadata = []string{
	"managedFields",
	"resourceVersion",
	"uid",
	"creationTimestamp",
	"generation",
	"selfLink",
}

// Neat returns a copy of obj fit to be saved as a manifest: without
// metadata.managedFields, resourceVersion, uid, creationTimestamp,
// generation and selfLink, without the last-applied-configuration
// annotation, and without status unless opts.KeepStatus. Annotation and
// label maps left empty are removed. obj is not modified; a nil obj gives
// nil.
//
// The copy is deep for JSON values (maps, lists, scalars) and never panics:
// values of other Go types, which apimachinery's DeepCopy would panic on,
// are shared with obj.
func Neat(obj *apiunstructured.Unstructured, opts NeatOptions) *apiunstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := &apiunstructured.Unstructured{Object: copyMap(obj.Object)}
	if out.Object == nil {
		return out
	}
	if !opts.KeepStatus {
		delete(out.Object, "status")
	}
	md, ok := out.Object["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, f := range serverMetadata {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		delete(ann, LastAppliedAnnotation)
	}
	for _, f := range []string{"annotations", "labels"} {
		if isEmptyMap(md[f]) {
			delete(md, f)
		}
	}
	return out
}

// isEmptyMap reports whether v is an empty map or null.
func isEmptyMap(v any) bool {
	switch m := v.(type) {
	case map[string]any:
		return len(m) == 0
	case map[string]string:
		return len(m) == 0
	case nil:
		return true
	}
	return false
}

// StripManagedFields returns a copy of obj without metadata.managedFields
// (copied as Neat copies). obj is not modified; a nil obj gives nil.
func StripManagedFields(obj *apiunstructured.Unstructured) *apiunstructured.Unstructured {
	if obj == nil {
		return nil
	}
	out := &apiunstructured.Unstructured{Object: copyMap(obj.Object)}
	StripManagedFieldsInPlace(out)
	return out
}

// StripManagedFieldsInPlace deletes metadata.managedFields from obj itself:
// one map lookup and one delete, no copy. Use it on objects you own, for
// example as an informer transform before objects enter the cache (see
// StripManagedFieldsTransform). A nil obj is a no-op.
func StripManagedFieldsInPlace(obj *apiunstructured.Unstructured) {
	if obj == nil {
		return
	}
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
}

// StripManagedFieldsTransform has the shape of an informer transform
// function, func(any) (any, error). It strips managedFields in place from
// an *Unstructured, from every item of an *UnstructuredList, and from any
// other object with metav1 metadata (such as *metav1.PartialObjectMetadata);
// anything else, deletion tombstones included, is returned unchanged. It
// never returns an error.
//
// Like every transform, it must only see objects that nothing else holds
// yet: informers call transforms on freshly decoded objects, before they
// are stored.
func StripManagedFieldsTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *apiunstructured.Unstructured:
		StripManagedFieldsInPlace(o)
	case *apiunstructured.UnstructuredList:
		if o != nil {
			for i := range o.Items {
				StripManagedFieldsInPlace(&o.Items[i])
			}
		}
	default:
		if obj == nil || isNilPointer(obj) {
			return obj, nil
		}
		if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
			accessor.SetManagedFields(nil)
		}
	}
	return obj, nil
}

// isNilPointer reports whether v is a typed nil pointer, on which metadata
// accessors would panic.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// copyMap deep-copies JSON maps and lists; other values are shared.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyMap(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case map[string]string:
		if x == nil {
			return x
		}
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case []string:
		return append([]string(nil), x...)
	default:
		return v
	}
}
