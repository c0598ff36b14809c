package wire

import (
	"context"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AcceptProtobufOnly asks for Kubernetes protobuf and nothing else: for
// objects decoded into Go types by their generated protobuf code, which
// cannot read JSON. Every built-in kind of kube-apiserver is served so;
// custom resources are not (the server answers 406).
const AcceptProtobufOnly = ContentTypeProtobuf

// UnmarshalObject decodes raw, the protobuf encoding of an object whose
// field 1 is its ObjectMeta (every Kubernetes kind), with unmarshal (the
// Go type's generated Unmarshal), leaving metadata.managedFields out
// undecoded unless keepManagedFields.
func UnmarshalObject(raw []byte, keepManagedFields bool, unmarshal func([]byte) error) error {
	return unmarshalWithoutManagedFields(raw, keepManagedFields, unmarshal, 1)
}

// ListProtobuf lists one page as Kubernetes protobuf and calls each with
// every item's encoding (without its envelope) as soon as it has arrived
// (see ReadProtobufList: the bytes are reused for the next item). A server
// that answers in another encoding is an error naming it.
func (e Endpoint) ListProtobuf(ctx context.Context, opts metav1.ListOptions, each func(raw []byte) error) (ListPage, error) {
	h := identity()
	h.Set("Accept", AcceptProtobufOnly)
	resp, err := e.Open(WithBulk(ctx), &opts, h)
	if err != nil {
		return ListPage{}, err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !IsProtobuf(ct) {
		return ListPage{}, fmt.Errorf("the server answered a protobuf list request with %q: this resource is not served as protobuf", ct)
	}
	lm, err := ReadProtobufList(resp.Body, each)
	if err != nil {
		return ListPage{}, err
	}
	page := ListPage{ResourceVersion: lm.ResourceVersion, Continue: lm.Continue}
	if lm.ShardInfo != nil {
		page.ShardSelector = lm.ShardInfo.Selector
	}
	return page, nil
}

// WatchProtobuf opens a watch as Kubernetes protobuf (opts.Watch is set
// for the caller): decode gets each event object's envelope (see
// UnwrapProtobuf); ERROR events carry a *metav1.Status. With known (a
// relist), ADDED frames of objects it holds are answered without a decode.
// A streaming list is asked for uncompressed, as WatchMetadata asks.
func (e Endpoint) WatchProtobuf(ctx context.Context, opts metav1.ListOptions, decode ObjectDecoder, known Known) (Stream, error) {
	opts.Watch = true
	streaming := sendsInitialEvents(opts)
	h := http.Header{"Accept": {AcceptProtobufOnly}, "Accept-Encoding": {"identity"}}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := e.Open(ctx, &opts, h)
	if err != nil {
		cancel()
		return Stream{}, err
	}
	if ct := resp.Header.Get("Content-Type"); !IsProtobuf(ct) {
		resp.Body.Close()
		cancel()
		return Stream{}, fmt.Errorf("the server answered a protobuf watch request with %q: this resource is not served as protobuf", ct)
	}
	var peek FramePeek
	if known != nil {
		peek = protobufKnownPeek(known)
	}
	w := NewProtobufWatch(resp.Body, cancel, decode, peek)
	return Stream{Interface: w, OneShot: streaming && resp.Uncompressed}, nil
}
