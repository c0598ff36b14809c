package informer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
)

// TestSourcesListUncompressed checks that informer lists, like watches,
// ask for an uncompressed response.
func TestSourcesListUncompressed(t *testing.T) {
	var enc []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc = append(enc, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a","namespace":"ns"}}]}`))
	}))
	defer srv.Close()
	rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	n := 0
	src := NewSource(rc, gvr, "ns", WithoutManagedFields())
	if _, err := src.List(context.Background(), metav1.ListOptions{}, func(*unstructured.Unstructured) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	wsrc := wireSource{src.(*unstructuredSource)}
	if _, err := wsrc.listWire(context.Background(), metav1.ListOptions{}, nil, func(_ *unstructured.Unstructured, raw []byte) error {
		if raw == nil {
			t.Error("no text")
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	msrc := NewMetadataSource(rc, gvr, "ns", false)
	if _, err := msrc.List(context.Background(), metav1.ListOptions{}, func(*metav1.PartialObjectMetadata) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 || len(enc) != 3 {
		t.Fatalf("%d items, %d requests", n, len(enc))
	}
	for i, e := range enc {
		if e != "identity" {
			t.Errorf("request %d: Accept-Encoding %q", i, e)
		}
	}
}
