package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Helpers shared by the patch, label, edit and wait tests. Their names
// start with "oc" (object commands) so they do not clash with other
// test files of the package.

var (
	ocNamespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ocConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ocDeployGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ocCRDGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func ocClient(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ocSuffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// ocNamespace creates a namespace for one test (namespaces never finish
// terminating without a controller manager, so it is left behind).
func ocNamespace(t *testing.T, c *dynamic.DynamicClient) string {
	t.Helper()
	name := "oc-" + ocSuffix()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := c.Resource(ocNamespaceGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// ocConfigMap creates a ConfigMap.
func ocConfigMap(t *testing.T, c *dynamic.DynamicClient, ns, name string, labels, data map[string]string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}}}
	if labels != nil {
		u.SetLabels(labels)
	}
	if data != nil {
		d := map[string]any{}
		for k, v := range data {
			d[k] = v
		}
		u.Object["data"] = d
	}
	got, err := c.Resource(ocConfigMapGVR).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func ocGet(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Resource(gvr).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ocGizmos creates a namespaced CRD "gizmos.<unique group>" (kind Gizmo)
// with a status subresource, waits until it is established, and deletes it
// when the test ends. It returns the resource. Tests name it in full
// ("gizmos.<group>"): the discovery cache the runs share may still list the
// gizmos of an earlier test, which "gizmo" alone could resolve to.
func ocGizmos(t *testing.T, c *dynamic.DynamicClient) schema.GroupVersionResource {
	t.Helper()
	group := "oc" + ocSuffix() + ".test.kdyn.io"
	name := "gizmos." + group
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
						"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					},
				}},
			}},
		},
	}}
	if _, err := c.Resource(ocCRDGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Resource(ocCRDGVR).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
	ocEventually(t, "CRD "+name+" served", func() bool {
		got, err := c.Resource(ocCRDGVR).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		established := false
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cd := range conds {
			if m, _ := cd.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				established = true
			}
		}
		if !established {
			return false
		}
		_, err = c.Resource(gvr).Namespace("default").List(t.Context(), metav1.ListOptions{Limit: 1})
		return err == nil
	})
	return gvr
}

// ocGizmo creates a Gizmo with spec.
func ocGizmo(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.Group + "/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	got, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ocEventually polls cond for up to 30s.
func ocEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// ocExpect fails unless the run exited with code and stderr contains want.
func (r result) ocExpect(t *testing.T, code int, want string) result {
	t.Helper()
	if r.code != code || !strings.Contains(r.stderr, want) {
		t.Fatalf("want exit %d and stderr containing %q; got exit %d\nstdout:\n%s\nstderr:\n%s", code, want, r.code, r.stdout, r.stderr)
	}
	return r
}

func ocStdout(t *testing.T, r result, want string) {
	t.Helper()
	if r.stdout != want {
		t.Fatalf("stdout = %q, want %q\nstderr:\n%s", r.stdout, want, r.stderr)
	}
}

func TestPatchStrategicMergeOnDeployment(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "registry.example/app:1"},
					map[string]any{"name": "sidecar", "image": "registry.example/sidecar:1"},
				}},
			},
		},
	}}
	if _, err := c.Resource(ocDeployGVR).Namespace(ns).Create(t.Context(), deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Containers merge by name: only app's image changes, sidecar stays.
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:2"}]}}}}`
	r := kdyn(t, env, "-n", ns, "patch", "deploy", "web", "-p", patch).must(t)
	ocStdout(t, r, "deployment.apps/web patched\n")
	got := ocGet(t, c, ocDeployGVR, ns, "web")
	containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	if len(containers) != 2 {
		t.Fatalf("containers after a strategic merge patch: %v", containers)
	}
	images := map[string]any{}
	for _, ct := range containers {
		m := ct.(map[string]any)
		images[m["name"].(string)] = m["image"]
	}
	if images["app"] != "registry.example/app:2" || images["sidecar"] != "registry.example/sidecar:1" {
		t.Fatalf("images = %v", images)
	}

	// The same patch again changes nothing.
	r = kdyn(t, env, "-n", ns, "patch", "deployment/web", "-p", patch).must(t)
	ocStdout(t, r, "deployment.apps/web patched (no change)\n")

	// YAML is accepted.
	r = kdyn(t, env, "-n", ns, "patch", "deploy/web", "-p", "spec:\n  replicas: 3\n").must(t)
	ocStdout(t, r, "deployment.apps/web patched\n")
	if n, _, _ := unstructured.NestedInt64(ocGet(t, c, ocDeployGVR, ns, "web").Object, "spec", "replicas"); n != 3 {
		t.Fatalf("replicas = %d after a YAML patch", n)
	}

	// The scale subresource.
	r = kdyn(t, env, "-n", ns, "patch", "deploy/web", "--subresource", "scale", "--type", "merge", "-p", `{"spec":{"replicas":5}}`).must(t)
	ocStdout(t, r, "deployment.apps/web patched\n")
	if n, _, _ := unstructured.NestedInt64(ocGet(t, c, ocDeployGVR, ns, "web").Object, "spec", "replicas"); n != 5 {
		t.Fatalf("replicas = %d after patching scale", n)
	}
}

func TestPatchCustomResource(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	ocGizmo(t, c, gvr, ns, "g1", map[string]any{"color": "red", "size": int64(1)})
	typ := "gizmos." + gvr.Group

	// No --type: a merge patch is chosen for a custom resource.
	r := kdyn(t, env, "-n", ns, "patch", typ+"/g1", "-p", `{"spec":{"color":"blue"}}`).must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 patched\n")
	spec, _, _ := unstructured.NestedMap(ocGet(t, c, gvr, ns, "g1").Object, "spec")
	if spec["color"] != "blue" || spec["size"] != int64(1) {
		t.Fatalf("spec after merge patch = %v", spec)
	}

	// Asking for strategic merge explicitly fails, with the reason.
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--type", "strategic", "-p", `{"spec":{"color":"green"}}`).
		ocExpect(t, 1, "application/strategic-merge-patch+json is not supported by "+gvr.Group+"/v1, Kind=Gizmo")

	// A JSON patch.
	r = kdyn(t, env, "-n", ns, "patch", typ, "g1", "--type", "json", "-p", `[{"op":"replace","path":"/spec/size","value":7},{"op":"remove","path":"/spec/color"}]`).must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 patched\n")
	spec, _, _ = unstructured.NestedMap(ocGet(t, c, gvr, ns, "g1").Object, "spec")
	if _, has := spec["color"]; has || spec["size"] != int64(7) {
		t.Fatalf("spec after JSON patch = %v", spec)
	}
	// A failing JSON patch test operation is the server's error.
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--type", "json", "-p", `[{"op":"test","path":"/spec/size","value":8}]`).
		ocExpect(t, 1, "the server rejected our request")

	// The status subresource: spec is not touched, status is set. A status
	// change through the main resource is dropped by the server, which
	// is reported as no change.
	r = kdyn(t, env, "-n", ns, "patch", typ, "g1", "-p", `{"status":{"phase":"Ready"}}`).must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 patched (no change)\n")
	r = kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "-p", `{"status":{"phase":"Ready"}}`).must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 patched\n")
	if phase, _, _ := unstructured.NestedString(ocGet(t, c, gvr, ns, "g1").Object, "status", "phase"); phase != "Ready" {
		t.Fatalf("status.phase = %q", phase)
	}

	// -o prints the patched object.
	r = kdyn(t, env, "-n", ns, "patch", typ, "g1", "-p", `{"spec":{"size":8}}`, "-o", "json").must(t)
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil || obj["kind"] != "Gizmo" {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	r = kdyn(t, env, "-n", ns, "patch", typ, "g1", "-p", `{"spec":{"size":8}}`, "-o", "name").must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1\n")
}

func TestPatchApplyAndDryRun(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "settings", nil, map[string]string{"a": "1"})

	// Server-side apply; apiVersion and kind are filled in.
	r := kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--type", "apply", "-p", "data:\n  b: \"2\"\n").must(t)
	ocStdout(t, r, "configmap/settings patched\n")
	got := ocGet(t, c, ocConfigMapGVR, ns, "settings")
	if data, _, _ := unstructured.NestedStringMap(got.Object, "data"); data["a"] != "1" || data["b"] != "2" {
		t.Fatalf("data after apply = %v", data)
	}
	applied := false
	for _, mf := range got.GetManagedFields() {
		if mf.Manager == "kubectl-patch" && mf.Operation == metav1.ManagedFieldsOperationApply {
			applied = true
		}
	}
	if !applied {
		t.Fatalf("no Apply entry for kubectl-patch in managedFields: %+v", got.GetManagedFields())
	}
	// Applying the same again changes nothing.
	r = kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--type", "apply", "-p", `{"data":{"b":"2"}}`).must(t)
	ocStdout(t, r, "configmap/settings patched (no change)\n")
	// Another manager setting the same field conflicts.
	kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--type", "apply", "--field-manager", "other", "-p", `{"data":{"b":"3"}}`, "--exit-codes").
		ocExpect(t, 4, "conflict")

	// Server dry run: reported, not persisted.
	r = kdyn(t, env, "-n", ns, "patch", "cm", "settings", "-p", `{"data":{"a":"changed"}}`, "--dry-run=server").must(t)
	ocStdout(t, r, "configmap/settings patched\n") // kubectl's patch adds no dry-run suffix
	r = kdyn(t, env, "-n", ns, "patch", "cm", "settings", "-p", `{"data":{"a":"1"}}`, "--dry-run=server").must(t)
	ocStdout(t, r, "configmap/settings patched (no change)\n")
	if data, _, _ := unstructured.NestedStringMap(ocGet(t, c, ocConfigMapGVR, ns, "settings").Object, "data"); data["a"] != "1" {
		t.Fatalf("a dry run changed the object: %v", data)
	}

	// Errors.
	kdyn(t, env, "-n", ns, "patch", "cm", "missing", "-p", `{}`, "--exit-codes").
		ocExpect(t, 3, `Error from server (NotFound): configmaps "missing" not found`)
	kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--exit-codes").
		ocExpect(t, 2, "error: must specify --patch or --patch-file containing the contents of the patch")
	kdyn(t, env, "-n", ns, "patch", "cm", "-p", `{}`).
		ocExpect(t, 1, "resource(s) were provided, but no name was specified")
	kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--type", "apply", "-p", `{}`, "--dry-run=client").
		ocExpect(t, 1, "a server-side apply patch (--type apply) cannot be computed locally: use --dry-run=server")
	kdyn(t, env, "-n", ns, "patch", "cm", "settings", "--type", "xml", "-p", `{}`).
		ocExpect(t, 1, `--type must be one of [apply json merge strategic], not "xml"`)
}

func TestPatchSeveralObjects(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	for i := range 2 {
		ocConfigMap(t, c, ns, fmt.Sprintf("cm%d", i), nil, nil)
	}
	// One missing object does not stop the others; the command fails.
	r := kdyn(t, env, "-n", ns, "patch", "cm", "cm0", "nope", "cm1", "-p", `{"data":{"x":"y"}}`).ocExpect(t, 1, `configmaps "nope" not found`)
	ocStdout(t, r, "configmap/cm0 patched\nconfigmap/cm1 patched\n")
}
