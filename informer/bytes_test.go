package informer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/internal/fastjson"
)

// heapGrowth is the live heap that fill's result keeps, after collections
// before and after.
func heapGrowth(fill func() any) (int64, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := fill()
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), kept
}

// configMapJSON is a ConfigMap as a server sends it: labels, annotations,
// an owner, and some data.
func configMapJSON(i int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%06d","namespace":"ns-%d","uid":"6a0c1b8e-%08d-4e5f-9a7b-1c2d3e4f5a6b","resourceVersion":"%d","creationTimestamp":"2026-12-05T06:00:00Z","labels":{"app":"web","tier":"front","index":"%d"},"annotations":{"note":"%s"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"11111111-2222-3333-4444-%012d","controller":true}]},"data":{"config.yaml":"%s","n":"%d"}}`,
		i, i%7, i, 1000+i, i, strings.Repeat("a", 40+i%30), i, strings.Repeat("x", 100+i%200), i)
}

// The bytes estimate of each store tracks the heap its entries hold: for
// decoded objects, compact JSON and compact metadata, within a third of
// what the runtime measures.
func TestCacheBytesTrackTheHeap(t *testing.T) {
	const n = 5000
	keyOf := func(i int) string { return fmt.Sprintf("ns-%d/cm-%06d", i%7, i) }
	decode := func(i int) *unstructured.Unstructured {
		m, err := fastjson.DecodeObject(configMapJSON(i))
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	partial := func(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
		p := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
		u.GetObjectKind()
		p.ObjectMeta = metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
			CreationTimestamp: u.GetCreationTimestamp(), Labels: u.GetLabels(), Annotations: u.GetAnnotations(), OwnerReferences: u.GetOwnerReferences()}
		return p
	}
	for _, tc := range []struct {
		name string
		fill func() (any, int64)
	}{
		{"decoded objects", func() (any, int64) {
			s := newMapStorage[*unstructured.Unstructured]()
			for i := range n {
				_ = s.put(keyOf(i), decode(i), nil)
			}
			return s, sumBytes(s.keys(), s.bytes)
		}},
		{"decoded metadata", func() (any, int64) {
			s := newMapStorage[*metav1.PartialObjectMetadata]()
			for i := range n {
				_ = s.put(keyOf(i), partial(decode(i)), nil)
			}
			return s, sumBytes(s.keys(), s.bytes)
		}},
		{"compact objects", func() (any, int64) {
			s := newCompactStorage()
			for i := range n {
				_ = s.put(keyOf(i), decode(i), configMapJSON(i))
			}
			return s, sumBytes(s.keys(), s.bytes)
		}},
		{"compact metadata", func() (any, int64) {
			s := newCompactMetadataStorage()
			for i := range n {
				_ = s.put(keyOf(i), partial(decode(i)), nil)
			}
			return s, sumBytes(s.keys(), s.bytes)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var estimate int64
			heap, kept := heapGrowth(func() any {
				s, e := tc.fill()
				estimate = e
				return s
			})
			runtime.KeepAlive(kept)
			ratio := float64(estimate) / float64(heap)
			t.Logf("%d entries: estimate %d bytes, heap %d bytes (%.2f×)", n, estimate, heap, ratio)
			if ratio < 0.67 || ratio > 1.33 {
				t.Fatalf("the estimate (%d bytes) is %.2f× the heap the entries hold (%d bytes)", estimate, ratio, heap)
			}
		})
	}
}

func sumBytes(keys []string, bytes func(string) int64) int64 {
	var n int64
	for _, k := range keys {
		n += bytes(k)
	}
	return n
}
