package wire

import (
	"context"
	"fmt"
	"io"

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
	if err := notProtobuf("list", resp.Header.Get("Content-Type")); err != nil {
		return ListPage{}, err
	}
	lm, err := ReadProtobufList(resp.Body, each)
	return pageOf(lm), err
}

// notProtobuf is the error of a protobuf request answered in another
// encoding.
func notProtobuf(request, contentType string) error {
	if IsProtobuf(contentType) {
		return nil
	}
	return fmt.Errorf("the server answered a protobuf %s request with %q: this resource is not served as protobuf", request, contentType)
}

// WatchProtobuf opens a watch as Kubernetes protobuf (opts.Watch is set
// for the caller): decode gets each event object's envelope (see
// UnwrapProtobuf); ERROR events carry a *metav1.Status. With known (a
// relist), ADDED frames of objects it holds are answered without a decode.
// A streaming list is asked for uncompressed, as WatchMetadata asks.
func (e Endpoint) WatchProtobuf(ctx context.Context, opts metav1.ListOptions, decode ObjectDecoder, known Known) (Stream, error) {
	return e.watchAs(ctx, opts, AcceptProtobufOnly, known, func(body io.ReadCloser, cancel func(), contentType string, peek FramePeek) (EventReader, error) {
		if err := notProtobuf("watch", contentType); err != nil {
			return nil, err
		}
		return NewProtobufWatch(body, cancel, decode, peek), nil
	})
}
