package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

// kzFixture is the kustomize fixture overlay of the kustomize command's
// tests (a base and an overlay with generators, patches and a CRD).
func kzFixture(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "cmd", "kdyn", "internal", "kustomize", "testdata", "app", "overlays", "prod")
}

// kzOverlay writes a kustomization that puts the fixture overlay in ns,
// with extra lines, and returns its directory.
func kzOverlay(t *testing.T, ns, extra string) string {
	t.Helper()
	dir := t.TempDir()
	// kustomize takes no absolute paths in resources.
	fixture, err := filepath.Rel(dir, kzFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n- %s\n%s", ns, fixture, extra)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestKustomizeApplyDiffDelete: apply -k creates what kdyn kustomize
// prints (the CRD first, its object after it is Established, generated
// names with their hash suffixes), diff -k then shows nothing, a change in
// the kustomization shows as a diff, and delete -k removes it all.
func TestKustomizeApplyDiffDelete(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	dir := kzOverlay(t, ns, "")

	built := kdyn(t, env, "kustomize", dir).must(t).stdout
	cmName := ""
	for _, line := range strings.Split(built, "\n") {
		if n, ok := strings.CutPrefix(line, "  name: prod-app-config-"); ok {
			cmName = "prod-app-config-" + n
		}
	}
	if cmName == "" {
		t.Fatalf("no generated ConfigMap in:\n%s", built)
	}

	r := kdyn(t, env, "apply", "--server-side", "-k", dir).must(t)
	for _, want := range []string{
		"customresourcedefinition.apiextensions.k8s.io/kwidgets.kustomize.kdyn.test serverside-applied",
		"configmap/" + cmName + " serverside-applied",
		"deployment.apps/prod-web serverside-applied",
		"kwidget.kustomize.kdyn.test/prod-w1 serverside-applied",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("apply -k output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Index(r.stdout, "customresourcedefinition") > strings.Index(r.stdout, "kwidget.kustomize") {
		t.Errorf("the CRD was not applied before its object:\n%s", r.stdout)
	}
	c := mfClient(t, env)
	deploy, err := c.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns).Get(t.Context(), "prod-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := deploy.Object["spec"].(map[string]any)["replicas"]; got != int64(3) {
		t.Errorf("replicas %v, want the overlay's 3", got)
	}
	if !strings.Contains(fmt.Sprint(deploy.Object["spec"]), cmName) {
		t.Errorf("the Deployment does not refer to %s: %v", cmName, deploy.Object["spec"])
	}
	if cm := mfGet(t, env, ns, cmName); cm == nil || cm.Object["data"].(map[string]any)["LOG_LEVEL"] != "warn" {
		t.Errorf("generated ConfigMap %s: %v", cmName, cm)
	}
	widgets := schema.GroupVersionResource{Group: "kustomize.kdyn.test", Version: "v1", Resource: "kwidgets"}
	w, err := c.Resource(widgets).Namespace(ns).Get(t.Context(), "prod-w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size := w.Object["spec"].(map[string]any)["size"]; size != int64(5) {
		t.Errorf("widget size %v, want the JSON patch's 5", size)
	}

	if r := kdyn(t, env, "diff", "-k", dir).must(t); r.stdout != "" {
		t.Fatalf("diff -k after apply -k printed:\n%s", r.stdout)
	}
	changed := kzOverlay(t, ns, "patches:\n- target: {kind: Deployment, name: prod-web}\n  patch: '[{\"op\": \"replace\", \"path\": \"/spec/replicas\", \"value\": 4}]'\n")
	r = kdyn(t, env, "diff", "-k", changed).mfExpect(t, 1)
	if !strings.Contains(r.stdout, "-  replicas: 3\n+  replicas: 4\n") || !strings.Contains(r.stdout, "apps.v1.Deployment."+ns+".prod-web") {
		t.Fatalf("diff -k of a change:\n%s", r.stdout)
	}

	r = kdyn(t, env, "delete", "-k", dir).must(t)
	for _, want := range []string{`configmap "` + cmName + `" deleted`, `kwidget.kustomize.kdyn.test "prod-w1" deleted`, `customresourcedefinition.apiextensions.k8s.io "kwidgets.kustomize.kdyn.test" deleted`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("delete -k output lacks %q:\n%s", want, r.stdout)
		}
	}
	if cm := mfGet(t, env, ns, cmName); cm != nil {
		t.Errorf("%s survived delete -k", cmName)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := c.Resource(crds).Get(t.Context(), "kwidgets.kustomize.kdyn.test", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the CRD survived delete -k: %v", err)
	}
}

// A kustomization that does not build fails before anything is sent,
// naming the directory.
func TestKustomizeApplyBadKustomization(t *testing.T) {
	env := testenv.Shared(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- missing.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "-k", dir).mfExpect(t, 1, "kustomize "+dir, "missing.yaml")
}
