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
