package dynamic

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kdyn/kdyn/internal/pbwire"
	"github.com/kdyn/kdyn/rest"
)

// Accept headers that prefer Kubernetes protobuf for metadata-only
// requests and fall back to JSON (servers that do not speak protobuf, such
// as some aggregated APIs, answer JSON). Protobuf is cheaper to encode for
// the server and to decode for the client; PartialObjectMetadata's protobuf
// code is part of apimachinery, so no typed API is involved.
const (
	AcceptPartialObjectMetadataProtobuf     = rest.ContentTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + AcceptPartialObjectMetadata + ",application/json"
	AcceptPartialObjectMetadataListProtobuf = rest.ContentTypeProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," + AcceptPartialObjectMetadataList + ",application/json"
)

var partialGVK = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")

// DecodePartialObjectMetadataProtobuf decodes one protobuf-encoded
// PartialObjectMetadata (with its "k8s\x00" envelope).
func DecodePartialObjectMetadataProtobuf(data []byte, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	raw, _, err := rest.UnwrapProtobuf(data)
	if err != nil {
		return nil, errorf("decode object metadata: %w", err)
	}
	p := &metav1.PartialObjectMetadata{}
	err = unmarshalWithoutManagedFields(raw, keepManagedFields, p.Unmarshal, 1)
	if err != nil {
		return nil, errorf("decode object metadata: %w", err)
	}
	p.SetGroupVersionKind(partialGVK)
	return p, nil
}

// objectMetaManagedFields is the field number of ObjectMeta.managedFields.
const objectMetaManagedFields = 17

// scratchPool holds buffers for messages with managedFields cut out.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// unmarshalWithoutManagedFields unmarshals raw, leaving the managedFields
// of the ObjectMeta at path out unless keep: they are cut from the encoded
// message first (a copy without them costs less than decoding them), so
// they are never decoded. The generated Unmarshal copies what it keeps, so
// the copy is reused.
func unmarshalWithoutManagedFields(raw []byte, keep bool, unmarshal func([]byte) error, path ...int) error {
	if keep {
		return unmarshal(raw)
	}
	bp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(bp)
	stripped, ok := pbwire.AppendWithout((*bp)[:0], raw, objectMetaManagedFields, path...)
	if !ok {
		return unmarshal(raw) // malformed: let the generated code say how
	}
	if cap(stripped) <= 1<<20 {
		*bp = stripped
	}
	return unmarshal(stripped)
}

// DecodePartialObjectMetadataListProtobuf decodes a protobuf-encoded
// PartialObjectMetadataList.
func DecodePartialObjectMetadataListProtobuf(data []byte, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	raw, _, err := rest.UnwrapProtobuf(data)
	if err != nil {
		return nil, errorf("decode metadata list: %w", err)
	}
	l := &metav1.PartialObjectMetadataList{}
	if err := unmarshalWithoutManagedFields(raw, keepManagedFields, l.Unmarshal, 2, 1); err != nil {
		return nil, errorf("decode metadata list: %w", err)
	}
	l.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"))
	for i := range l.Items {
		l.Items[i].SetGroupVersionKind(partialGVK)
	}
	return l, nil
}

// decodeMetadataListAny decodes a metadata list answer in whichever
// encoding the server chose.
func decodeMetadataListAny(res rest.Result, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	if rest.IsProtobuf(res.ContentType()) {
		return DecodePartialObjectMetadataListProtobuf(body, keepManagedFields)
	}
	return decodeMetadataListJSON(body, keepManagedFields)
}

// decodeMetadataAny decodes one metadata answer in whichever encoding the
// server chose.
func decodeMetadataAny(res rest.Result, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	if rest.IsProtobuf(res.ContentType()) {
		return DecodePartialObjectMetadataProtobuf(body, keepManagedFields)
	}
	return DecodePartialObjectMetadata(body, keepManagedFields)
}

// ListMetadata sends a metadata-only list request (req names the resource
// and carries the list options), asking for protobuf and accepting JSON.
func ListMetadata(ctx context.Context, req *rest.Request, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	return decodeMetadataListAny(req.Accept(AcceptPartialObjectMetadataListProtobuf).Do(ctx), keepManagedFields)
}

// WatchMetadata opens a metadata-only watch (req names the resource and
// carries the list options, watch=true included), asking for protobuf and
// accepting JSON. Event objects are *metav1.PartialObjectMetadata.
func WatchMetadata(ctx context.Context, req *rest.Request, keepManagedFields bool) (rest.WatchInterface, error) {
	return WatchMetadataPeek(ctx, req, keepManagedFields, nil)
}

// WatchMetadataPeek is WatchMetadata with peek looking at each protobuf
// frame (an encoded metav1.WatchEvent) first; see
// rest.Request.WatchNegotiatedPeek.
func WatchMetadataPeek(ctx context.Context, req *rest.Request, keepManagedFields bool, peek rest.FramePeek) (rest.WatchInterface, error) {
	pb := func(b []byte) (runtime.Object, error) {
		return DecodePartialObjectMetadataProtobuf(b, keepManagedFields)
	}
	js := func(b []byte) (runtime.Object, error) { return DecodePartialObjectMetadata(b, keepManagedFields) }
	return req.Accept(AcceptPartialObjectMetadataProtobuf).WatchNegotiatedPeek(ctx, pb, js, peek)
}
