package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// discoveryTestClient returns an admin dynamic client for setting up
// fixtures.
func discoveryTestClient(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createDiscoveryTestCRD creates a namespaced CRD group/v1 kind with the
// given openAPIV3Schema (nil: x-kubernetes-preserve-unknown-fields),
// waits until it is Established and deletes it when the test ends.
func createDiscoveryTestCRD(t *testing.T, env *testenv.Env, group, kind string, shortNames []string, schemaProps map[string]any) string {
	t.Helper()
	ctx := t.Context()
	c := discoveryTestClient(t, env)
	plural := strings.ToLower(kind) + "s"
	if schemaProps == nil {
		schemaProps = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	}
	short := make([]any, len(shortNames))
	for i, s := range shortNames {
		short[i] = s
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "shortNames": short, "categories": []any{"kdyntest"}},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": schemaProps},
			}},
		},
	}}
	if _, err := c.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Resource(crdGVR).Delete(ctx, plural+"."+group, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.Resource(crdGVR).Get(ctx, plural+"."+group, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return plural
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s.%s not established: %v", plural, group, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tableRows returns the whitespace-separated cells of each output line.
func discTableRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func discHasRow(rows [][]string, cells ...string) bool {
	for _, r := range rows {
		if strings.Join(r, " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

func TestAPIResourcesOutputs(t *testing.T) {
	env := testenv.Shared(t)

	rows := discTableRows(kdyn(t, env, "api-resources").must(t).stdout)
	if got := strings.Join(rows[0], " "); got != "NAME SHORTNAMES APIVERSION NAMESPACED KIND" {
		t.Fatalf("header %q", got)
	}
	for _, want := range [][]string{
		{"configmaps", "cm", "v1", "true", "ConfigMap"},
		{"namespaces", "ns", "v1", "false", "Namespace"},
		{"deployments", "deploy", "apps/v1", "true", "Deployment"},
		{"horizontalpodautoscalers", "hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"},
		{"customresourcedefinitions", "crd,crds", "apiextensions.k8s.io/v1", "false", "CustomResourceDefinition"},
	} {
		if !discHasRow(rows, want...) {
			t.Errorf("no row %v", want)
		}
	}
	// kubectl's order: the core group first, then groups by name, names
	// sorted within a group.
	var order []string
	for _, r := range rows[1:] {
		order = append(order, r[0])
	}
	idx := func(name string) int {
		for i, n := range order {
			if n == name {
				return i
			}
		}
		t.Fatalf("%s not listed", name)
		return -1
	}
	if !(idx("configmaps") < idx("pods") && idx("pods") < idx("mutatingwebhookconfigurations") && idx("controllerrevisions") < idx("deployments") && idx("deployments") < idx("cronjobs")) {
		t.Errorf("rows are not in kubectl's order:\n%v", order)
	}

	wide := kdyn(t, env, "api-resources", "-o", "wide").must(t).stdout
	wrows := discTableRows(wide)
	if got := strings.Join(wrows[0], " "); got != "NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES" {
		t.Fatalf("wide header %q", got)
	}
	if !discHasRow(wrows, "pods", "po", "v1", "true", "Pod", "create,delete,deletecollection,get,list,patch,update,watch", "all") {
		t.Errorf("wide: no pods row with verbs and categories:\n%s", wide)
	}

	names := kdyn(t, env, "api-resources", "-o", "name").must(t).stdout
	for _, want := range []string{"pods\n", "deployments.apps\n", "customresourcedefinitions.apiextensions.k8s.io\n"} {
		if !strings.Contains(names, want) {
			t.Errorf("-o name lacks %q", want)
		}
	}
	if strings.Contains(names, "NAME") {
		t.Errorf("-o name printed a header")
	}

	// -o json: one APIResourceList per group-version.
	dec := json.NewDecoder(strings.NewReader(kdyn(t, env, "api-resources", "-o", "json").must(t).stdout))
	gvs := map[string][]string{}
	for {
		var l metav1.APIResourceList
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("-o json: %v", err)
		}
		if l.Kind != "APIResourceList" || l.APIVersion != "v1" || l.GroupVersion == "" {
			t.Fatalf("-o json document %+v", l.TypeMeta)
		}
		for _, r := range l.APIResources {
			gvs[l.GroupVersion] = append(gvs[l.GroupVersion], r.Name)
		}
	}
	if !discContains(gvs["apps/v1"], "deployments") || !discContains(gvs["v1"], "pods") || discContains(gvs["v1"], "pods/status") {
		t.Errorf("-o json: %v", gvs)
	}

	clusterScoped := discTableRows(kdyn(t, env, "api-resources", "--namespaced=false", "--no-headers").must(t).stdout)
	for _, r := range clusterScoped {
		if r[len(r)-2] != "false" {
			t.Errorf("--namespaced=false listed %v", r)
		}
	}
	if !discHasRow(clusterScoped, "namespaces", "ns", "v1", "false", "Namespace") {
		t.Errorf("--namespaced=false lacks namespaces")
	}

	for _, r := range discTableRows(kdyn(t, env, "api-resources", "--api-group", "apps", "--no-headers").must(t).stdout) {
		if r[len(r)-3] != "apps/v1" {
			t.Errorf("--api-group apps listed %v", r)
		}
	}
	core := kdyn(t, env, "api-resources", "--api-group=", "-o", "name").must(t).stdout
	if strings.Contains(core, ".") || !strings.Contains(core, "pods\n") {
		t.Errorf("--api-group= (core):\n%s", core)
	}

	lw := kdyn(t, env, "api-resources", "--verbs", "list,watch", "-o", "name").must(t).stdout
	if !strings.Contains(lw, "configmaps\n") || strings.Contains(lw, "bindings\n") || strings.Contains(lw, "tokenreviews") {
		t.Errorf("--verbs list,watch:\n%s", lw)
	}
	all := kdyn(t, env, "api-resources", "--categories", "all", "-o", "name").must(t).stdout
	if !strings.Contains(all, "deployments.apps\n") || strings.Contains(all, "configmaps") {
		t.Errorf("--categories all:\n%s", all)
	}
	byKind := discTableRows(kdyn(t, env, "api-resources", "--sort-by", "kind", "--no-headers").must(t).stdout)
	for i := 1; i < len(byKind); i++ {
		if byKind[i-1][len(byKind[i-1])-1] > byKind[i][len(byKind[i])-1] {
			t.Fatalf("--sort-by kind: %v before %v", byKind[i-1], byKind[i])
		}
	}

	if r := kdyn(t, env, "api-resources", "-o", "jsonpath={}"); r.code == 0 || !strings.Contains(r.stderr, "--output jsonpath={} is not available") {
		t.Errorf("bad -o: %d %s", r.code, r.stderr)
	}
}

func discContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestAPIResourcesSeesNewCRD: api-resources asks the server again, so a
// CRD created after the cache was filled is listed without
// --refresh-discovery.
func TestAPIResourcesSeesNewCRD(t *testing.T) {
	env := testenv.Shared(t)
	cache := filepath.Join(t.TempDir(), "cache")
	args := func(a ...string) []string {
		return append([]string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--cache-dir", cache}, a...)
	}
	run(t, "", nil, args("api-resources", "-o", "name")...).must(t) // warm the cache
	group := "apires" + rand.String(6) + ".kdyn.test"
	createDiscoveryTestCRD(t, env, group, "Gizmo", []string{"gzm"}, nil)
	want := []string{"gizmos", "gzm", group + "/v1", "true", "Gizmo"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := run(t, "", nil, args("api-resources", "--api-group", group)...).must(t)
		if discHasRow(discTableRows(r.stdout), want...) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new CRD is not listed:\n%s", r.stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// --cached keeps answering from the cache it has; with the cache just
	// refreshed it lists the CRD too.
	r := run(t, "", nil, args("api-resources", "--cached", "--categories", "kdyntest", "-o", "name")...).must(t)
	if strings.TrimSpace(r.stdout) != "gizmos."+group {
		t.Fatalf("--cached --categories kdyntest: %q", r.stdout)
	}
}

// discoveryRequests counts the discovery requests (GET /api, /apis and
// below) in a -v 6 log.
func discoveryRequests(log string) (n int, lines []string) {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `"Response"`) {
			continue
		}
		if strings.Contains(l, `/api"`) || strings.Contains(l, `/apis"`) || strings.Contains(l, "/api/") || strings.Contains(l, "/apis/") {
			n++
			lines = append(lines, l)
		}
	}
	return n, lines
}

// TestAPIResourcesCached proves the request counts: a warm --cached run
// sends nothing; a run without --cached revalidates /api and /apis. It has
// a control plane of its own: on the shared one, discovery still changes
// for a moment after other tests delete their CRDs, and a changed document
// is rightly answered 200, not 304.
func TestAPIResourcesCached(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	cache := filepath.Join(t.TempDir(), "cache")
	args := func(a ...string) []string {
		return append([]string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--cache-dir", cache, "-v", "6"}, a...)
	}
	first := run(t, "", nil, args("api-resources")...).must(t)
	if n, lines := discoveryRequests(first.stderr); n != 2 {
		t.Fatalf("cold run: %d discovery requests, want 2 (aggregated):\n%s", n, strings.Join(lines, "\n"))
	}
	second := run(t, "", nil, args("api-resources", "--cached")...).must(t)
	if n, lines := discoveryRequests(second.stderr); n != 0 {
		t.Fatalf("warm --cached run: %d discovery requests, want 0:\n%s", n, strings.Join(lines, "\n"))
	}
	if second.stdout != first.stdout {
		t.Fatalf("--cached printed something else:\n%s\nvs\n%s", second.stdout, first.stdout)
	}
	third := run(t, "", nil, args("api-resources")...).must(t)
	n, lines := discoveryRequests(third.stderr)
	if n != 2 {
		t.Fatalf("warm run without --cached: %d discovery requests, want 2:\n%s", n, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.Contains(l, `status="304 Not Modified"`) {
			t.Errorf("revalidation was not answered 304: %s", l)
		}
	}
	t.Logf("discovery requests: cold 2, warm --cached 0, warm revalidation %d (all 304)", n)
}

func TestAPIVersions(t *testing.T) {
	env := testenv.Shared(t)
	out := kdyn(t, env, "api-versions").must(t).stdout
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] >= lines[i] {
			t.Fatalf("not sorted: %q before %q", lines[i-1], lines[i])
		}
	}
	for _, want := range []string{"v1", "apps/v1", "apiextensions.k8s.io/v1", "autoscaling/v2", "autoscaling/v1"} {
		if !discContains(lines, want) {
			t.Errorf("api-versions lacks %s:\n%s", want, out)
		}
	}
	if r := kdyn(t, env, "api-versions", "extra"); r.code == 0 {
		t.Errorf("api-versions took an argument")
	}
}
