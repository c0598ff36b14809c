package informer

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/internal/wire"
)

func TestCompactRoundTrip(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "labels": map[string]any{"x": "y"}},
		"data":     map[string]any{"s": "quote\" back\\ tab\t nl\n ctl\x01 uni é \u2028 <&>", "empty": ""},
		"spec":     map[string]any{"i": int64(-42), "f": 1.5, "big": 1e300, "small": 1e-9, "t": true, "n": nil, "list": []any{int64(1), "two", []any{}, map[string]any{}}},
	}
	c := newCompactStorage()
	if err := c.put("ns/a", &unstructured.Unstructured{Object: obj}, nil); err != nil {
		t.Fatal(err)
	}
	raw := c.m["ns/a"].raw
	if cap(raw) != len(raw) {
		t.Fatalf("entry not exactly sized: len %d cap %d", len(raw), cap(raw))
	}
	back, err := fastjson.DecodeObject(raw)
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if diff := cmp.Diff(obj, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if rv, ok := c.resourceVersion("ns/a"); !ok || rv != "5" {
		t.Fatalf("rv %q", rv)
	}
	got, ok := c.get("ns/a")
	if !ok || got.GetName() != "a" {
		t.Fatal("get")
	}
}

// wiredSource is a scripted source that hands each list item over with a
// text of its own (marked, so the test can tell it from an encoding of the
// object), as kdyn's feeds do with the server's.
type wiredSource struct{ *scriptedSource }

func markedText(obj *unstructured.Unstructured) []byte {
	b, _ := fastjson.Append(nil, obj.Object)
	return append([]byte(`{"text":"wire",`), b[1:]...)
}

func (s wiredSource) list(ctx context.Context, opts metav1.ListOptions, _ wire.Known, each func(*unstructured.Unstructured, []byte) error) (ListPage, error) {
	return s.List(ctx, opts, func(obj *unstructured.Unstructured) error { return each(obj, markedText(obj)) })
}

func (s wiredSource) probeShard(ctx context.Context, opts metav1.ListOptions) (ListPage, int, error) {
	return countedList[*unstructured.Unstructured](ctx, s, opts)
}

func (s wiredSource) watch(ctx context.Context, opts metav1.ListOptions, _ wire.Known) (wire.Stream, error) {
	w, err := s.Watch(ctx, opts)
	return wire.Stream{Interface: w}, err
}

func TestCompactKeepsSourceText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, transform := range []bool{false, true} {
			src := newScriptedSource()
			src.addList("10", "", nil, cm("a", "1"))
			w := src.addWatch(nil)
			opts := listWatch
			opts.storage = newCompactStorage()
			if transform {
				opts.Transform = func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
					u.SetLabels(map[string]string{"t": "x"})
					return u, nil
				}
			}
			inf := startInformer(t, wiredSource{src}, opts, nil)
			waitUntil(t, inf.HasSynced)
			b := cm("b", "2")
			w.Add(&wire.TextObject{Unstructured: b, Text: markedText(b)})
			waitUntil(t, func() bool { _, ok := inf.Store().Get("ns/b"); return ok })
			for _, key := range []string{"ns/a", "ns/b"} {
				raw, ok := RawJSON(inf, key)
				if !ok {
					t.Fatalf("%s not cached", key)
				}
				kept := bytes.HasPrefix(raw, []byte(`{"text":"wire",`))
				if kept == transform {
					// The text is of the object before a transform: with one,
					// the transformed object is encoded instead.
					t.Errorf("transform=%v %s: %s", transform, key, raw)
				}
				got, _ := inf.Store().Get(key)
				if transform != (got.GetLabels()["t"] == "x") {
					t.Errorf("transform=%v %s: read back %v", transform, key, got.Object)
				}
			}
		}
	})
}

// The end of a relist removes the objects it did not see; a compact cache
// decodes only those, not every object it holds (which would cost a relist
// of an unchanged resource the decode of the whole cache).
func TestCompactRelistDecodesOnlyTheGone(t *testing.T) {
	c := newCompactStorage()
	inf := New[*unstructured.Unstructured](newScriptedSource(), Options[*unstructured.Unstructured]{storage: c})
	for i := range 100 {
		o := cm(fmt.Sprintf("o%03d", i), "5")
		if err := inf.store.putLocked(Key(o), o, nil); err != nil {
			t.Fatal(err)
		}
	}
	inf.firstSync = false
	inf.beginSync()
	for i := range 100 {
		if i == 42 {
			continue // gone from the server
		}
		if !inf.known(fmt.Sprintf("ns/o%03d", i), "5") {
			t.Fatalf("o%03d not known", i)
		}
	}
	before := c.decodes.Load()
	inf.endSync("6")
	if got := c.decodes.Load() - before; got != 1 {
		t.Fatalf("the end of the relist decoded %d objects, want 1 (the one gone)", got)
	}
	if _, ok := inf.Store().Get("ns/o042"); ok || inf.Store().Len() != 99 {
		t.Fatalf("%d cached (o042 among them: %v), want the 99 seen", inf.Store().Len(), ok)
	}
}

// A handler added to a compact informer that holds objects gets them all,
// in key order and as cached when it was added, but each is decoded as it
// is delivered: the replay never holds the whole cache decoded at once.
func TestCompactReplayDecodesAtDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCompactStorage()
		inf := New[*unstructured.Unstructured](newScriptedSource(), Options[*unstructured.Unstructured]{storage: c})
		const n = 50
		for i := range n {
			o := cm(fmt.Sprintf("o%03d", i), "5")
			if err := inf.store.putLocked(Key(o), o, nil); err != nil {
				t.Fatal(err)
			}
		}
		inf.synced.Store(true)
		before := c.decodes.Load()
		var got []string
		var decodedAtDelivery []int64
		r, err := inf.AddEventHandler(HandlerFuncs[*unstructured.Unstructured]{AddFunc: func(o *unstructured.Unstructured, initial bool) {
			if !initial {
				t.Errorf("%s delivered as a new object, want the initial list's", o.GetName())
			}
			got = append(got, o.GetName()+"@"+o.GetResourceVersion())
			decodedAtDelivery = append(decodedAtDelivery, c.decodes.Load()-before)
		}})
		if err != nil {
			t.Fatal(err)
		}
		if d := c.decodes.Load() - before; d != 0 {
			t.Fatalf("adding the handler decoded %d objects, want none until delivery", d)
		}
		// A change after the handler was added does not alter its replay.
		o := cm("o007", "6")
		if err := inf.store.putLocked(Key(o), o, nil); err != nil {
			t.Fatal(err)
		}
		inf.startHandler(r)
		waitUntil(t, r.HasSynced)
		r.Remove()
		if len(got) != n {
			t.Fatalf("delivered %d objects, want %d", len(got), n)
		}
		for i, name := range got {
			if want := fmt.Sprintf("o%03d@5", i); name != want {
				t.Fatalf("delivery %d is %s, want %s (key order, as cached when the handler was added)", i, name, want)
			}
			if decodedAtDelivery[i] != int64(i+1) {
				t.Fatalf("at delivery %d, %d objects had been decoded, want %d (one per delivery)", i, decodedAtDelivery[i], i+1)
			}
		}
	})
}
