package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/internal/fastjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// sharedParse is a streamItems parse that keeps no text.
func sharedParse(b []byte) (map[string]any, []byte, error) {
	m, err := fastjson.DecodeObjectShared(b)
	return m, nil, err
}

func TestEachRawItemSkipsKnown(t *testing.T) {
	body := []byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"20","continue":"c"},"items":[
		{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}},
		{"metadata":{"name":"b","namespace":"ns","resourceVersion":"6"},"data":{"k":"v"}},
		{"metadata":{"name":"n1","resourceVersion":"7"}}]}`)
	var asked, decoded []string
	page, err := streamItems(iotest.HalfReader(bytes.NewReader(body)), func(key, rv string) bool {
		asked = append(asked, key+"@"+rv)
		return key == "ns/a"
	}, sharedParse, func(m map[string]any, _ []byte) error {
		md := m["metadata"].(map[string]any)
		decoded = append(decoded, md["name"].(string)+":"+m["kind"].(string))
		return nil
	})
	if err != nil || page.ResourceVersion != "20" || page.Continue != "c" {
		t.Fatalf("page %+v, %v", page, err)
	}
	if diff := cmp.Diff([]string{"ns/a@5", "ns/b@6", "n1@7"}, asked); diff != "" {
		t.Fatal(diff)
	}
	if diff := cmp.Diff([]string{"b:ConfigMap", "n1:ConfigMap"}, decoded); diff != "" {
		t.Fatal(diff)
	}
}

func TestStreamItemsKindAfterItems(t *testing.T) {
	body := `{"items":[{"metadata":{"name":"a"}},{"kind":"Other","metadata":{"name":"b"}}],"kind":"WidgetList","apiVersion":"x/v1","metadata":{"resourceVersion":"3"}}`
	var got []string
	page, err := streamItems(strings.NewReader(body), nil, sharedParse, func(m map[string]any, _ []byte) error {
		got = append(got, m["metadata"].(map[string]any)["name"].(string)+":"+m["kind"].(string))
		return nil
	})
	if err != nil || page.ResourceVersion != "3" {
		t.Fatalf("page %+v, %v", page, err)
	}
	if diff := cmp.Diff([]string{"a:Widget", "b:Other"}, got); diff != "" {
		t.Fatal(diff)
	}

	// With the items' text: the list's kind and apiVersion are added to
	// the text of items without them, so it decodes to what was cached.
	got = nil
	rawParse := func(b []byte) (map[string]any, []byte, error) { return fastjson.DecodeObjectSharedRaw(b, "", true) }
	body = `{"items":[{"metadata":{"name":"a","managedFields":[]}},{ },{"kind":"Other","metadata":{"name":"b"}}],"kind":"WidgetList","apiVersion":"x/v1","metadata":{"resourceVersion":"3"}}`
	if _, err := streamItems(strings.NewReader(body), nil, rawParse, func(m map[string]any, raw []byte) error {
		back, err := fastjson.DecodeObject(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", raw, err)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			return fmt.Errorf("%s (-cached +text):\n%s", raw, diff)
		}
		got = append(got, string(raw))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"apiVersion":"x/v1","kind":"Widget","metadata":{"name":"a"}}`, `{"apiVersion":"x/v1","kind":"Widget" }`, `{"kind":"Other","metadata":{"name":"b"}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
}

func TestStreamItemsErrors(t *testing.T) {
	boom := errors.New("connection reset by peer")
	n := 0
	_, err := streamItems(io.MultiReader(strings.NewReader(`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"meta`), iotest.ErrReader(boom)), nil, sharedParse, func(map[string]any, []byte) error { n++; return nil })
	if !errors.Is(err, boom) || n != 1 || !strings.Contains(err.Error(), "read the list") {
		t.Fatalf("read error: %v after %d items", err, n)
	}
	_, err = streamItems(strings.NewReader(`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}`), nil, sharedParse, func(map[string]any, []byte) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated list: %v", err)
	}
	_, err = streamItems(strings.NewReader(`{"kind":"ConfigMapList","apiVersion":"v1","items":[{"a":1e999}]}`), nil, sharedParse, func(map[string]any, []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "out of float64 range") {
		t.Fatalf("bad number: %v", err)
	}
}

func TestKnownPeekAnswersKnownAddedFrames(t *testing.T) {
	var asked []string
	peek := knownPeek(func(key, rv string) bool {
		asked = append(asked, strings.Clone(key)+"@"+strings.Clone(rv))
		return key == "ns/a" && rv == "5"
	})
	ev, ok := peek([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"5"},"data":{"big":"x"}}}`))
	if !ok || ev != knownFrameEvent {
		t.Fatalf("known frame not answered: %v %v", ev, ok)
	}
	for _, f := range []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"6"}}}`,
		`{"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"b","namespace":"ns","resourceVersion":"5"}}}`,
		`{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ns"}}}`,
		`not json`,
	} {
		if _, ok := peek([]byte(f)); ok {
			t.Fatalf("frame %s answered", f)
		}
	}
	if diff := cmp.Diff([]string{"ns/a@5", "ns/a@6", "ns/b@5"}, asked); diff != "" {
		t.Fatal(diff)
	}
	// Answering a known frame allocates nothing.
	frame := []byte(`{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}}`)
	peek = knownPeek(func(key, rv string) bool { return key == "ns/a" && rv == "5" })
	if n := testing.AllocsPerRun(100, func() { peek(frame) }); n != 0 {
		t.Errorf("%v allocations per known frame", n)
	}
}

func protobufFrame(t *testing.T, typ, ns, name, rv string) []byte {
	t.Helper()
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, ResourceVersion: rv, Labels: map[string]string{"a": "b"}}}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, Raw: raw}
	env, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: append([]byte("k8s\x00"), env...)}}
	frame, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func TestProtobufKnownPeek(t *testing.T) {
	var asked []string
	peek := protobufKnownPeek(func(key, rv string) bool {
		asked = append(asked, strings.Clone(key)+"@"+strings.Clone(rv))
		return (key == "ns/a" || key == "cluster-wide") && rv == "5"
	})
	for _, f := range []struct {
		frame []byte
		want  bool
	}{
		{protobufFrame(t, "ADDED", "ns", "a", "5"), true},
		{protobufFrame(t, "ADDED", "", "cluster-wide", "5"), true},
		{protobufFrame(t, "ADDED", "ns", "a", "6"), false},
		{protobufFrame(t, "MODIFIED", "ns", "a", "5"), false},
		{protobufFrame(t, "ADDED", "ns", "b", ""), false},
		{[]byte("not protobuf"), false},
	} {
		ev, ok := peek(f.frame)
		if ok != f.want || ok && ev != knownFrameEvent {
			t.Errorf("frame %q: answered %v (%v), want %v", f.frame, ok, ev, f.want)
		}
	}
	if diff := cmp.Diff([]string{"ns/a@5", "cluster-wide@5", "ns/a@6"}, asked); diff != "" {
		t.Fatal(diff)
	}
	frame := protobufFrame(t, "ADDED", "ns", "a", "5")
	peek = protobufKnownPeek(func(key, rv string) bool { return key == "ns/a" && rv == "5" })
	if n := testing.AllocsPerRun(100, func() { peek(frame) }); n != 0 {
		t.Errorf("%v allocations per known frame", n)
	}
}
