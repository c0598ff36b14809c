package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
)

var (
	widgetGVR = schema.GroupVersionResource{Group: "shard.kdyn.io", Version: "v1", Resource: "widgets"}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// createWidgets creates the Widget CRD (once per server) and n widgets in
// ns.
func createWidgets(t *testing.T, c *dynamic.DynamicClient, ns string, n int) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.shard.kdyn.io"},
		"spec": map[string]any{
			"group": "shard.kdyn.io", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := c.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Widget CRD to be served", func() (bool, string) {
		_, err := c.Resource(widgetGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{Limit: 1})
		return err == nil, fmt.Sprint(err)
	})
	for i := range n {
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "shard.kdyn.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%03d", i)}, "spec": map[string]any{"size": int64(i)}}}
		if _, err := c.Resource(widgetGVR).Namespace(ns).Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// testCustomResourceShard: a v1.37.2 server with the gate on shards the
// lists of custom resources without echoing shardInfo; a sharded informer
// of them still learns that the server shards (whole objects and metadata
// only), and one on a server with the gate off that it does not. Its cache
// holds its share either way.
func testCustomResourceShard(t *testing.T, c *dynamic.DynamicClient, gateOn bool) {
	ns := newNamespace(t, c, "shard-cr")
	const n = 60
	createWidgets(t, c, ns, n)
	sh, err := informer.NewShard(informer.ShardByUID, informer.SplitRanges(2)[0])
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Resource(widgetGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range all.Items {
		if sh.Contains(&all.Items[i]) {
			want++
		}
	}
	l, err := c.Resource(widgetGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{ShardSelector: sh.Selector()})
	if err != nil {
		t.Fatal(err)
	}
	echo, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
	t.Logf("gate on=%v: the shard's list holds %d of %d widgets (%d in the shard), shardInfo echo %q", gateOn, len(l.Items), n, want, echo)

	f := informer.NewFactory(c, informer.FactoryOptions{Namespace: ns})
	full := f.ForResource(widgetGVR, informer.InformerOptions{Shard: sh})
	meta := f.ForResourceMetadata(widgetGVR, informer.InformerOptions{Shard: sh})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 30*time.Second, "both informers to sync and probe", func() (bool, string) {
		_, k1 := full.ServerSharded()
		_, k2 := meta.ServerSharded()
		return full.HasSynced() && meta.HasSynced() && k1 && k2, fmt.Sprintf("synced %v %v, known %v %v", full.HasSynced(), meta.HasSynced(), k1, k2)
	})
	for name, got := range map[string][2]any{
		"whole objects": {full.Store().Len(), first(full.ServerSharded())},
		"metadata only": {meta.Store().Len(), first(meta.ServerSharded())},
	} {
		if got[0] != want || got[1] != gateOn {
			t.Errorf("%s: %d cached (want %d), ServerSharded %v (want %v)", name, got[0], want, got[1], gateOn)
		}
	}
}

func first(a, _ bool) bool { return a }
