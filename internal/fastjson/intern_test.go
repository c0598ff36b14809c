package fastjson

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func TestInterner(t *testing.T) {
	in := NewInterner(100, 8)
	if got := len(in.slots); got != 128 {
		t.Errorf("%d slots, want 128", got)
	}
	if in.MaxLen() != 8 {
		t.Errorf("MaxLen = %d", in.MaxLen())
	}
	a := in.String([]byte("hello"))
	b := in.String([]byte("hello"))
	if a != "hello" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("String not shared: %q %q", a, b)
	}
	if c := in.Intern(string([]byte("hello"))); unsafe.StringData(c) != unsafe.StringData(a) {
		t.Error("Intern did not return the pooled string")
	}
	big := strings.Repeat("x", 1000) + "world"
	w := in.Intern(big[1000:])
	if w != "world" || unsafe.StringData(w) == unsafe.StringData(big[1000:]) {
		t.Error("Intern pooled a substring of a larger string")
	}
	if w2 := in.Intern("world"); unsafe.StringData(w2) != unsafe.StringData(w) {
		t.Error("Intern did not share")
	}
	long := []byte("longer than eight")
	if x, y := in.String(long), in.String(long); x != string(long) || unsafe.StringData(x) == unsafe.StringData(y) {
		t.Error("string over MaxLen interned")
	}
	if s := in.String(nil); s != "" {
		t.Errorf("String(nil) = %q", s)
	}
	if s := in.Intern(""); s != "" {
		t.Errorf("Intern(\"\") = %q", s)
	}
	// A hit does not allocate.
	hb := []byte("hello")
	if n := testing.AllocsPerRun(100, func() { in.String(hb) }); n != 0 {
		t.Errorf("String hit allocates %v times", n)
	}
	// Defaults and bounds.
	if d := NewInterner(0, 0); len(d.slots) != 16 || d.MaxLen() != 64 {
		t.Errorf("NewInterner(0, 0): %d slots, max %d", len(d.slots), d.MaxLen())
	}
}

func TestInternerBounded(t *testing.T) {
	in := NewInterner(64, 32)
	for i := 0; i < 100000; i++ {
		in.String([]byte(fmt.Sprint("unique-", i)))
	}
	n := 0
	for i := range in.slots {
		if s, ok := in.slots[i].Load().(string); ok {
			n++
			if !strings.HasPrefix(s, "unique-") {
				t.Fatalf("slot holds %q", s)
			}
		}
	}
	if n > 64 {
		t.Fatalf("%d entries in a 64-entry pool", n)
	}
	// A frequent string recovers its slot after churn.
	x := in.String([]byte("frequent"))
	if y := in.String([]byte("frequent")); unsafe.StringData(x) != unsafe.StringData(y) {
		t.Error("not shared right after insertion")
	}
}

func TestInternerConcurrent(t *testing.T) {
	in := NewInterner(256, 64)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				want := fmt.Sprint("k", (i*7+g)%500)
				var got string
				if i%2 == 0 {
					got = in.String([]byte(want))
				} else {
					got = in.Intern(want)
				}
				if got != want {
					t.Errorf("got %q, want %q", got, want)
					return
				}
			}
		}(g)
	}
	// Concurrent Decoders sharing the pool.
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := NewDecoder(Options{InternKeys: true, InternValues: true, Interner: in})
			for i := 0; i < 200; i++ {
				v, err := d.Decode([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"k1":"v1"}}}`))
				if err != nil || v.(map[string]any)["kind"] != "ConfigMap" {
					t.Errorf("%v %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
