package lib

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// The in-process micro benchmarks: no control plane, a fake discovery
// server and a synthetic list body. `go test -bench . ./lib` from bench/.

func fakeConn(url string) Conn { return Conn{Host: url} }

func BenchmarkRESTMapping(b *testing.B) {
	srv := FakeDiscoveryServer(nil)
	defer srv.Close()
	km, cm, err := Mappers(fakeConn(srv.URL))
	if err != nil {
		b.Fatal(err)
	}
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	b.Run("kdyn", func(b *testing.B) { BenchRESTMapping(b, km, gk) })
	b.Run("client-go", func(b *testing.B) { BenchRESTMapping(b, cm, gk) })
}

const decodeObjects = 1000

func BenchmarkListDecode(b *testing.B) {
	body := SyntheticConfigMapList(decodeObjects)
	b.Run("kdyn", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			l, err := dynamic.DecodeList(body)
			if err != nil || len(l.Items) != decodeObjects {
				b.Fatal(err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var l unstructured.UnstructuredList
			if err := runtime.DecodeInto(unstructured.UnstructuredJSONScheme, body, &l); err != nil || len(l.Items) != decodeObjects {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkListHTTP lists through each dynamic client from a local HTTP
// server answering with the synthetic body: transport plus decode.
func BenchmarkListHTTP(b *testing.B) {
	body := SyntheticConfigMapList(decodeObjects)
	srv := FakeDiscoveryServer(body)
	defer srv.Close()
	cs, err := dynamicContenders(fakeConn(srv.URL), Unlimited)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cs {
		b.Run(c.name, func(b *testing.B) {
			ri := c.ri(GVRConfigMaps, NSConfigMaps)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				l, err := ri.List(context.Background(), metav1.ListOptions{})
				if err != nil || len(l.Items) != decodeObjects {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetHTTP gets one ConfigMap through each dynamic client from a
// local HTTP server: the per-request client overhead.
func BenchmarkGetHTTP(b *testing.B) {
	srv := FakeDiscoveryServer(SyntheticConfigMapObject())
	defer srv.Close()
	cs, err := dynamicContenders(fakeConn(srv.URL), Unlimited)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cs {
		b.Run(c.name, func(b *testing.B) {
			ri := c.ri(GVRConfigMaps, NSConfigMaps)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ri.Get(context.Background(), "cm-00000", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
