package dynamictest_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/dynamictest"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/integration/testenv"
)

func probe2(t *testing.T, c dynamic.Interface, ns string) {
	ctx := t.Context()
	cms := c.Resource(dynamictest.ConfigMaps).Namespace(ns)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "p2", "labels": map[string]any{"p": "in"}}}}
	_, _ = cms.Create(ctx, cm, metav1.CreateOptions{})
	w, err := cms.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true, LabelSelector: "p=in"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	timer := time.After(3 * time.Second)
	for i := 0; i < 2; i++ {
		select {
		case ev := <-w.ResultChan():
			o := ev.Object.(metav1.Object)
			t.Logf("legacy watch event %s %s rv=%s ann=%v", ev.Type, o.GetName(), o.GetResourceVersion(), o.GetAnnotations())
		case <-timer:
			t.Logf("no more events")
			i = 2
		}
	}
	p, _ := cms.Patch(ctx, "p2", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"p":"out"}}}`), metav1.PatchOptions{})
	ev := <-w.ResultChan()
	o := ev.Object.(*unstructured.Unstructured)
	t.Logf("leave: %s label=%s rv=%s (patched rv %s)", ev.Type, o.GetLabels()["p"], o.GetResourceVersion(), p.GetResourceVersion())
	_ = watch.Added
}

func TestProbe2(t *testing.T) {
	env := testenv.Shared(t)
	c, _ := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	t.Log("REAL")
	probe2(t, c, "dt-probe2")
	t.Log("FAKE")
	probe2(t, fake.NewClient(), "dt-probe2")
}
