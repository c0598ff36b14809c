package examples_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestGC starts examples/gc, then creates a new kind (a CRD), an owner of
// that kind and ConfigMaps that depend on it, and deletes the owner. There
// is no garbage collector in the control plane, so only the example can
// notice the orphan.
func TestGC(t *testing.T) {
	env := testenv.Shared(t)
	for _, tc := range []struct {
		name   string
		delete bool
	}{
		{name: "report", delete: false},
		{name: "delete", delete: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testGC(t, env, tc.delete) })
	}
}

func testGC(t *testing.T, env *testenv.Env, del bool) {
	c := adminClient(t, env)
	nsA := newNamespace(t, c, "gc-a")
	nsB := newNamespace(t, c, "gc-b")

	args := []string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--resync", "2s", "-v"}
	verb := "orphan"
	if del {
		args = append(args, "--delete")
		verb = "deleted"
	}
	gc := start(t, "gc", args...)
	gc.waitLine(t, "its synced line", func(s string) bool { return strings.HasPrefix(s, "synced ") })

	// A kind that did not exist when the controller started.
	group := fmt.Sprintf("gc%06d.kdyn.test", rand.IntN(1_000_000))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
	crdName := "things." + group
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crdName},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "things", "singular": "thing", "kind": "Thing"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
	if _, err := c.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := ctxTimeout()
		defer cancel()
		_ = c.Resource(crdGVR).Delete(ctx, crdName, metav1.DeleteOptions{})
	})
	waitEstablished(t, c, crdName)
	thing := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Thing",
			"metadata": map[string]any{"name": name, "namespace": nsA}}}
	}
	doomed := createSoon(t, c.Resource(gvr).Namespace(nsA), thing("doomed"))
	alive := createSoon(t, c.Resource(gvr).Namespace(nsA), thing("alive"))
	ref := func(o *unstructured.Unstructured) any {
		return map[string]any{"apiVersion": group + "/v1", "kind": "Thing", "name": o.GetName(), "uid": string(o.GetUID())}
	}
	cm := func(ns, name string, owners ...any) *unstructured.Unstructured {
		md := map[string]any{"name": name, "namespace": ns}
		if len(owners) > 0 {
			md["ownerReferences"] = owners
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": map[string]any{"k": "v"}}}
	}
	objs := []*unstructured.Unstructured{
		cm(nsA, "orphan", ref(doomed)),              // its only owner is deleted below
		cm(nsA, "partial", ref(doomed), ref(alive)), // one owner stays
		cm(nsA, "kept", ref(alive)),                 // its owner stays
		cm(nsA, "plain"),                            // no owners
		cm(nsB, "cross", ref(alive)),                // owner in another namespace: invalid, so gone
	}
	for _, o := range objs {
		if _, err := c.Resource(cmGVR).Namespace(o.GetNamespace()).Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := ctxTimeout()
		defer cancel()
		for _, o := range objs {
			_ = c.Resource(cmGVR).Namespace(o.GetNamespace()).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
	})

	// The cross-namespace reference is dangling from the start.
	wantCross := fmt.Sprintf("%s ConfigMap/%s/cross (owners gone: Thing.%s/alive uid=%s)", verb, nsB, group, alive.GetUID())
	gc.waitLine(t, fmt.Sprintf("%q", wantCross), func(s string) bool { return s == wantCross })

	if err := c.Resource(gvr).Namespace(nsA).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s ConfigMap/%s/orphan (owners gone: Thing.%s/doomed uid=%s)", verb, nsA, group, doomed.GetUID())
	gc.waitLine(t, fmt.Sprintf("%q", want), func(s string) bool { return s == want })

	// Let two more resyncs pass: every object with owners is checked again.
	time.Sleep(5 * time.Second)
	exists := func(ns, name string) bool {
		_, err := c.Resource(cmGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	for _, name := range []string{"partial", "kept", "plain"} {
		if !exists(nsA, name) {
			t.Errorf("ConfigMap %s/%s was deleted", nsA, name)
		}
	}
	if got := exists(nsA, "orphan"); got == del {
		t.Errorf("ConfigMap %s/orphan exists = %v with --delete=%v", nsA, got, del)
	}
	if got := exists(nsB, "cross"); got == del {
		t.Errorf("ConfigMap %s/cross exists = %v with --delete=%v", nsB, got, del)
	}
	counts := map[string]int{}
	for _, line := range gc.output() {
		for _, ns := range []string{nsA, nsB} {
			if strings.Contains(line, "ConfigMap/"+ns+"/") {
				counts[line]++
			}
		}
	}
	if counts[want] != 1 || counts[wantCross] != 1 || len(counts) != 2 {
		t.Errorf("lines about the test's ConfigMaps (line → times printed): %v; want %q and %q once each", counts, want, wantCross)
	}
	checkLines(t, gc, del)
}

// checkLines checks that every line the controller printed is one of its
// documented lines, with the verb of its mode.
func checkLines(t *testing.T, gc *proc, del bool) {
	t.Helper()
	verb := "orphan "
	if del {
		verb = "deleted "
	}
	for _, line := range gc.output() {
		if !strings.HasPrefix(line, "synced ") && !strings.HasPrefix(line, verb) {
			t.Errorf("unexpected line %q with --delete=%v", line, del)
		}
	}
}
