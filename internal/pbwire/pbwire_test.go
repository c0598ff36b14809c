package pbwire

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPathReadsGeneratedMessages(t *testing.T) {
	gen := int64(7)
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "cm-1", Namespace: "ns", ResourceVersion: "12345", Generation: gen,
		Labels:     map[string]string{"a": "b"},
		Finalizers: []string{"x"},
	}}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ev := metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: raw}}
	frame, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path []int
		want string
	}{
		{[]int{1}, "ADDED"},
		{[]int{2, 1, 1, 1}, "cm-1"},
		{[]int{2, 1, 1, 3}, "ns"},
		{[]int{2, 1, 1, 6}, "12345"},
	} {
		got, ok := Path(frame, tc.path...)
		if !ok || string(got) != tc.want {
			t.Errorf("Path(%v) = %q, %v; want %q", tc.path, got, ok, tc.want)
		}
	}
	if v, ok := Path(frame, 2, 1, 1, 4); !ok || len(v) != 0 {
		t.Errorf("empty selfLink = %q, %v", v, ok) // generated code writes empty strings
	}
	if _, ok := Path(frame, 2, 1, 1, 99); ok {
		t.Error("absent field found")
	}
	for i := range frame {
		Path(frame[:i], 2, 1, 1, 6) // truncated input never panics
	}
	if _, ok := Bytes([]byte{0xff}, 1); ok {
		t.Error("malformed tag accepted")
	}
	if _, ok := Bytes([]byte{0x0a, 0x05, 'a'}, 1); ok {
		t.Error("overlong length accepted")
	}
	if _, ok := Bytes([]byte{0x0b}, 1); ok {
		t.Error("group wire type accepted")
	}
	if n := testing.AllocsPerRun(100, func() { Path(frame, 2, 1, 1, 6) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func FuzzEach(f *testing.F) {
	f.Add([]byte{0x0a, 0x01, 'a', 0x10, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		Each(b, func(int, []byte) bool { return true })
		Path(b, 2, 1, 1)
	})
}

func TestAppendWithoutDropsManagedFields(t *testing.T) {
	ts := metav1.Unix(1700000000, 0)
	meta := func(mf bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{
			Name: "cm-1", Namespace: "ns", ResourceVersion: "12345", Generation: 3,
			CreationTimestamp: ts,
			Labels:            map[string]string{"a": "b", "c": "d"},
			Annotations:       map[string]string{"note": "x"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u1"}},
			Finalizers:        []string{"f"},
		}
		if mf {
			m.ManagedFields = []metav1.ManagedFieldsEntry{
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)},
				{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1"},
			}
		}
		return m
	}
	with, err := (&metav1.PartialObjectMetadata{ObjectMeta: meta(true)}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte("keep")
	got, ok := AppendWithout(prefix, with, 17, 1)
	if !ok {
		t.Fatal("not well formed")
	}
	if string(got[:4]) != "keep" {
		t.Fatalf("dst prefix lost: %q", got[:4])
	}
	var back metav1.PartialObjectMetadata
	if err := back.Unmarshal(got[4:]); err != nil {
		t.Fatal(err)
	}
	want := meta(false)
	if !equality(back.ObjectMeta, want) {
		t.Fatalf("got %+v\nwant %+v", back.ObjectMeta, want)
	}

	// Every element of a repeated field at the path: a list's items.
	list := &metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{{ObjectMeta: meta(true)}, {ObjectMeta: meta(true)}}}
	list.ResourceVersion = "99"
	lb, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, ok = AppendWithout(nil, lb, 17, 2, 1)
	if !ok {
		t.Fatal("list not well formed")
	}
	var lback metav1.PartialObjectMetadataList
	if err := lback.Unmarshal(got); err != nil {
		t.Fatal(err)
	}
	if lback.ResourceVersion != "99" || len(lback.Items) != 2 {
		t.Fatalf("list %+v", lback.ListMeta)
	}
	for i, it := range lback.Items {
		if !equality(it.ObjectMeta, want) {
			t.Fatalf("item %d: %+v", i, it.ObjectMeta)
		}
	}

	// No path: a field of the message itself; a message without the field
	// is copied as is.
	if got, ok := AppendWithout(nil, lb, 2); !ok || len(got) >= len(lb) {
		t.Fatalf("top-level drop: ok %v, %d of %d bytes", ok, len(got), len(lb))
	}
	plain, _ := (&metav1.PartialObjectMetadata{ObjectMeta: meta(false)}).Marshal()
	if got, ok := AppendWithout(nil, plain, 17, 1); !ok || string(got) != string(plain) {
		t.Fatal("a message without the field changed")
	}

	// Malformed input: reported, dst untouched.
	for _, bad := range [][]byte{{0x0a, 0x05, 'a'}, {0x80}, {0x0b}} {
		if got, ok := AppendWithout(prefix, bad, 17, 1); ok || string(got) != "keep" {
			t.Errorf("%x: ok %v, dst %q", bad, ok, got)
		}
	}
}

func equality(a, b metav1.ObjectMeta) bool {
	ab, _ := a.Marshal()
	bb, _ := b.Marshal()
	return string(ab) == string(bb)
}
