package informer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/wire"
)

// feed is what a reflector lists and watches. Every Source is one (see
// feedOf); the sources of NewResourceSource and NewMetadataSource over
// kdyn's own client use its fast paths through it.
type feed[T Object] interface {
	// list lists one page, calling each for every item in order. known,
	// when not nil (a relist), reports objects the cache holds at the same
	// resourceVersion, which the feed may leave out undecoded (the sink
	// counts them as seen itself). text is the item's JSON as the server
	// sent it, when the feed has it (for a compact store), else nil.
	list(ctx context.Context, opts metav1.ListOptions, known wire.Known, each func(obj T, text []byte) error) (ListPage, error)
	// watch opens a watch: event objects are T (bookmarks included), a
	// *wire.TextObject holding one, a stub for an object known holds (any
	// other type), or a *metav1.Status for ERROR events.
	watch(ctx context.Context, opts metav1.ListOptions, known wire.Known) (wire.Stream, error)
	// probeShard lists one page to learn whether the server shards
	// (the reflector's probe), returning it and how many items it held:
	// a list of whole objects, whose ListMeta echoes shardInfo.
	probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error)
}

// countedList is probeShard for a feed whose own lists are of whole
// objects: one of them, counted.
func countedList[T Object](ctx context.Context, f feed[T], opts metav1.ListOptions) (ListPage, int, error) {
	n := 0
	page, err := f.list(ctx, opts, nil, func(T, []byte) error { n++; return nil })
	return page, n, err
}

// feedOf returns the feed of src: src itself when it is one of this
// package's sources, else src's List and Watch.
func feedOf[T Object](src Source[T]) feed[T] {
	if f, ok := src.(feed[T]); ok {
		return f
	}
	return sourceFeed[T]{src}
}

// sourceFeed is the feed of a Source that has no fast paths.
type sourceFeed[T Object] struct{ src Source[T] }

func (f sourceFeed[T]) list(ctx context.Context, opts metav1.ListOptions, _ wire.Known, each func(T, []byte) error) (ListPage, error) {
	return f.src.List(ctx, opts, func(obj T) error { return each(obj, nil) })
}

func (f sourceFeed[T]) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	return countedList[T](ctx, f, opts)
}

func (f sourceFeed[T]) watch(ctx context.Context, opts metav1.ListOptions, _ wire.Known) (wire.Stream, error) {
	w, err := f.src.Watch(ctx, opts)
	return wire.Stream{Interface: w}, err
}

// SourceOptions configure NewResourceSource and NewMetadataSource. The
// zero value drops metadata.managedFields.
type SourceOptions struct {
	// KeepManagedFields keeps metadata.managedFields, which the sources
	// leave out by default: it is 20–40% of object bytes and controllers
	// almost never read it. Over kdyn's own client the field is skipped
	// without being decoded.
	KeepManagedFields bool
}

// NewResourceSource returns a Source of whole objects listed and watched
// through ri (a resource in one namespace, or in all). Over kdyn's own
// dynamic client it takes the fast paths: lists decoded as they arrive,
// over HTTP/1.1 for large transfers, objects decoded once into maps,
// managedFields skipped undecoded, and, in relists, objects the cache
// holds left undecoded. Over any other dynamic.Interface (dynamic/fake, a
// decorated client) it calls ri's List and Watch.
func NewResourceSource(ri dynamic.ResourceInterface, opts SourceOptions) Source[*unstructured.Unstructured] {
	return newObjectSource(ri, wire.Decoding{OmitManagedFields: !opts.KeepManagedFields})
}

// newObjectSource is NewResourceSource with the decoding spelled out (a
// compact informer asks for each object's text too).
func newObjectSource(ri dynamic.ResourceInterface, d wire.Decoding) *objectSource {
	s := &objectSource{ri: ri, dec: d}
	if p, ok := ri.(wire.Provider); ok {
		ep := p.WireEndpoint()
		s.ep = &ep
	}
	return s
}

// objectSource is the source of whole objects.
type objectSource struct {
	ri  dynamic.ResourceInterface
	ep  *wire.Endpoint // kdyn's own client: its fast paths; nil otherwise
	dec wire.Decoding
}

// List streams the page: items are decoded and handed to each as they
// arrive.
func (s *objectSource) List(ctx context.Context, opts metav1.ListOptions, each func(*unstructured.Unstructured) error) (ListPage, error) {
	return s.list(ctx, opts, nil, func(u *unstructured.Unstructured, _ []byte) error { return each(u) })
}

// Watch opens a watch; event objects are *unstructured.Unstructured.
func (s *objectSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	st, err := s.watch(ctx, opts, nil)
	return st.Interface, err
}

func (s *objectSource) list(ctx context.Context, opts metav1.ListOptions, known wire.Known, each func(*unstructured.Unstructured, []byte) error) (ListPage, error) {
	if s.ep != nil {
		p, err := s.ep.ListObjects(ctx, opts, s.dec, known, func(m map[string]any, text []byte) error {
			return each(&unstructured.Unstructured{Object: m}, text)
		})
		return ListPage(p), err
	}
	l, err := s.ri.List(ctx, opts)
	if err != nil {
		return ListPage{}, err
	}
	for i := range l.Items {
		u := &l.Items[i]
		if s.dec.OmitManagedFields {
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		}
		if err := each(u, nil); err != nil {
			return ListPage{}, err
		}
	}
	return listPage(l), nil
}

// listPage is the ListPage of a list from a dynamic.ResourceInterface.
func listPage(l *unstructured.UnstructuredList) ListPage {
	sel, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
	return ListPage{ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue(), ShardSelector: sel}
}

func (s *objectSource) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	return countedList[*unstructured.Unstructured](ctx, s, opts)
}

func (s *objectSource) watch(ctx context.Context, opts metav1.ListOptions, known wire.Known) (wire.Stream, error) {
	if s.ep != nil {
		return s.ep.WatchObjects(ctx, opts, s.dec, known)
	}
	w, err := s.ri.Watch(ctx, opts)
	if err != nil || !s.dec.OmitManagedFields {
		return wire.Stream{Interface: w}, err
	}
	return wire.Stream{Interface: convertWatch(w, func(o runtime.Object) (runtime.Object, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		}
		return o, nil
	})}, nil
}

// NewMetadataSource returns a Source of object metadata only
// (*metav1.PartialObjectMetadata) listed and watched through ri. Over
// kdyn's own dynamic client the server sends only metadata, as protobuf,
// decoded without reflection; over any other dynamic.Interface, ri's whole
// objects are cut down to their metadata.
func NewMetadataSource(ri dynamic.ResourceInterface, opts SourceOptions) Source[*metav1.PartialObjectMetadata] {
	s := &metadataSource{ri: ri, keepMF: opts.KeepManagedFields}
	if p, ok := ri.(wire.Provider); ok {
		ep := p.WireEndpoint()
		s.ep = &ep
	}
	return s
}

// metadataSource is the source of object metadata.
type metadataSource struct {
	ri     dynamic.ResourceInterface
	ep     *wire.Endpoint
	keepMF bool
}

// List streams the page: items are decoded and handed to each as they
// arrive.
func (s *metadataSource) List(ctx context.Context, opts metav1.ListOptions, each func(*metav1.PartialObjectMetadata) error) (ListPage, error) {
	return s.list(ctx, opts, nil, func(p *metav1.PartialObjectMetadata, _ []byte) error { return each(p) })
}

// Watch opens a watch; event objects are *metav1.PartialObjectMetadata.
func (s *metadataSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	st, err := s.watch(ctx, opts, nil)
	return st.Interface, err
}

func (s *metadataSource) list(ctx context.Context, opts metav1.ListOptions, _ wire.Known, each func(*metav1.PartialObjectMetadata, []byte) error) (ListPage, error) {
	if s.ep != nil {
		p, err := s.ep.ListMetadata(ctx, opts, s.keepMF, func(p *metav1.PartialObjectMetadata) error { return each(p, nil) })
		return ListPage(p), err
	}
	l, err := s.ri.List(ctx, opts)
	if err != nil {
		return ListPage{}, err
	}
	for i := range l.Items {
		p, err := wire.PartialObjectMetadataFromMap(l.Items[i].Object, s.keepMF)
		if err != nil {
			return ListPage{}, err
		}
		if err := each(p, nil); err != nil {
			return ListPage{}, err
		}
	}
	return listPage(l), nil
}

// probeShard lists whole objects (JSON): a PartialObjectMetadataList does
// not echo shardInfo.
func (s *metadataSource) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	if s.ep != nil {
		n := 0
		p, err := s.ep.ListObjects(ctx, opts, wire.Decoding{OmitManagedFields: true}, nil, func(map[string]any, []byte) error { n++; return nil })
		return ListPage(p), n, err
	}
	l, err := s.ri.List(ctx, opts)
	if err != nil {
		return ListPage{}, 0, err
	}
	return listPage(l), len(l.Items), nil
}

func (s *metadataSource) watch(ctx context.Context, opts metav1.ListOptions, known wire.Known) (wire.Stream, error) {
	if s.ep != nil {
		return s.ep.WatchMetadata(ctx, opts, s.keepMF, known)
	}
	w, err := s.ri.Watch(ctx, opts)
	if err != nil {
		return wire.Stream{}, err
	}
	return wire.Stream{Interface: convertWatch(w, func(o runtime.Object) (runtime.Object, error) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			return wire.PartialObjectMetadataFromMap(u.Object, s.keepMF)
		}
		return o, nil
	})}, nil
}
