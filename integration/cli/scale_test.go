package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// scDeployment creates a Deployment with replicas and labels.
func scDeployment(t *testing.T, c *dynamic.DynamicClient, ns, name string, replicas int64, labels map[string]string) {
	t.Helper()
	md := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		l := map[string]any{}
		for k, v := range labels {
			l[k] = v
		}
		md["labels"] = l
	}
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
			},
		},
	}}
	if _, err := c.Resource(ocDeployGVR).Namespace(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// scReplicas reads spec.replicas.
func scReplicas(t *testing.T, c *dynamic.DynamicClient, gvr schema.GroupVersionResource, ns, name string) int64 {
	t.Helper()
	n, _, err := unstructured.NestedInt64(ocGet(t, c, gvr, ns, name).Object, "spec", "replicas")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestScaleDeployment(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	scDeployment(t, c, ns, "web", 1, nil)
	replicas := func() int64 { return scReplicas(t, c, ocDeployGVR, ns, "web") }

	// One merge patch of the scale subresource.
	r := kdyn(t, env, "-n", ns, "scale", "deploy/web", "--replicas=3", "-v", "8").must(t)
	ocStdout(t, r, "deployment.apps/web scaled\n")
	if !strings.Contains(r.stderr, "/deployments/web/scale") || !strings.Contains(r.stderr, `{\"spec\":{\"replicas\":3}}`) {
		t.Errorf("not a merge patch of the scale subresource:\n%s", r.stderr)
	}
	if n := replicas(); n != 3 {
		t.Fatalf("replicas %d, want 3", n)
	}

	// --current-replicas: a mismatch is refused (a conflict for
	// --exit-codes), a match scales.
	kdyn(t, env, "-n", ns, "scale", "deploy", "web", "--replicas=5", "--current-replicas=2").ocExpect(t, 1, "error: Expected replicas to be 2, was 3")
	kdyn(t, env, "-n", ns, "--exit-codes", "scale", "deploy", "web", "--replicas=5", "--current-replicas=2").ocExpect(t, 4, "Expected replicas to be 2")
	if n := replicas(); n != 3 {
		t.Fatalf("a failed precondition changed replicas to %d", n)
	}
	r = kdyn(t, env, "-n", ns, "scale", "deploy", "web", "--replicas=5", "--current-replicas=3").must(t)
	ocStdout(t, r, "deployment.apps/web scaled\n")
	if n := replicas(); n != 5 {
		t.Fatalf("replicas %d, want 5", n)
	}

	// --resource-version: the scale's, which is the object's.
	rv := ocGet(t, c, ocDeployGVR, ns, "web").GetResourceVersion()
	kdyn(t, env, "-n", ns, "scale", "deploy/web", "--replicas=6", "--resource-version=1").ocExpect(t, 1, "error: Expected resource version to be 1, was "+rv)
	kdyn(t, env, "-n", ns, "scale", "deploy/web", "--replicas=6", "--resource-version="+rv).must(t)
	if n := replicas(); n != 6 {
		t.Fatalf("replicas %d, want 6", n)
	}

	// Dry runs change nothing; the client one prints the object with the
	// new count.
	r = kdyn(t, env, "-n", ns, "scale", "deploy/web", "--replicas=9", "--dry-run=server").must(t)
	ocStdout(t, r, "deployment.apps/web scaled (server dry run)\n")
	r = kdyn(t, env, "-n", ns, "scale", "deploy/web", "--replicas=9", "--dry-run=client", "-o", "yaml").must(t)
	if !strings.Contains(r.stdout, "  replicas: 9\n") || strings.Contains(r.stdout, "managedFields") {
		t.Errorf("client dry run -o yaml:\n%s", r.stdout)
	}
	if n := replicas(); n != 6 {
		t.Fatalf("a dry run changed replicas to %d", n)
	}

	// The objects of a manifest (-f -).
	r = mfStdin(t, env, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: "+ns+"\n", "scale", "-f", "-", "--replicas=7").must(t)
	ocStdout(t, r, "deployment.apps/web scaled\n")
	if n := replicas(); n != 7 {
		t.Fatalf("replicas %d, want 7", n)
	}
	// And of a kustomization (-k).
	dir := t.TempDir()
	manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: " + ns + "\n"
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- web.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = kdyn(t, env, "scale", "-k", dir, "--replicas=8").must(t)
	ocStdout(t, r, "deployment.apps/web scaled\n")
	if n := replicas(); n != 8 {
		t.Fatalf("replicas %d after scale -k, want 8", n)
	}

	// A missing object.
	kdyn(t, env, "-n", ns, "scale", "deploy/nope", "--replicas=1").ocExpect(t, 1, `Error from server (NotFound): deployments.apps "nope" not found`)
}

func TestScaleSelector(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	scDeployment(t, c, ns, "a", 1, map[string]string{"tier": "web"})
	scDeployment(t, c, ns, "b", 1, map[string]string{"tier": "web"})
	scDeployment(t, c, ns, "c", 1, map[string]string{"tier": "db"})
	r := kdyn(t, env, "-n", ns, "scale", "deploy", "-l", "tier=web", "--replicas=2").must(t)
	ocStdout(t, r, "deployment.apps/a scaled\ndeployment.apps/b scaled\n")
	for name, want := range map[string]int64{"a": 2, "b": 2, "c": 1} {
		if n := scReplicas(t, c, ocDeployGVR, ns, name); n != want {
			t.Errorf("%s: replicas %d, want %d", name, n, want)
		}
	}
	kdyn(t, env, "-n", ns, "scale", "deploy", "-l", "tier=none", "--replicas=2").ocExpect(t, 1, "error: no objects passed to scale")
	kdyn(t, env, "-n", ns, "scale", "deploy", "-l", "tier=web", "--replicas=2", "--resource-version=1").ocExpect(t, 1, "cannot use --resource-version with multiple resources")
	r = kdyn(t, env, "-n", ns, "scale", "deploy", "--all", "--replicas=0", "-o", "name").must(t)
	ocStdout(t, r, "deployment.apps/a\ndeployment.apps/b\ndeployment.apps/c\n")
}

// scCRD creates a namespaced CRD "scalers.<unique group>" whose version
// declares a scale subresource on .spec.replicas and .status.replicas, and
// one without (kind Plain), and returns their resources.
func scCRD(t *testing.T, c *dynamic.DynamicClient) (scalers, plains schema.GroupVersionResource) {
	t.Helper()
	group := "sc" + ocSuffix() + ".test.kdyn.io"
	create := func(plural, kind string, subresources map[string]any) schema.GroupVersionResource {
		name := plural + "." + group
		version := map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"spec":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				},
			}},
		}
		if subresources != nil {
			version["subresources"] = subresources
		}
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"group": group, "scope": "Namespaced",
				"names":    map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind},
				"versions": []any{version},
			},
		}}
		if _, err := c.Resource(ocCRDGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Resource(ocCRDGVR).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
		ocEventually(t, "CRD "+name+" served", func() bool {
			_, err := c.Resource(gvr).Namespace("default").List(t.Context(), metav1.ListOptions{Limit: 1})
			return err == nil
		})
		return gvr
	}
	scalers = create("scalers", "Scaler", map[string]any{
		"status": map[string]any{},
		"scale":  map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
	})
	plains = create("plains", "Plain", nil)
	return scalers, plains
}

func TestScaleCustomResource(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	scalers, plains := scCRD(t, c)
	for _, gvr := range []schema.GroupVersionResource{scalers, plains} {
		kind := map[string]string{"scalers": "Scaler", "plains": "Plain"}[gvr.Resource]
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.Group + "/v1", "kind": kind,
			"metadata": map[string]any{"name": "s1", "namespace": ns},
			"spec":     map[string]any{"replicas": int64(1)},
		}}
		if _, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	typ := "scalers." + scalers.Group

	r := kdyn(t, env, "-n", ns, "scale", typ+"/s1", "--replicas=4").must(t)
	ocStdout(t, r, "scaler."+scalers.Group+"/s1 scaled\n")
	if n := scReplicas(t, c, scalers, ns, "s1"); n != 4 {
		t.Fatalf("replicas %d, want 4", n)
	}
	kdyn(t, env, "-n", ns, "scale", typ, "s1", "--replicas=5", "--current-replicas=3").ocExpect(t, 1, "Expected replicas to be 3, was 4")
	kdyn(t, env, "-n", ns, "scale", typ, "s1", "--replicas=5", "--current-replicas=4").must(t)
	if n := scReplicas(t, c, scalers, ns, "s1"); n != 5 {
		t.Fatalf("replicas %d, want 5", n)
	}
	// -o yaml prints a custom object as read: kdyn, like kubectl, does not
	// guess where its replicas live.
	r = kdyn(t, env, "-n", ns, "scale", typ, "s1", "--replicas=2", "--dry-run=client", "-o", "yaml").must(t)
	if !strings.Contains(r.stdout, "  replicas: 5\n") {
		t.Errorf("client dry run of a custom resource:\n%s", r.stdout)
	}

	// Without a scale subresource, the server's 404.
	kdyn(t, env, "-n", ns, "scale", "plains."+plains.Group+"/s1", "--replicas=2").ocExpect(t, 1, "Error from server (NotFound)")
}
