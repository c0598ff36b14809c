package wire

import (
	"context"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Opener sends a GET of one resource collection (in one namespace, or
// all) with opts as its query parameters and header's headers, and returns
// the open response of a 200–206 answer for the caller to read and close;
// any other answer is an *apierrors.StatusError. kdyn's dynamic client
// provides it over its rest.Client (see Provider); a watch (opts.Watch) is
// sent as rest sends watches: not rate limited, not bounded by
// Config.Timeout.
type Opener func(ctx context.Context, opts *metav1.ListOptions, header http.Header) (*http.Response, error)

// Provider is implemented by the resource clients of kdyn's own dynamic
// client: it hands over their Endpoint, so that an informer built on a
// dynamic.Interface reaches the fast paths when the client is kdyn's own.
// The method is exported for kdyn's packages only: other modules cannot
// name its result type.
type Provider interface {
	WireEndpoint() Endpoint
}

// Endpoint lists and watches one resource in one namespace ("" for all)
// over kdyn's fast paths: lists are read and decoded as they arrive, whole
// objects are decoded in one pass into maps (managedFields skipped unless
// kept), metadata comes as protobuf, objects the caller already holds at
// the same resourceVersion are not decoded at all, and each large transfer
// goes over the connection and encoding that cost both ends least (see
// ListObjects, WatchObjects, ListMetadata, WatchMetadata).
type Endpoint struct {
	Open Opener
}

// ListPage is what one list request returned besides its items.
type ListPage struct {
	// ResourceVersion of the list (the snapshot the items come from).
	ResourceVersion string
	// Continue is the token of the next page, "" on the last page.
	Continue string
	// ShardSelector is the shard selector the server says it applied
	// (ListMeta.shardInfo.selector): "" when the request had none, or the
	// server does not shard.
	ShardSelector string
}

// Known reports whether the caller holds the object with cache key key
// ("namespace/name" or "name") at resourceVersion rv. key and rv are only
// valid during the call. Objects it knows are not decoded: a list skips
// them, a watch answers their ADDED events with a stub object that is
// neither *unstructured.Unstructured nor *metav1.PartialObjectMetadata.
type Known func(key, rv string) bool

// Decoding says how whole objects are decoded.
type Decoding struct {
	// OmitManagedFields leaves metadata.managedFields out of each object
	// without decoding it.
	OmitManagedFields bool
	// Text hands over each object's JSON as the server sent it (less
	// managedFields when omitted): list items through ListObjects' each,
	// watch event objects as *TextObject.
	Text bool
}

// TextObject is a watch event's object with its JSON text, from
// WatchObjects with Decoding.Text.
type TextObject struct {
	*unstructured.Unstructured
	// Text is the object's JSON as the server sent it; the receiver may
	// keep it.
	Text []byte
}

// Stream is an open watch and how it came.
type Stream struct {
	// Interface is the watch; it is an EventReader.
	watch.Interface
	// OneShot reports a streaming list worth ending after its initial
	// events, to watch on with a plain watch from the initial-events-end
	// bookmark: it came gzip-compressed (each later event would be a gzip
	// block of its own) or over HTTP/1.1 on a connection of its own (which
	// a long watch should not hold).
	OneShot bool
}

// identity asks for an uncompressed answer. Informers ask so for their
// lists and watches: on the fast networks controllers run on, compressing
// a large list costs the server (and the client inflating it) more than
// the transfer it saves, and the server flushes every watch event, so each
// would be a deflate block of its own.
func identity() http.Header { return http.Header{"Accept-Encoding": {"identity"}} }

// ListObjects lists one page of whole objects and calls each for every
// item, in order, as soon as the item has arrived: decoding overlaps the
// transfer and the page is never held whole. Items known holds (when not
// nil) are skipped undecoded. text is the item's JSON with Decoding.Text,
// nil otherwise. Items the server sent without apiVersion and kind get the
// list's (their text too).
//
// The list is a bulk transfer (WithBulk): on a client that has a bulk
// transport it goes over HTTP/1.1 on a connection of its own, which costs
// both ends far less than Go's HTTP/2 framing and flow control.
func (e Endpoint) ListObjects(ctx context.Context, opts metav1.ListOptions, d Decoding, known Known, each func(obj map[string]any, text []byte) error) (ListPage, error) {
	resp, err := e.Open(WithBulk(ctx), &opts, identity())
	if err != nil {
		return ListPage{}, err
	}
	defer resp.Body.Close()
	parse := func(b []byte) (map[string]any, []byte, error) { return decodeItem(b, d) }
	return streamItems(resp.Body, known, parse, each)
}

// WatchObjects opens a watch of whole objects (opts.Watch is set for the
// caller). Event objects are *unstructured.Unstructured, or *TextObject
// with Decoding.Text; ERROR events carry a *metav1.Status. With known (a
// relist), ADDED frames of objects it holds are answered without a
// decode.
//
// A streaming list (opts.SendInitialEvents) is a bulk transfer, like
// ListObjects: the Stream is then OneShot when it came over HTTP/1.1.
func (e Endpoint) WatchObjects(ctx context.Context, opts metav1.ListOptions, d Decoding, known Known) (Stream, error) {
	opts.Watch = true
	streaming := sendsInitialEvents(opts)
	if streaming {
		ctx = WithBulk(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := e.Open(ctx, &opts, identity())
	if err != nil {
		cancel()
		return Stream{}, err
	}
	mo := MapOptions{OmitManagedFields: d.OmitManagedFields, Text: d.Text}
	if d.Text {
		mo.Decode = textMap
	}
	if known != nil {
		mo.Peek = knownPeek(known)
	}
	w := NewMapWatch(resp.Body, cancel, mo)
	return Stream{Interface: w, OneShot: streaming && resp.ProtoMajor < 2}, nil
}

// ListMetadata lists one page of object metadata, asking for protobuf and
// accepting JSON, and calls each for every item as it arrives (see
// ReadMetadataList). Items are without managedFields unless
// keepManagedFields.
func (e Endpoint) ListMetadata(ctx context.Context, opts metav1.ListOptions, keepManagedFields bool, each func(*metav1.PartialObjectMetadata) error) (ListPage, error) {
	h := identity()
	h.Set("Accept", AcceptMetadataListProtobuf)
	resp, err := e.Open(ctx, &opts, h)
	if err != nil {
		return ListPage{}, err
	}
	defer resp.Body.Close()
	lm, err := ReadMetadataList(resp.Body, resp.Header.Get("Content-Type"), keepManagedFields, each)
	return pageOf(lm), err
}

// pageOf is the ListPage of a list's metadata.
func pageOf(lm metav1.ListMeta) ListPage {
	page := ListPage{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue}
	if lm.ShardInfo != nil {
		page.ShardSelector = lm.ShardInfo.Selector
	}
	return page
}

// WatchMetadata opens a metadata-only watch (opts.Watch is set for the
// caller), asking for protobuf and accepting JSON: event objects are
// *metav1.PartialObjectMetadata. With known (a relist), ADDED protobuf
// frames of objects it holds are answered without a decode.
//
// It asks for an uncompressed answer, a streaming list
// (opts.SendInitialEvents) too, so that the stream goes on as the watch
// after its initial events: one request per resource to sync, where a
// compressed streaming list (each later event would be a deflate block of
// its own) needs a second, plain watch. A stream that came compressed
// anyway is OneShot.
func (e Endpoint) WatchMetadata(ctx context.Context, opts metav1.ListOptions, keepManagedFields bool, known Known) (Stream, error) {
	return e.watchAs(ctx, opts, AcceptMetadataProtobuf, known, func(body io.ReadCloser, cancel func(), contentType string, peek FramePeek) (EventReader, error) {
		return NewMetadataWatch(body, cancel, contentType, keepManagedFields, peek), nil
	})
}

// watchAs opens a watch asking for accept, uncompressed, and reads it with
// the EventReader open makes of the answer (peek: protobuf frames of
// objects known holds, when known is not nil); an error from open closes
// the answer.
func (e Endpoint) watchAs(ctx context.Context, opts metav1.ListOptions, accept string, known Known, open func(body io.ReadCloser, cancel func(), contentType string, peek FramePeek) (EventReader, error)) (Stream, error) {
	opts.Watch = true
	streaming := sendsInitialEvents(opts)
	h := http.Header{"Accept": {accept}, "Accept-Encoding": {"identity"}}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := e.Open(ctx, &opts, h)
	if err != nil {
		cancel()
		return Stream{}, err
	}
	var peek FramePeek
	if known != nil {
		peek = protobufKnownPeek(known)
	}
	w, err := open(resp.Body, cancel, resp.Header.Get("Content-Type"), peek)
	if err != nil {
		resp.Body.Close()
		cancel()
		return Stream{}, err
	}
	return Stream{Interface: w, OneShot: streaming && resp.Uncompressed}, nil
}

// sendsInitialEvents reports whether opts ask a watch for the initial
// events (a streaming list).
func sendsInitialEvents(opts metav1.ListOptions) bool {
	return opts.SendInitialEvents != nil && *opts.SendInitialEvents
}

// textMap is the MapDecoder of WatchObjects with Decoding.Text.
func textMap(m map[string]any, text []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: m}
	if text == nil {
		return u, nil
	}
	return &TextObject{Unstructured: u, Text: text}, nil
}
