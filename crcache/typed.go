package crcache

import (
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/informer"
)

// protoObject is a Go type with Kubernetes' generated protobuf code: the
// scheme's types of the built-in kinds. Their stores decode the server's
// protobuf straight into the type (informer.ForResourceProto).
type protoObject interface {
	client.Object
	Marshal() ([]byte, error)
	Unmarshal(data []byte) error
}

// protobufPackages are where the Go types of kinds that kube-apiserver
// serves as protobuf live (its own, the CRD API's and the aggregator's).
// Other types with protobuf code (an aggregated API's) may be served by a
// server that cannot send protobuf: their stores stay unstructured.
var protobufPackages = []string{"k8s.io/api/", "k8s.io/apiextensions-apiserver/pkg/apis/", "k8s.io/kube-aggregator/pkg/apis/"}

// protoType returns the scheme's Go type of gvk (a struct type) if its
// objects are decoded from protobuf, else nil.
func (c *Cache) protoType(gvk schema.GroupVersionKind) reflect.Type {
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil
	}
	if _, ok := obj.(protoObject); !ok {
		return nil
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	for _, p := range protobufPackages {
		if strings.HasPrefix(t.Elem().PkgPath(), p) {
			return t.Elem()
		}
	}
	return nil
}

// proto is the informer.Proto of typ's objects, with a controller-runtime
// transform applied to them as they are.
func proto(gvk schema.GroupVersionKind, typ reflect.Type, t toolscache.TransformFunc) informer.Proto[protoObject] {
	p := informer.Proto[protoObject]{New: func() protoObject { return reflect.New(typ).Interface().(protoObject) }}
	if t != nil {
		p.Transform = func(o protoObject) (protoObject, error) {
			out, err := t(o)
			if err != nil {
				return nil, err
			}
			po, ok := out.(protoObject)
			if !ok || reflect.TypeOf(out).Elem() != typ {
				return nil, fmt.Errorf("crcache: a transform of %s returned %T, not *%s", gvk.Kind, out, typ)
			}
			return po, nil
		}
	}
	return p
}

// newTypedBacking is a backing over an informer of Go types; fresh says
// its reads decode a new object each time (compact mode), which needs no
// copy to be the caller's own.
func newTypedBacking(inf *informer.Informer[protoObject], fresh bool, release func()) backing {
	conv := func(v view, obj protoObject, share bool) (client.Object, error) {
		return v.fromTyped(obj, share, fresh)
	}
	return &store[protoObject]{inf: inf, conv: conv, stop: release}
}

// fromTyped converts a stored Go object (shared and read-only unless
// fresh) to the view's form. With share, a typed object of the view's type
// is returned as stored (the caller promised not to modify it), without
// its kind, as controller-runtime's informers hold objects; otherwise the
// result is the caller's own, with its kind set.
func (v view) fromTyped(obj protoObject, share, fresh bool) (client.Object, error) {
	switch v.form {
	case typed:
		if reflect.TypeOf(obj).Elem() != v.typ {
			break // another Go type for the kind: convert below
		}
		if share {
			return obj, nil
		}
		out := obj
		if !fresh {
			out = obj.DeepCopyObject().(protoObject)
		}
		out.GetObjectKind().SetGroupVersionKind(v.gvk)
		return out, nil
	case metadataForm:
		om, ok := obj.(interface{ GetObjectMeta() metav1.Object })
		if !ok {
			break // converted below
		}
		m, ok := om.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok {
			break
		}
		// Shared reads share the stored metadata's maps and slices, as
		// controller-runtime's metadata reads do.
		out := &metav1.PartialObjectMetadata{ObjectMeta: *m}
		if !share && !fresh {
			out.ObjectMeta = *m.DeepCopy()
		}
		out.SetGroupVersionKind(v.gvk)
		return out, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("crcache: %s %s: %w", v.gvk.Kind, informer.Key(obj), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(v.gvk)
	if v.form == unstructuredForm {
		return u, nil
	}
	return v.fromObject(u, false)
}
