package wire

import (
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kdyn/kdyn/internal/pbwire"
)

// Accept headers of metadata-only requests. The Protobuf ones prefer
// Kubernetes protobuf and fall back to JSON (servers that do not speak
// protobuf, such as some aggregated APIs, answer JSON). Protobuf is cheaper
// to encode for the server and to decode for the client;
// PartialObjectMetadata's protobuf code is part of apimachinery, so no
// typed API is involved.
const (
	AcceptMetadataJSON         = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	AcceptMetadataListJSON     = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	AcceptMetadataProtobuf     = ContentTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1," + AcceptMetadataJSON + ",application/json"
	AcceptMetadataListProtobuf = ContentTypeProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," + AcceptMetadataListJSON + ",application/json"
)

var partialGVK = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")

// decodeMetadataProtobuf decodes one protobuf-encoded
// PartialObjectMetadata (with its "k8s\x00" envelope).
func decodeMetadataProtobuf(data []byte, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	raw, _, err := UnwrapProtobuf(data)
	if err != nil {
		return nil, fmt.Errorf("decode object metadata: %w", err)
	}
	p := &metav1.PartialObjectMetadata{}
	err = unmarshalWithoutManagedFields(raw, keepManagedFields, p.Unmarshal, 1)
	if err != nil {
		return nil, fmt.Errorf("decode object metadata: %w", err)
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

// decodeMetadataListProtobuf decodes a protobuf-encoded
// PartialObjectMetadataList.
func decodeMetadataListProtobuf(data []byte, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	raw, _, err := UnwrapProtobuf(data)
	if err != nil {
		return nil, fmt.Errorf("decode metadata list: %w", err)
	}
	l := &metav1.PartialObjectMetadataList{}
	if err := unmarshalWithoutManagedFields(raw, keepManagedFields, l.Unmarshal, 2, 1); err != nil {
		return nil, fmt.Errorf("decode metadata list: %w", err)
	}
	l.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"))
	for i := range l.Items {
		l.Items[i].SetGroupVersionKind(partialGVK)
	}
	return l, nil
}

// DecodeMetadata decodes one metadata-only answer in whichever encoding
// the server chose (its Content-Type): protobuf, or JSON.
func DecodeMetadata(contentType string, body []byte, keepManagedFields bool) (*metav1.PartialObjectMetadata, error) {
	if IsProtobuf(contentType) {
		return decodeMetadataProtobuf(body, keepManagedFields)
	}
	return DecodePartialObjectMetadata(body, keepManagedFields)
}

// DecodeMetadataList decodes a metadata-only list answer in whichever
// encoding the server chose (its Content-Type).
func DecodeMetadataList(contentType string, body []byte, keepManagedFields bool) (*metav1.PartialObjectMetadataList, error) {
	if IsProtobuf(contentType) {
		return decodeMetadataListProtobuf(body, keepManagedFields)
	}
	return decodeMetadataListJSON(body, keepManagedFields)
}

// NewMetadataWatch returns a watch over an open metadata-only watch stream
// in whichever encoding the server chose (contentType): event objects are
// *metav1.PartialObjectMetadata, without managedFields unless
// keepManagedFields. peek, when not nil, sees each protobuf frame first
// (JSON streams are not peeked). cancel is as for NewJSONWatch.
func NewMetadataWatch(body io.ReadCloser, cancel func(), contentType string, keepManagedFields bool, peek FramePeek) EventReader {
	if IsProtobuf(contentType) {
		return NewProtobufWatch(body, cancel, func(b []byte) (runtime.Object, error) {
			return decodeMetadataProtobuf(b, keepManagedFields)
		}, peek)
	}
	return NewJSONWatch(body, cancel, func(b []byte) (runtime.Object, error) {
		return DecodePartialObjectMetadata(b, keepManagedFields)
	})
}
