package pbwire

import (
	"bytes"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzAppendWithout feeds AppendWithout what a server could send. It runs
// on every protobuf metadata object and list the informers receive (field
// 17, managedFields, of the ObjectMeta at path 1 of an object and at 2, 1 of
// each list item), so each input is tried with the fuzzed field and path and
// with those two, and checked for:
//   - no panic; false exactly when the message, or a message nested at the
//     path, is not well formed, with dst then returned as given;
//   - on success, dst kept as the prefix, and a result that parses, holds
//     every other field in the same order with the same bytes (fields at
//     the path hold their stripped messages), holds the dropped field at no
//     level where it is dropped, is no longer than the input, and is left
//     as it is when stripped again;
//   - when the field is absent, the input unchanged (unless a tag or length
//     on the path was encoded longer than needed: those are re-encoded);
//   - where the input decodes as a PartialObjectMetadata (or List), the
//     result decodes to the same object without managedFields.
func FuzzAppendWithout(f *testing.F) {
	ts := metav1.Unix(1700000000, 0)
	meta := metav1.ObjectMeta{
		Name: "cm-1", Namespace: "ns", ResourceVersion: "12345", Generation: 3, CreationTimestamp: ts,
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"note": "x"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u1"}},
		Finalizers:      []string{"f"},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)},
			{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate},
		},
	}
	obj := mustMarshal(f, &metav1.PartialObjectMetadata{ObjectMeta: meta})
	list := mustMarshal(f, &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "9"},
		Items: []metav1.PartialObjectMetadata{{ObjectMeta: meta}, {ObjectMeta: metav1.ObjectMeta{Name: "bare"}}}})
	plain := mustMarshal(f, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "cm-2", Labels: map[string]string{"k": "v"}}})
	frame := mustMarshal(f, &metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: obj}})
	for _, seed := range []struct {
		b    []byte
		drop uint16
		path []byte
	}{
		{obj, 17, []byte{1}},
		{list, 17, []byte{2, 1}},
		{plain, 17, []byte{1}},
		{frame, 17, []byte{2, 1, 1}},
		{obj, 1, nil},
		{list, 2, nil},
		{[]byte{0x0a, 0x83, 0x00, 0x12, 0x01, 'x'}, 17, []byte{1}},       // a length encoded in two bytes
		{[]byte{0x8a, 0x00, 0x03, 0x8a, 0x01, 0x00}, 17, []byte{1}},      // a tag in two bytes; field 17 inside
		{[]byte{0x0a, 0x02, 0x08, 0x01, 0x0a, 0x00}, 1, []byte{1}},       // a varint field 1 inside field 1
		{[]byte{0x0a, 0x05, 'a'}, 17, []byte{1}},                         // a length past the end
		{[]byte{0x0a, 0x01, 0x80}, 17, []byte{1}},                        // a truncated tag inside
		{[]byte{0x0b}, 17, nil},                                          // a group
		{[]byte{0x80}, 17, nil},                                          // a truncated tag
		{[]byte{0x1d, 1, 2, 3, 4, 0x11, 1, 2, 3, 4, 5, 6, 7, 8}, 3, nil}, // fixed32, fixed64
		{nil, 17, []byte{1}},
	} {
		f.Add(seed.b, seed.drop, seed.path)
	}
	f.Fuzz(func(t *testing.T, b []byte, drop uint16, path []byte) {
		if len(path) > 4 {
			path = path[:4]
		}
		p := make([]int, len(path))
		for i, n := range path {
			p[i] = int(n)
		}
		checkAppendWithout(t, b, int(drop), p)
		checkAppendWithout(t, b, 17, []int{1})
		checkAppendWithout(t, b, 17, []int{2, 1})
		checkDecodesWithoutManagedFields(t, b)
	})
}

func mustMarshal(f *testing.F, m interface{ Marshal() ([]byte, error) }) []byte {
	b, err := m.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	return b
}

func checkAppendWithout(t *testing.T, in []byte, drop int, path []int) {
	t.Helper()
	dst := append(make([]byte, 0, 8), "keep"...)
	got, ok := AppendWithout(dst, in, drop, path...)
	if want := wellFormedAlong(in, path); ok != want {
		t.Fatalf("AppendWithout(%x, %d, %v): ok %v, want %v", in, drop, path, ok, want)
	}
	if !ok {
		if string(got) != "keep" {
			t.Fatalf("AppendWithout(%x, %d, %v) failed and changed dst to %q", in, drop, path, got)
		}
		return
	}
	if string(got[:4]) != "keep" {
		t.Fatalf("AppendWithout(%x, %d, %v): dst prefix lost: %q", in, drop, path, got[:4])
	}
	out := got[4:]
	canonical := sameFieldsWithout(t, in, out, drop, path)
	if len(out) > len(in) {
		t.Fatalf("AppendWithout(%x, %d, %v) = %x, longer than the input", in, drop, path, out)
	}
	if !has(in, drop, path) && canonical && !bytes.Equal(out, in) {
		t.Fatalf("AppendWithout(%x, %d, %v) = %x: the field is absent, want the input unchanged", in, drop, path, out)
	}
	again, ok := AppendWithout(nil, out, drop, path...)
	if !ok || !bytes.Equal(again, out) {
		t.Fatalf("stripping %x again (%d, %v) gave %x, %v; want it unchanged", out, drop, path, again, ok)
	}
}

// wellFormedAlong reports whether b and every message nested at path parse.
func wellFormedAlong(b []byte, path []int) bool {
	for len(b) > 0 {
		num, typ, v, n, ok := field(b)
		if !ok {
			return false
		}
		if len(path) > 0 && num == path[0] && typ == wireBytes && !wellFormedAlong(v, path[1:]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// has reports whether field drop occurs in a message nested at path.
func has(b []byte, drop int, path []int) bool {
	for len(b) > 0 {
		num, typ, v, n, _ := field(b)
		switch {
		case len(path) == 0 && num == drop:
			return true
		case len(path) > 0 && num == path[0] && typ == wireBytes && has(v, drop, path[1:]):
			return true
		}
		b = b[n:]
	}
	return false
}

// sameFieldsWithout fails t unless out parses and is in without field drop
// of the messages at path: the other fields in the same order, fields not
// on the path byte for byte, fields on the path holding in's message
// stripped the same way. It reports whether in's tags and lengths on the
// path were encoded in the fewest bytes (then out's bytes can equal in's).
func sameFieldsWithout(t *testing.T, in, out []byte, drop int, path []int) (canonical bool) {
	t.Helper()
	canonical = true
	for len(in) > 0 {
		num, typ, v, n, _ := field(in) // in is well formed: AppendWithout said so
		if len(path) == 0 && num == drop {
			in = in[n:]
			continue
		}
		if len(out) == 0 {
			t.Fatalf("field %d (wire type %d) is missing from the result", num, typ)
		}
		onum, otyp, ov, on, ok := field(out)
		if !ok {
			t.Fatalf("the result does not parse at %x", out)
		}
		if onum != num || otyp != typ {
			t.Fatalf("the result has field %d (wire type %d) where the input has field %d (wire type %d)", onum, otyp, num, typ)
		}
		if len(path) > 0 && num == path[0] && typ == wireBytes {
			if n-len(v) != uvarintLen(uint64(num)<<3|wireBytes)+uvarintLen(uint64(len(v))) {
				canonical = false
			}
			if !sameFieldsWithout(t, v, ov, drop, path[1:]) {
				canonical = false
			}
		} else if !bytes.Equal(in[:n], out[:on]) {
			t.Fatalf("field %d changed: %x became %x", num, in[:n], out[:on])
		}
		in, out = in[n:], out[on:]
	}
	if len(out) > 0 {
		t.Fatalf("the result has more than the input: %x", out)
	}
	return canonical
}

// checkDecodesWithoutManagedFields: where b decodes as a
// PartialObjectMetadata or a PartialObjectMetadataList, what the informers
// decode after stripping equals it without managedFields.
func checkDecodesWithoutManagedFields(t *testing.T, b []byte) {
	t.Helper()
	var obj metav1.PartialObjectMetadata
	if obj.Unmarshal(b) == nil {
		if stripped, ok := AppendWithout(nil, b, 17, 1); ok {
			var got metav1.PartialObjectMetadata
			if err := got.Unmarshal(stripped); err != nil {
				t.Fatalf("%x decodes as an object; without managedFields (%x) it does not: %v", b, stripped, err)
			}
			obj.ManagedFields = nil
			if !equality(got.ObjectMeta, obj.ObjectMeta) {
				t.Fatalf("%x without managedFields decodes to %+v, want %+v", b, got.ObjectMeta, obj.ObjectMeta)
			}
		}
	}
	var list metav1.PartialObjectMetadataList
	if list.Unmarshal(b) == nil {
		if stripped, ok := AppendWithout(nil, b, 17, 2, 1); ok {
			var got metav1.PartialObjectMetadataList
			if err := got.Unmarshal(stripped); err != nil {
				t.Fatalf("%x decodes as a list; without managedFields (%x) it does not: %v", b, stripped, err)
			}
			for i := range list.Items {
				list.Items[i].ManagedFields = nil
			}
			want, _ := list.Marshal()
			have, _ := got.Marshal()
			if !bytes.Equal(have, want) {
				t.Fatalf("%x without managedFields decodes to %+v, want %+v", b, got, list)
			}
		}
	}
}
