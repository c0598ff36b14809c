package examples_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var widgetGVR = schema.GroupVersionResource{Group: "examples.kdyn.io", Version: "v1", Resource: "widgets"}

// TestCRDController runs examples/crd-controller with --install-crd and
// checks the ConfigMap and status it keeps for a Widget through a spec
// change, someone else's edit, a deletion by hand, and a name clash.
func TestCRDController(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c, "widgets")
	start(t, "crd-controller", "--kubeconfig", env.KubeconfigPath(testenv.Admin), "--install-crd", "--namespace", ns, "-v")
	waitEstablished(t, c, "widgets.examples.kdyn.io")
	t.Cleanup(func() {
		ctx, cancel := ctxTimeout()
		defer cancel()
		for _, name := range []string{"web", "clash"} {
			_ = c.Resource(widgetGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
			_ = c.Resource(cmGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
	})
	widgets := c.Resource(widgetGVR).Namespace(ns)
	cms := c.Resource(cmGVR).Namespace(ns)

	w := createSoon(t, widgets, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.kdyn.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec":     map[string]any{"data": map[string]any{"color": "blue", "size": "large"}},
	}})
	cm := waitConfigMap(t, cms, w, map[string]string{"color": "blue", "size": "large"})
	ready := waitStatus(t, widgets, "web", 1, "True", "ConfigMapSynced")

	// A spec change: the ConfigMap follows (a key removed from the spec is
	// removed from it), and so does observedGeneration; Ready stays True,
	// so its lastTransitionTime does not move (the sleep makes a bump
	// visible at the condition's one-second precision).
	time.Sleep(1100 * time.Millisecond)
	patch := []byte(`{"spec":{"data":{"color":"red","size":null,"shape":"round"}}}`)
	if _, err := widgets.Patch(t.Context(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"color": "red", "shape": "round"}
	waitConfigMap(t, cms, w, want)
	after := waitStatus(t, widgets, "web", 2, "True", "ConfigMapSynced")
	if after["lastTransitionTime"] != ready["lastTransitionTime"] {
		t.Errorf("lastTransitionTime moved from %v to %v while Ready stayed True", ready["lastTransitionTime"], after["lastTransitionTime"])
	}

	// Someone else edits the ConfigMap (an update by another field
	// manager, changing a key and adding one): it is put back.
	cur, err := cms.Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedStringMap(cur.Object, map[string]string{"color": "green", "shape": "round", "extra": "x"}, "data")
	if _, err := cms.Update(t.Context(), cur, metav1.UpdateOptions{FieldManager: "intruder"}); err != nil {
		t.Fatal(err)
	}
	waitConfigMap(t, cms, w, want)

	// Deleted by hand: it is created again.
	if err := cms.Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := waitConfigMap(t, cms, w, want)
	if again.GetUID() == cm.GetUID() {
		t.Error("the ConfigMap was not recreated")
	}

	// A ConfigMap of the same name controlled by something else cannot be
	// taken over: Ready is False with the reason, and turns True (with a
	// new lastTransitionTime) once the clash is gone.
	yes := true
	foreign := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "clash", "namespace": ns, "ownerReferences": []any{map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "name": "someone", "uid": "00000000-0000-0000-0000-000000000001", "controller": yes}}}}}
	if _, err := cms.Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clash := createSoon(t, widgets, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "examples.kdyn.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "clash", "namespace": ns},
		"spec":     map[string]any{"data": map[string]any{"k": "v"}},
	}})
	failed := waitStatus(t, widgets, "clash", 1, "False", "ConfigMapApplyFailed")
	time.Sleep(1100 * time.Millisecond)
	if err := cms.Delete(t.Context(), "clash", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMap(t, cms, clash, map[string]string{"k": "v"})
	fixed := waitStatus(t, widgets, "clash", 1, "True", "ConfigMapSynced")
	if fixed["lastTransitionTime"] == failed["lastTransitionTime"] {
		t.Errorf("lastTransitionTime stayed %v when Ready went from False to True", fixed["lastTransitionTime"])
	}
}

// waitConfigMap waits until the Widget's ConfigMap holds exactly data,
// with the owner label and the controller reference, and returns it.
func waitConfigMap(t *testing.T, cms dynamic.ResourceInterface, w *unstructured.Unstructured, data map[string]string) *unstructured.Unstructured {
	t.Helper()
	var cm *unstructured.Unstructured
	eventually(t, fmt.Sprintf("ConfigMap %s holds %v", w.GetName(), data), func() (bool, string) {
		var err error
		cm, err = cms.Get(t.Context(), w.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not found"
		}
		if err != nil {
			t.Fatal(err)
		}
		have, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		if !maps.Equal(have, data) {
			return false, fmt.Sprintf("data %v", have)
		}
		if cm.GetLabels()["examples.kdyn.io/widget"] != w.GetName() {
			return false, fmt.Sprintf("labels %v", cm.GetLabels())
		}
		refs := cm.GetOwnerReferences()
		if len(refs) != 1 {
			return false, fmt.Sprintf("ownerReferences %v", refs)
		}
		r := refs[0]
		if r.APIVersion != "examples.kdyn.io/v1" || r.Kind != "Widget" || r.Name != w.GetName() || r.UID != w.GetUID() ||
			r.Controller == nil || !*r.Controller || r.BlockOwnerDeletion == nil || !*r.BlockOwnerDeletion {
			return false, fmt.Sprintf("ownerReference %+v", r)
		}
		return true, ""
	})
	return cm
}

// waitStatus waits until the Widget's status has observedGeneration gen,
// equal to its metadata.generation, and a Ready condition with status and
// reason (and observedGeneration gen); it returns the condition.
func waitStatus(t *testing.T, widgets dynamic.ResourceInterface, name string, gen int64, status, reason string) map[string]any {
	t.Helper()
	var ready map[string]any
	eventually(t, fmt.Sprintf("Widget %s status at generation %d with Ready=%s/%s", name, gen, status, reason), func() (bool, string) {
		w, err := widgets.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, _, _ := unstructured.NestedMap(w.Object, "status")
		observed, _, _ := unstructured.NestedInt64(w.Object, "status", "observedGeneration")
		if w.GetGeneration() != gen || observed != gen {
			return false, fmt.Sprintf("generation %d, status %v", w.GetGeneration(), st)
		}
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if m["type"] != "Ready" {
				continue
			}
			g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			if m["status"] == status && m["reason"] == reason && g == gen && m["lastTransitionTime"] != nil && m["message"] != "" {
				ready = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %v", st)
	})
	return ready
}
