package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kunstructured "github.com/kdyn/kdyn/unstructured"
)

func TestWithLastApplied(t *testing.T) {
	in := obj("v1", "ConfigMap", "x")
	in.SetNamespace("prod")
	in.SetResourceVersion("3")
	in.SetAnnotations(map[string]string{kunstructured.LastAppliedAnnotation: "stale", "team": "a"})
	in.Object["data"] = map[string]any{"k": "v"}
	out, err := withLastApplied(in)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(out.GetAnnotations()[kunstructured.LastAppliedAnnotation]), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"},
		"metadata": map[string]any{"name": "x", "namespace": "prod", "annotations": map[string]any{"team": "a"}},
	}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("last-applied configuration (-want +got):\n%s", d)
	}
	if out.GetResourceVersion() != "" || out.GetAnnotations()["team"] != "a" {
		t.Errorf("object: %v", out.Object)
	}

	// Without other annotations the configuration has none either.
	bare, err := withLastApplied(obj("v1", "ConfigMap", "y"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bare.GetAnnotations()[kunstructured.LastAppliedAnnotation]; got != `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}` {
		t.Errorf("last-applied = %s", got)
	}
}

func TestConflictHint(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", nil)
	if conflictHint(conflict) == "" {
		t.Error("no hint for a conflict")
	}
	if conflictHint(apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "x")) != "" {
		t.Error("a hint for a not-found")
	}
}

// apply -l that matches no document fails as kubectl's does (no objects
// passed to apply), before any request for objects is sent.
func TestApplySelectorMatchingNothing(t *testing.T) {
	var writes atomic.Int32
	srv := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1)
		http.Error(w, "unexpected", http.StatusInternalServerError)
	})
	dir := t.TempDir()
	manifest := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: web\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runKdyn("--kubeconfig", writeKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "apply", "-f", manifest, "-l", "app=db")
	if r.code != exitGeneric || !strings.Contains(r.stderr, "no objects passed to apply") || !strings.Contains(r.stderr, "app=db") {
		t.Fatalf("exit %d, stderr %q; want 1 and 'no objects passed to apply' naming the selector", r.code, r.stderr)
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d requests for objects were sent", n)
	}
}
