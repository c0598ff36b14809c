package events

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Object is what an event can be about: anything with object metadata and
// a kind. *unstructured.Unstructured and *metav1.PartialObjectMetadata are
// Objects, and so is a [Reference]; for an object that does not carry its
// kind (a typed object as typed clients return it), pass
// [ReferenceFor](obj, gvk).
type Object interface {
	identity
	GroupVersionKind() schema.GroupVersionKind
}

// Reference points at an object, as the regarding and related fields of an
// Event do (core/v1 ObjectReference). It is an [Object] itself, so an event
// can be recorded about an object the caller no longer holds, and used as
// regarding it is written as it is, FieldPath included.
type Reference struct {
	APIVersion      string
	Kind            string
	Namespace       string
	Name            string
	UID             types.UID
	ResourceVersion string
	// FieldPath names a part of the object, such as a container:
	// "spec.containers{web}".
	FieldPath string
}

var _ Object = Reference{}

// ReferenceFor returns the reference to obj, whose kind is gvk.
func ReferenceFor(obj metav1.Object, gvk schema.GroupVersionKind) Reference {
	return refOf(obj, gvk)
}

// identity is the part of an object a reference copies.
type identity interface {
	GetNamespace() string
	GetName() string
	GetUID() types.UID
	GetResourceVersion() string
}

func refOf(obj identity, gvk schema.GroupVersionKind) Reference {
	return Reference{
		APIVersion:      gvk.GroupVersion().String(),
		Kind:            gvk.Kind,
		Namespace:       obj.GetNamespace(),
		Name:            obj.GetName(),
		UID:             obj.GetUID(),
		ResourceVersion: obj.GetResourceVersion(),
	}
}

// GetNamespace returns r.Namespace.
func (r Reference) GetNamespace() string { return r.Namespace }

// GetName returns r.Name.
func (r Reference) GetName() string { return r.Name }

// GetUID returns r.UID.
func (r Reference) GetUID() types.UID { return r.UID }

// GetResourceVersion returns r.ResourceVersion.
func (r Reference) GetResourceVersion() string { return r.ResourceVersion }

// GroupVersionKind returns the kind named by APIVersion and Kind.
func (r Reference) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
}

// errNoKind is the error for an object that does not carry its kind.
var errNoKind = errors.New("events: the object has no apiVersion and kind; pass events.ReferenceFor(obj, gvk)")

// referenceTo returns the reference to obj: obj itself for a Reference, as
// client-go makes no reference to a reference.
func referenceTo(obj Object) (Reference, error) {
	switch r := obj.(type) {
	case Reference:
		return r, r.check()
	case *Reference:
		return *r, r.check()
	}
	ref := refOf(obj, obj.GroupVersionKind())
	return ref, ref.check()
}

func (r Reference) check() error {
	if r.Kind == "" || r.APIVersion == "" {
		return fmt.Errorf("%w (name %q)", errNoKind, r.Name)
	}
	if r.Name == "" {
		return fmt.Errorf("events: the %s has no name", r.Kind)
	}
	return nil
}

// isNil reports whether obj is nil, or a nil pointer in an interface.
func isNil(obj Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// content returns r as it is written in an Event: ObjectReference's JSON,
// empty fields left out.
func (r Reference) content() map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{
		"apiVersion":      r.APIVersion,
		"kind":            r.Kind,
		"namespace":       r.Namespace,
		"name":            r.Name,
		"uid":             string(r.UID),
		"resourceVersion": r.ResourceVersion,
		"fieldPath":       r.FieldPath,
	} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}
