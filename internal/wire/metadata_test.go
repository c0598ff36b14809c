package wire

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// envelope wraps a marshaled object as the server does.
func envelope(t *testing.T, kind string, raw []byte) []byte {
	t.Helper()
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind}, Raw: raw}
	b, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte{0x6b, 0x38, 0x73, 0x00}, b...)
}

func TestProtobufMetadata(t *testing.T) {
	p := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "7",
		Labels: map[string]string{"app": "web"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMetadataProtobuf(envelope(t, "PartialObjectMetadata", raw), false)
	if err != nil || got.Name != "a" || got.UID != "u1" || got.Labels["app"] != "web" || got.ManagedFields != nil || got.Kind != "PartialObjectMetadata" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	l := metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "c"}, Items: []metav1.PartialObjectMetadata{p, p}}
	lraw, _ := l.Marshal()
	gl, err := decodeMetadataListProtobuf(envelope(t, "PartialObjectMetadataList", lraw), true)
	if err != nil || len(gl.Items) != 2 || gl.ResourceVersion != "9" || gl.Continue != "c" || gl.Items[1].ManagedFields == nil {
		t.Fatalf("list %+v, %v", gl, err)
	}
	gl, err = decodeMetadataListProtobuf(envelope(t, "PartialObjectMetadataList", lraw), false)
	if err != nil || len(gl.Items) != 2 || gl.ResourceVersion != "9" || gl.Items[0].ManagedFields != nil || gl.Items[1].ManagedFields != nil || gl.Items[1].Labels["app"] != "web" {
		t.Fatalf("list without managedFields %+v, %v", gl, err)
	}
	if got, err := decodeMetadataProtobuf(envelope(t, "PartialObjectMetadata", raw), true); err != nil || len(got.ManagedFields) != 1 {
		t.Fatalf("kept managedFields: %+v, %v", got, err)
	}
	if _, err := decodeMetadataProtobuf([]byte("{}"), false); err == nil {
		t.Fatal("JSON accepted as protobuf")
	}

	// A protobuf watch stream: length-delimited WatchEvents.
	var stream bytes.Buffer
	frame := func(typ string, obj []byte) {
		we := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
		b, _ := we.Marshal()
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		stream.Write(n[:])
		stream.Write(b)
	}
	frame("ADDED", envelope(t, "PartialObjectMetadata", raw))
	st := metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old"}
	sraw, _ := st.Marshal()
	frame("ERROR", envelope(t, "Status", sraw))
	data := stream.Bytes()
	decode := func(b []byte) (runtime.Object, error) { return decodeMetadataProtobuf(b, false) }
	// Read through the channel, and in the caller's goroutine.
	for _, pull := range []bool{false, true} {
		w := newProtobufWatch(io.NopCloser(bytes.NewReader(data)), decode)
		var evs []watch.Event
		if pull {
			for {
				ev, ok := w.(EventReader).NextEvent()
				if !ok {
					break
				}
				evs = append(evs, ev)
			}
		} else {
			for ev := range w.ResultChan() {
				evs = append(evs, ev)
			}
		}
		if len(evs) != 2 || evs[0].Type != watch.Added || evs[0].Object.(*metav1.PartialObjectMetadata).Name != "a" {
			t.Fatalf("pull=%v: events %+v", pull, evs)
		}
		if s, ok := evs[1].Object.(*metav1.Status); !ok || s.Code != 410 {
			t.Fatalf("pull=%v: error event %+v", pull, evs[1].Object)
		}
	}
}
