package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kdyn/kdyn/internal/pbwire"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ContentTypeProtobuf is Kubernetes' protobuf encoding. kdyn decodes it
// into apimachinery's own meta types (PartialObjectMetadata, Status), whose
// protobuf code lives in apimachinery, and into Go types a caller brings
// (informer.ForResourceProto): kdyn names no typed API itself.
const ContentTypeProtobuf = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every protobuf-encoded Kubernetes object: the bytes
// "k8s\x00", then a runtime.Unknown envelope whose Raw holds the object.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// IsProtobuf reports whether a Content-Type is Kubernetes protobuf.
func IsProtobuf(contentType string) bool {
	return strings.HasPrefix(strings.TrimSpace(contentType), ContentTypeProtobuf)
}

// UnwrapProtobuf returns the encoded object inside a protobuf envelope and
// the envelope's apiVersion and kind. raw shares data's memory: the
// envelope (a runtime.Unknown) is read in place, not copied.
func UnwrapProtobuf(data []byte) (raw []byte, tm runtime.TypeMeta, err error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return nil, tm, errors.New("not a Kubernetes protobuf object (no k8s magic prefix)")
	}
	var encoding []byte
	ok := pbwire.Each(data[len(protobufMagic):], func(num int, v []byte) bool {
		switch num {
		case 1: // typeMeta
			pbwire.Each(v, func(n int, s []byte) bool {
				switch n {
				case 1:
					tm.APIVersion = knownString(s)
				case 2:
					tm.Kind = knownString(s)
				}
				return true
			})
		case 2:
			raw = v
		case 3:
			encoding = v
		}
		return true
	})
	if !ok {
		return nil, tm, errors.New("decode protobuf envelope: malformed runtime.Unknown")
	}
	if len(encoding) != 0 {
		return nil, tm, fmt.Errorf("protobuf object with content encoding %q is not supported", encoding)
	}
	return raw, tm, nil
}

// envelopeStrings are the type names protobuf envelopes carry most often:
// knownString returns these without allocating (once per watch event).
var envelopeStrings = []string{"meta.k8s.io/v1", "PartialObjectMetadata", "PartialObjectMetadataList", "v1", "Status", "Table", "meta.k8s.io/v1beta1"}

func knownString(b []byte) string {
	for _, s := range envelopeStrings {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

// protobufWatcher decodes a protobuf watch stream: frames of a 4-byte
// big-endian length and a metav1.WatchEvent.
type protobufWatcher struct {
	eventPump
	br     *burstReader
	lenBuf [4]byte
	frame  []byte // the frame being decoded, reused
	decode ObjectDecoder
	peek   FramePeek // optional
}

// NewProtobufWatch returns a watch over an open protobuf watch stream
// (frames of a 4-byte big-endian length and a metav1.WatchEvent): decode
// gets each event object's envelope (see UnwrapProtobuf), and peek, when
// not nil, sees each frame (an encoded metav1.WatchEvent) first and may
// answer it without a decode. cancel is as for NewJSONWatch.
func NewProtobufWatch(body io.ReadCloser, cancel func(), decode ObjectDecoder, peek FramePeek) EventReader {
	if cancel == nil {
		cancel = func() {}
	}
	w := &protobufWatcher{eventPump: newEventPump(body, cancel), decode: decode, peek: peek}
	// Reading a burst of small events (a streaming list) through a large
	// buffer takes whatever has arrived in one read, which costs one HTTP/2
	// flow-control update per read rather than one per 4 KiB, each a write
	// to the connection; an idle watch holds only a small buffer.
	w.br = newBurstReader(body)
	w.read = w.readEvent
	return w
}

// readEvent reads and decodes the next frame. A stream that ends, cleanly
// or not, just ends: the caller re-watches.
func (w *protobufWatcher) readEvent() (watch.Event, bool) {
	if cap(w.frame) > largeReadBuffer {
		w.frame = nil // a large event's frame is not kept for the small ones after it
	}
	if _, err := io.ReadFull(w.br, w.lenBuf[:]); err != nil {
		return watch.Event{}, false
	}
	n := binary.BigEndian.Uint32(w.lenBuf[:])
	if n > maxFrameBytes {
		return w.failed(fmt.Errorf("a watch event is larger than %d bytes", maxFrameBytes))
	}
	if cap(w.frame) < int(n) {
		// Grown by doubling, so that a stream of growing frames
		// allocates few times; kept small for small frames (an idle
		// watch's).
		w.frame = make([]byte, n, max(int(n), 2*cap(w.frame)))
	}
	buf := w.frame[:n]
	if _, err := io.ReadFull(w.br, buf); err != nil {
		return watch.Event{}, false
	}
	if w.peek != nil {
		if ev, ok := w.peek(buf); ok {
			return ev, true
		}
	}
	ev, err := w.event(buf)
	if err != nil {
		return w.failed(err)
	}
	return ev, true
}

// event decodes one frame, an encoded metav1.WatchEvent (field 1: type;
// field 2: a RawExtension whose field 1 is the object). The frame is read in
// place; only the object is decoded (its decoder copies what it keeps).
func (w *protobufWatcher) event(frame []byte) (watch.Event, error) {
	var typ watch.EventType
	var obj []byte
	ok := pbwire.Each(frame, func(num int, v []byte) bool {
		switch num {
		case 1:
			switch string(v) { // compared without allocating
			case string(watch.Added):
				typ = watch.Added
			case string(watch.Modified):
				typ = watch.Modified
			case string(watch.Deleted):
				typ = watch.Deleted
			case string(watch.Bookmark):
				typ = watch.Bookmark
			case string(watch.Error):
				typ = watch.Error
			default:
				typ = watch.EventType(v)
			}
		case 2:
			obj, _ = pbwire.Bytes(v, 1)
		}
		return true
	})
	if !ok {
		return watch.Event{}, errors.New("unable to decode an event from the watch stream: malformed protobuf WatchEvent")
	}
	if err := checkEventType(typ); err != nil {
		return watch.Event{}, err
	}
	if typ == watch.Error {
		raw, _, err := UnwrapProtobuf(obj)
		if err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the ERROR event's Status from the watch stream: %w", err)
		}
		st := &metav1.Status{}
		if err := st.Unmarshal(raw); err != nil {
			return watch.Event{}, fmt.Errorf("unable to decode the ERROR event's Status from the watch stream: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
	}
	if len(obj) == 0 {
		return watch.Event{}, fmt.Errorf("watch stream sent a %s event without an object", typ)
	}
	o, err := w.decode(obj)
	if err != nil {
		return watch.Event{}, fmt.Errorf("unable to decode the object of a %s event from the watch stream: %w", typ, err)
	}
	return watch.Event{Type: typ, Object: o}, nil
}
