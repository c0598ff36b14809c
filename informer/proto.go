package informer

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/wire"
)

// ProtoObject is an object of a Go type with Kubernetes' generated
// protobuf code, such as the types of k8s.io/api (*corev1.Pod): informers
// of such types decode the server's protobuf straight into them. kdyn
// itself names no such type; a program that has them passes its own.
type ProtoObject interface {
	Object
	Marshal() ([]byte, error)
	Unmarshal(data []byte) error
}

// Proto says how an informer of ForResourceProto makes and changes its
// objects.
type Proto[T ProtoObject] struct {
	// New returns a new, empty object of the informer's type (for
	// example func() *corev1.Pod { return &corev1.Pod{} }). Required.
	New func() T
	// Transform changes each object before it is cached, after
	// managedFields stripping; InformerOptions.Transform does not apply to
	// these informers. Informers with different Transform functions are
	// distinct.
	Transform func(T) (T, error)
}

// ForResourceProto returns the shared informer of gvr's objects as the
// Go type p.New returns, creating it on first use (it runs once the
// factory runs, at once if it already does). Over kdyn's own client the
// objects come as protobuf, decoded by the type's own generated code
// (managedFields cut out undecoded unless opts.KeepManagedFields); over
// any other dynamic.Interface they are converted from its unstructured
// objects. The resource must be served as protobuf: every built-in kind
// is, custom resources are not.
//
// With opts.Compact the cache keeps each object's protobuf encoding and
// decodes it on every read (each read is then the reader's own object);
// otherwise objects are kept decoded and shared with every reader, who
// must not modify them. opts.Transform and opts.MetadataTransform do not
// apply: p.Transform does.
func ForResourceProto[T ProtoObject](f *Factory, gvr schema.GroupVersionResource, opts InformerOptions, p Proto[T]) *Informer[T] {
	return shared(f, protoKind(p), gvr, opts, true)
}

// ReleaseProto is Release for an informer of ForResourceProto with the
// same gvr, opts and p.
func ReleaseProto[T ProtoObject](f *Factory, gvr schema.GroupVersionResource, opts InformerOptions, p Proto[T]) bool {
	k := f.key(gvr, opts, false)
	protoKind(p).keyed(&k)
	return f.release(k)
}

// protoKind is the objectKind of ForResourceProto informers of p.
func protoKind[T ProtoObject](p Proto[T]) objectKind[T] {
	return objectKind[T]{
		keyed: func(k *factoryKey) {
			k.proto = reflect.TypeOf(p.New())
			k.transform = 0
			if p.Transform != nil {
				k.transform = reflect.ValueOf(p.Transform).Pointer()
			}
		},
		build: func(ri dynamic.ResourceInterface, opts InformerOptions, o Options[T]) *Informer[T] {
			o.Transform = p.Transform
			if opts.Compact {
				o.storage = newProtoStorage(p.New)
			}
			return New(NewProtoSource(ri, p.New, SourceOptions{KeepManagedFields: opts.KeepManagedFields}), o)
		},
	}
}

// NewProtoSource returns a Source of ri's objects as the Go type newObj
// returns (see ForResourceProto). Over kdyn's own dynamic client it lists
// and watches as protobuf, decoding each object with its generated code as
// it arrives (managedFields cut out undecoded unless kept) and, in
// relists, leaving the objects the cache holds undecoded; over any other
// dynamic.Interface it converts ri's unstructured objects.
func NewProtoSource[T ProtoObject](ri dynamic.ResourceInterface, newObj func() T, opts SourceOptions) Source[T] {
	s := &protoSource[T]{ri: ri, newObj: newObj, keepMF: opts.KeepManagedFields}
	if p, ok := ri.(wire.Provider); ok {
		ep := p.WireEndpoint()
		s.ep = &ep
	}
	return s
}

// protoSource is the source of objects of a protobuf Go type.
type protoSource[T ProtoObject] struct {
	ri     dynamic.ResourceInterface
	ep     *wire.Endpoint
	newObj func() T
	keepMF bool
}

// List streams the page: items are decoded and handed to each as they
// arrive.
func (s *protoSource[T]) List(ctx context.Context, opts metav1.ListOptions, each func(T) error) (ListPage, error) {
	return s.list(ctx, opts, nil, func(o T, _ []byte) error { return each(o) })
}

// Watch opens a watch; event objects are T.
func (s *protoSource[T]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	st, err := s.watch(ctx, opts, nil)
	return st.Interface, err
}

// decode decodes an item's encoding (no envelope).
func (s *protoSource[T]) decode(raw []byte) (T, error) {
	o := s.newObj()
	err := wire.UnmarshalObject(raw, s.keepMF, o.Unmarshal)
	return o, err
}

func (s *protoSource[T]) list(ctx context.Context, opts metav1.ListOptions, known wire.Known, each func(T, []byte) error) (ListPage, error) {
	if s.ep != nil {
		var key []byte // reused: known's arguments are only valid during the call
		p, err := s.ep.ListProtobuf(ctx, opts, func(raw []byte) error {
			if known != nil {
				var held bool
				if key, held = wire.KnownObject(key, raw, known); held {
					return nil
				}
			}
			o, err := s.decode(raw)
			if err != nil {
				return fmt.Errorf("decode a list item as %T: %w", o, err)
			}
			return each(o, nil)
		})
		return ListPage(p), err
	}
	l, err := s.ri.List(ctx, opts)
	if err != nil {
		return ListPage{}, err
	}
	for i := range l.Items {
		o, err := s.fromUnstructured(&l.Items[i])
		if err != nil {
			return ListPage{}, err
		}
		if err := each(o, nil); err != nil {
			return ListPage{}, err
		}
	}
	return listPage(l), nil
}

// fromUnstructured converts an object of a client without the fast paths.
func (s *protoSource[T]) fromUnstructured(u *unstructured.Unstructured) (T, error) {
	if !s.keepMF {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	o := s.newObj()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
		return o, fmt.Errorf("convert %s to %T: %w", Key(u), o, err)
	}
	return o, nil
}

func (s *protoSource[T]) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	return countedList[T](ctx, s, opts)
}

func (s *protoSource[T]) watch(ctx context.Context, opts metav1.ListOptions, known wire.Known) (wire.Stream, error) {
	if s.ep != nil {
		return s.ep.WatchProtobuf(ctx, opts, func(env []byte) (runtime.Object, error) {
			raw, _, err := wire.UnwrapProtobuf(env)
			if err != nil {
				return nil, err
			}
			return s.decode(raw)
		}, known)
	}
	w, err := s.ri.Watch(ctx, opts)
	if err != nil {
		return wire.Stream{}, err
	}
	return wire.Stream{Interface: convertWatch(w, func(o runtime.Object) (runtime.Object, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			return s.fromUnstructured(u)
		}
		return o, nil
	})}, nil
}

// newProtoStorage returns the compact store of ForResourceProto
// informers: each object's protobuf encoding. A decoded object costs
// several times its encoding (a Go map for each of labels and
// annotations, a string per value); reads cost a decode.
func newProtoStorage[T ProtoObject](newObj func() T) *encodedStorage[T] {
	return &encodedStorage[T]{
		m: map[string]compactEntry{},
		encode: func(key string, obj T, _ []byte) ([]byte, error) {
			raw, err := obj.Marshal()
			if err != nil {
				return nil, fmt.Errorf("informer: encode %s for the compact store: %w", key, err)
			}
			return raw, nil
		},
		decode: func(raw []byte) (T, error) {
			o := newObj()
			return o, o.Unmarshal(raw)
		},
	}
}
