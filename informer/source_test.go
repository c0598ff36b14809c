package informer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/internal/wire"
	"github.com/kdyn/kdyn/rest"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Over kdyn's own client the sources take its fast paths: lists, like
// watches, ask for an uncompressed answer, and a compact source hands
// over each item's text.
func TestSourcesOverKdynsClientTakeTheFastPaths(t *testing.T) {
	var enc []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		enc = append(enc, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a","namespace":"ns"}}]}`))
	}))
	defer srv.Close()
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(configMaps).Namespace("ns")
	n := 0
	src := NewResourceSource(ri, SourceOptions{})
	if _, err := src.List(context.Background(), metav1.ListOptions{}, func(*unstructured.Unstructured) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	compact := newObjectSource(ri, wire.Decoding{OmitManagedFields: true, Text: true})
	if compact.ep == nil {
		t.Fatal("the source over kdyn's client has no endpoint")
	}
	if _, err := compact.list(context.Background(), metav1.ListOptions{}, nil, func(_ *unstructured.Unstructured, text []byte) error {
		if text == nil {
			t.Error("no text")
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	msrc := NewMetadataSource(ri, SourceOptions{})
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

// Over any other dynamic.Interface the sources call its List and Watch,
// dropping managedFields unless kept, and cutting objects down to their
// metadata for a metadata source.
func TestSourcesOverAnotherClientUseListAndWatch(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "labels": map[string]any{"app": "web"},
			"managedFields": []any{map[string]any{"manager": "m", "operation": "Update"}}},
		"data": map[string]any{"k": "v"},
	}}
	fc := fake.NewClient(cm)
	ri := fc.Resource(configMaps).Namespace("ns")
	if _, ok := ri.(wire.Provider); ok {
		t.Fatal("the fake has kdyn's fast paths")
	}
	ctx := t.Context()
	for _, keep := range []bool{false, true} {
		var got []*unstructured.Unstructured
		page, err := NewResourceSource(ri, SourceOptions{KeepManagedFields: keep}).List(ctx, metav1.ListOptions{}, func(u *unstructured.Unstructured) error {
			got = append(got, u)
			return nil
		})
		if err != nil || len(got) != 1 || page.ResourceVersion == "" {
			t.Fatalf("keep=%v: list %+v, %d items, %v", keep, page, len(got), err)
		}
		if (len(got[0].GetManagedFields()) > 0) != keep || got[0].Object["data"] == nil {
			t.Errorf("keep=%v: item %v", keep, got[0].Object)
		}
		var metas []*metav1.PartialObjectMetadata
		if _, err := NewMetadataSource(ri, SourceOptions{KeepManagedFields: keep}).List(ctx, metav1.ListOptions{}, func(p *metav1.PartialObjectMetadata) error {
			metas = append(metas, p)
			return nil
		}); err != nil || len(metas) != 1 || metas[0].Name != "a" || metas[0].Labels["app"] != "web" || (len(metas[0].ManagedFields) > 0) != keep {
			t.Fatalf("keep=%v: metadata list %+v, %v", keep, metas, err)
		}
	}

	w, err := NewMetadataSource(ri, SourceOptions{}).Watch(ctx, metav1.ListOptions{ResourceVersion: page(t, fc)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm2 := cm.DeepCopy()
	cm2.SetName("b")
	cm2.SetResourceVersion("")
	if _, err := ri.Create(ctx, cm2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		p, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if ev.Type != watch.Added || !ok || p.Name != "b" || p.ManagedFields != nil {
			t.Fatalf("event %v %#v", ev.Type, ev.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
}

// page returns the fake's current list resourceVersion.
func page(t *testing.T, fc *fake.Client) string {
	t.Helper()
	l, err := fc.Resource(configMaps).Namespace("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.GetResourceVersion()
}
