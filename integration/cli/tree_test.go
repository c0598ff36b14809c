package cli_test

import (
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var (
	treeNamespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	treeConfigMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	treeSecrets      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	treePods         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	treeRoles        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	treeRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// treeFixture creates a namespace holding
//
//	ConfigMap/root
//	├── ConfigMap/cm-a
//	│   └── ConfigMap/cm-aa
//	├── ConfigMap/cm-b
//	│   └── Pod/pod-b
//	└── Secret/sec-s
//
// and returns the namespace.
func treeFixture(t *testing.T, c *dynamic.DynamicClient) string {
	t.Helper()
	ctx := t.Context()
	ns := "tree-" + rand.String(6)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := c.Resource(treeNamespaces).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create := func(gvr schema.GroupVersionResource, kind, name string, owner *unstructured.Unstructured, extra map[string]any) *unstructured.Unstructured {
		t.Helper()
		md := map[string]any{"name": name}
		if owner != nil {
			md["ownerReferences"] = []any{map[string]any{
				"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(), "uid": string(owner.GetUID()),
			}}
		}
		obj := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md}
		for k, v := range extra {
			obj[k] = v
		}
		got, err := c.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s %s: %v", kind, name, err)
		}
		return got
	}
	root := create(treeConfigMaps, "ConfigMap", "root", nil, nil)
	a := create(treeConfigMaps, "ConfigMap", "cm-a", root, nil)
	b := create(treeConfigMaps, "ConfigMap", "cm-b", root, nil)
	create(treeSecrets, "Secret", "sec-s", root, nil)
	create(treeConfigMaps, "ConfigMap", "cm-aa", a, nil)
	create(treePods, "Pod", "pod-b", b, map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "image": "registry.invalid/none"}},
	}})
	return ns
}

var treeLineRE = regexp.MustCompile(`^(.*?\S+/\S+)(?:\s{3,}(\S+))?(?:\s{3,}(.*?))?\s*$`)

// treeLines returns each row's tree-and-name cell and its status.
func treeLines(t *testing.T, out string) (names, statuses []string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NAME ") {
		t.Fatalf("no header:\n%s", out)
	}
	for _, l := range lines[1:] {
		m := treeLineRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected tree line %q", l)
		}
		names = append(names, m[1])
		statuses = append(statuses, m[3])
	}
	return names, statuses
}

func TestTreeDependents(t *testing.T) {
	env := testenv.Shared(t)
	ns := treeFixture(t, discoveryTestClient(t, env))

	r := kdyn(t, env, "-n", ns, "tree", "configmap", "root").must(t)
	names, statuses := treeLines(t, r.stdout)
	want := []string{
		"ConfigMap/root",
		"├── ConfigMap/cm-a",
		"│   └── ConfigMap/cm-aa",
		"├── ConfigMap/cm-b",
		"│   └── Pod/pod-b",
		"└── Secret/sec-s",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree:\n%s\nwant names:\n%s", r.stdout, strings.Join(want, "\n"))
	}
	if statuses[4] != "Pending" {
		t.Errorf("pod status %q, want Pending (phase, no Ready condition without a scheduler):\n%s", statuses[4], r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}

	// TYPE/NAME, a subtree, and the request count.
	r = kdyn(t, env, "-n", ns, "tree", "cm/cm-a", "-v", "6").must(t)
	names, _ = treeLines(t, r.stdout)
	if strings.Join(names, "\n") != "ConfigMap/cm-a\n└── ConfigMap/cm-aa" {
		t.Fatalf("tree cm/cm-a:\n%s", r.stdout)
	}
	lists, gets := 0, 0
	for _, l := range strings.Split(r.stderr, "\n") {
		switch {
		case !strings.Contains(l, `"Response"`):
		case strings.Contains(l, "limit=500"):
			lists++
		default:
			gets++
		}
	}
	t.Logf("tree cm/cm-a: %d metadata lists (one per listable type), %d other requests", lists, gets)
	if lists < 20 || gets > 3 {
		t.Errorf("tree cm/cm-a: %d lists, %d other requests", lists, gets)
	}
}

func TestTreeUp(t *testing.T) {
	env := testenv.Shared(t)
	ns := treeFixture(t, discoveryTestClient(t, env))
	r := kdyn(t, env, "-n", ns, "tree", "pod/pod-b", "--up").must(t)
	names, statuses := treeLines(t, r.stdout)
	if strings.Join(names, "\n") != "Pod/pod-b\n└── ConfigMap/cm-b\n    └── ConfigMap/root" {
		t.Fatalf("tree --up:\n%s", r.stdout)
	}
	if statuses[0] != "Pending" {
		t.Errorf("status %q", statuses[0])
	}
	r = kdyn(t, env, "-n", ns, "tree", "configmap", "root", "--up").must(t)
	if names, _ := treeLines(t, r.stdout); strings.Join(names, "\n") != "ConfigMap/root" {
		t.Fatalf("tree --up of an object without owners:\n%s", r.stdout)
	}

	// An owner that is gone.
	c := discoveryTestClient(t, env)
	if err := c.Resource(treeConfigMaps).Namespace(ns).Delete(t.Context(), "root", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = kdyn(t, env, "-n", ns, "tree", "cm", "cm-a", "--up").must(t)
	names, statuses = treeLines(t, r.stdout)
	if strings.Join(names, "\n") != "ConfigMap/cm-a\n└── ConfigMap/root" || statuses[1] != "NotFound" {
		t.Fatalf("tree --up with a deleted owner:\n%s", r.stdout)
	}
}

// TestTreeToleratesForbidden: a user who may only read ConfigMaps in the
// namespace gets the ConfigMap part of the tree, and the types it could not
// search named on stderr.
func TestTreeToleratesForbidden(t *testing.T) {
	env := testenv.Shared(t)
	c := discoveryTestClient(t, env)
	ns := treeFixture(t, c)
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "read-configmaps"},
		"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list"}}},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "read-configmaps"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-configmaps"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": testenv.NobodyUserName}},
	}}
	for gvr, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{treeRoles: role, treeRoleBindings: binding} {
		if _, err := c.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var r result
	for i := 0; i < 50; i++ { // RBAC takes effect within moments
		if r = kdynAs(t, env, testenv.Nobody, "", "-n", ns, "tree", "cm", "root"); r.code == 0 {
			break
		}
	}
	r.must(t)
	names, _ := treeLines(t, r.stdout)
	want := "ConfigMap/root\n├── ConfigMap/cm-a\n│   └── ConfigMap/cm-aa\n└── ConfigMap/cm-b"
	if strings.Join(names, "\n") != want {
		t.Fatalf("tree as nobody:\n%s\nwant:\n%s", r.stdout, want)
	}
	if !strings.Contains(r.stderr, "\nNot searched (") || !strings.Contains(r.stderr, "  secrets: Error from server (Forbidden)") || !strings.Contains(r.stderr, "  pods: Error from server (Forbidden)") {
		t.Fatalf("stderr does not name the forbidden types:\n%s", r.stderr)
	}
}

func TestTreeErrors(t *testing.T) {
	env := testenv.Shared(t)
	if r := kdyn(t, env, "tree", "configmaps"); r.code != 1 || !strings.Contains(r.stderr, "tree takes exactly one object") {
		t.Errorf("no name: %d %s", r.code, r.stderr)
	}
	if r := kdyn(t, env, "tree", "configmap", "does-not-exist"); r.code != 1 || !strings.Contains(r.stderr, `Error from server (NotFound): configmaps "does-not-exist" not found`) {
		t.Errorf("missing object: %d %s", r.code, r.stderr)
	}
}
