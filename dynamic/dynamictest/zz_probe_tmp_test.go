package dynamictest_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/dynamictest"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/integration/testenv"
)

func describe(err error) string {
	if err == nil {
		return "nil"
	}
	var se apierrors.APIStatus
	if ok := asStatus(err, &se); ok {
		st := se.Status()
		return fmt.Sprintf("%d %s %q", st.Code, st.Reason, st.Message)
	}
	return fmt.Sprintf("plain %T %v", err, err)
}

func asStatus(err error, se *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*se = s
	}
	return ok
}

func probe(t *testing.T, c dynamic.Interface, ns string) []string {
	ctx := t.Context()
	cms := c.Resource(dynamictest.ConfigMaps).Namespace(ns)
	var out []string
	add := func(what string, err error) { out = append(out, what+": "+describe(err)) }
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "probe"}}}
	_, _ = cms.Create(ctx, cm, metav1.CreateOptions{})
	_, err := c.Resource(dynamictest.ConfigMaps).Get(ctx, "probe", metav1.GetOptions{})
	add("get without ns", err)
	_, err = cms.Get(ctx, "probe", metav1.GetOptions{}, "status")
	add("get status", err)
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: "999999999"})
	add("list huge rv", err)
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: "abc"})
	add("list bad rv", err)
	_, err = cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: "garbage"})
	add("list bad continue", err)
	_, err = cms.Patch(ctx, "nonexistent", types.MergePatchType, []byte(`not json`), metav1.PatchOptions{})
	add("patch missing not json", err)
	_, err = cms.Patch(ctx, "probe", types.ApplyPatchType, []byte("a: [b"), metav1.PatchOptions{FieldManager: "x"})
	add("apply bad yaml", err)
	g := cm.DeepCopy()
	g.SetName("")
	g.SetGenerateName(strings.Repeat("g", 70))
	o, err := cms.Create(ctx, g, metav1.CreateOptions{})
	if err == nil {
		out = append(out, fmt.Sprintf("long generateName: %d", len(o.GetName())))
	} else {
		add("long generateName", err)
	}
	m := cm.DeepCopy()
	m.SetName("missing-ns")
	m.SetNamespace("other")
	_, err = cms.Update(ctx, m, metav1.UpdateOptions{})
	add("update missing mismatched ns", err)
	_, err = cms.Patch(ctx, "probe", types.MergePatchType, []byte(`{"metadata":{"name":"x"}}`), metav1.PatchOptions{})
	add("patch rename", err)
	_, err = cms.Patch(ctx, "probe", types.MergePatchType, []byte(`{"metadata":{"namespace":"x"}}`), metav1.PatchOptions{})
	add("patch namespace", err)
	_, err = cms.Patch(ctx, "probe", types.MergePatchType, []byte(`{"metadata":{"uid":"x"}}`), metav1.PatchOptions{})
	add("patch uid", err)
	_, err = cms.Patch(ctx, "probe", types.MergePatchType, []byte(`not json`), metav1.PatchOptions{})
	add("patch not json", err)
	sel := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "kindmismatch"}}}
	_, err = cms.Create(ctx, sel, metav1.CreateOptions{})
	add("kind mismatch", err)
	_, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	add("watch rv 1 (start)", err)
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err == nil {
		ev := <-w.ResultChan()
		out = append(out, fmt.Sprintf("watch rv 1 first event: %s %v", ev.Type, describe(apierrors.FromObject(ev.Object))))
		w.Stop()
	}
	return out
}

func TestProbe(t *testing.T) {
	env := testenv.Shared(t)
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "dt-probe"}}}
	_, _ = c.Resource(dynamictest.Namespaces).Create(t.Context(), ns, metav1.CreateOptions{})
	real := probe(t, c, "dt-probe")
	fk := probe(t, fake.NewClient(), "dt-probe")
	for i := range real {
		t.Logf("\nREAL %s\nFAKE %s", real[i], fk[i])
	}
}
