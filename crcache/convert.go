package crcache

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/informer"
)

// form is the Go type a caller reads a kind as: the scheme's type, an
// Unstructured, or PartialObjectMetadata. One store serves all three.
type form int

const (
	typed form = iota
	unstructuredForm
	metadataForm
)

// view reads a kind's stored objects in one form.
type view struct {
	form form
	gvk  schema.GroupVersionKind
	// typ is the struct type of typed objects (*typ implements
	// client.Object).
	typ reflect.Type
}

// viewOf is the view obj asks for.
func viewOf(obj runtime.Object, gvk schema.GroupVersionKind) (view, error) {
	switch obj.(type) {
	case *unstructured.Unstructured:
		return view{form: unstructuredForm, gvk: gvk}, nil
	case *metav1.PartialObjectMetadata:
		return view{form: metadataForm, gvk: gvk}, nil
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return view{}, fmt.Errorf("crcache: %T is not a pointer to a struct", obj)
	}
	if _, ok := obj.(client.Object); !ok {
		return view{}, fmt.Errorf("crcache: %T is not a client.Object", obj)
	}
	return view{form: typed, gvk: gvk, typ: t.Elem()}, nil
}

// key identifies the view (views of one kind with equal keys are equal).
func (v view) key() string {
	switch v.form {
	case unstructuredForm:
		return "unstructured"
	case metadataForm:
		return "metadata"
	}
	return v.typ.PkgPath() + "." + v.typ.Name()
}

// fromObject converts a stored whole object (shared, read-only) to the
// view's form. With share, an Unstructured is returned as stored (the
// caller promised not to modify it); otherwise the result is the caller's
// own. Typed objects are always decoded afresh, so they are the caller's
// own either way.
func (v view) fromObject(u *unstructured.Unstructured, share bool) (client.Object, error) {
	switch v.form {
	case unstructuredForm:
		if share {
			return u, nil
		}
		c := u.DeepCopy()
		c.SetGroupVersionKind(v.gvk)
		return c, nil
	case metadataForm:
		m := &metav1.PartialObjectMetadata{}
		if md, ok := u.Object["metadata"].(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &m.ObjectMeta); err != nil {
				return nil, fmt.Errorf("crcache: metadata of %s %s: %w", v.gvk.Kind, informer.Key(u), err)
			}
		}
		m.SetGroupVersionKind(v.gvk)
		return m, nil
	}
	obj := reflect.New(v.typ).Interface().(client.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("crcache: %s %s as %T: %w", v.gvk.Kind, informer.Key(u), obj, err)
	}
	// As controller-runtime's typed objects: a copy has its kind set, an
	// object as its informer holds it (shared reads, handlers) has not.
	if share {
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	} else {
		obj.GetObjectKind().SetGroupVersionKind(v.gvk)
	}
	return obj, nil
}

// fromMetadata converts a stored metadata-only object (shared, read-only)
// to the view's form, which must be metadataForm.
func (v view) fromMetadata(m *metav1.PartialObjectMetadata, share bool) (client.Object, error) {
	if v.form != metadataForm {
		return nil, fmt.Errorf("crcache: internal error: %s read from a metadata-only store", v.key())
	}
	if share {
		return m, nil
	}
	c := m.DeepCopy()
	c.SetGroupVersionKind(v.gvk)
	return c, nil
}

// toUnstructured converts obj (of any form) to an Unstructured.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return o, nil
	case runtime.Object:
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: m}, nil
	}
	return nil, fmt.Errorf("crcache: a transform returned %T, which is not a runtime.Object", obj)
}

// set copies src into dst, which must be of src's type (as
// controller-runtime's cache reader does).
func set(dst, src client.Object) error {
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if !sv.Type().AssignableTo(dv.Type()) {
		return fmt.Errorf("cache had type %s, but %s was asked for", sv.Type(), dv.Type())
	}
	reflect.Indirect(dv).Set(reflect.Indirect(sv))
	return nil
}
