package informer

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic/fake"
)

func TestCompactMetadataRoundTrip(t *testing.T) {
	del := metav1.NewTime(time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC))
	grace := int64(30)
	obj := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "a", Namespace: "ns", UID: "0b5c3c1e-1d2f-4a4b-9e7a-3f1c2d4e5f60", ResourceVersion: "12345", Generation: 3,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)),
			DeletionTimestamp: &del, DeletionGracePeriodSeconds: &grace,
			Labels:          map[string]string{"app": "web", "tier": "api"},
			Annotations:     map[string]string{"note": "quote\" and é"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u-1"}},
			Finalizers:      []string{"example.com/keep"},
		},
	}
	c := newCompactMetadataStorage()
	if err := c.put("ns/a", obj, nil); err != nil {
		t.Fatal(err)
	}
	if raw := c.m["ns/a"].raw; cap(raw) != len(raw) {
		t.Fatalf("entry not exactly sized: len %d cap %d", len(raw), cap(raw))
	}
	got, ok := c.get("ns/a")
	if !ok {
		t.Fatal("not cached")
	}
	if diff := cmp.Diff(obj, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got == obj {
		t.Fatal("get returned the object put, not a decoded copy")
	}
	if rv, ok := c.resourceVersion("ns/a"); !ok || rv != "12345" {
		t.Fatalf("resourceVersion = %q, %v", rv, ok)
	}
	// Every entry shares one TypeMeta.
	b := obj.DeepCopy()
	b.Name = "b"
	if err := c.put("ns/b", b, nil); err != nil {
		t.Fatal(err)
	}
	if c.m["ns/a"].tm != c.m["ns/b"].tm || len(c.types) != 1 {
		t.Fatal("the TypeMeta is not shared")
	}
	seen := map[string]string{}
	c.each(func(key string, o *metav1.PartialObjectMetadata) bool { seen[key] = o.Name; return true })
	if diff := cmp.Diff(map[string]string{"ns/a": "a", "ns/b": "b"}, seen); diff != "" {
		t.Fatalf("each (-want +got):\n%s", diff)
	}
	c.remove("ns/a")
	if _, ok := c.get("ns/a"); ok || c.size() != 1 || len(c.keys()) != 1 {
		t.Fatal("remove left the entry")
	}
}

// InformerOptions.Compact gives metadata-only informers the compact
// store, as a distinct informer from the default one.
func TestFactoryCompactMetadata(t *testing.T) {
	f := NewFactory(fake.NewClient(), FactoryOptions{})
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	plain := f.ForResourceMetadata(gvr, InformerOptions{})
	compact := f.ForResourceMetadata(gvr, InformerOptions{Compact: true})
	if plain == compact {
		t.Fatal("Compact gave the same informer as the default")
	}
	if _, ok := compact.store.data.(*compactMetadataStorage); !ok {
		t.Fatalf("compact metadata informer stores in %T", compact.store.data)
	}
	if _, ok := plain.store.data.(*compactMetadataStorage); ok {
		t.Fatal("the default metadata informer stores compactly")
	}
}

// InformerOptions.MetadataTransform applies to metadata-only informers
// (and Transform does not): objects enter the cache transformed, and an
// informer with a transform is distinct from one without.
func TestFactoryMetadataTransform(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns"},
	}}
	client := fake.NewClient(cm)
	f := NewFactory(client, FactoryOptions{})
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	mark := func(m *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		m.SetAnnotations(map[string]string{"transformed": "yes"})
		return m, nil
	}
	plain := f.ForResourceMetadata(gvr, InformerOptions{})
	marked := f.ForResourceMetadata(gvr, InformerOptions{MetadataTransform: mark})
	if plain == marked {
		t.Fatal("MetadataTransform gave the same informer as none")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.Run(ctx) }()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	got, ok := marked.Store().Get("ns/a")
	if !ok || got.GetAnnotations()["transformed"] != "yes" {
		t.Fatalf("transformed informer holds %v", got)
	}
	if got, _ := plain.Store().Get("ns/a"); got.GetAnnotations()["transformed"] != "" {
		t.Fatalf("the informer without a transform holds %v", got)
	}
}
