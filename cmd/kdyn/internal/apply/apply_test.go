package apply

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

func TestWithLastApplied(t *testing.T) {
	in := clitest.Obj("v1", "ConfigMap", "x")
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

	// Without other annotations the configuration has an empty map, and a
	// final newline: kubectl's bytes.
	bare, err := withLastApplied(clitest.Obj("v1", "ConfigMap", "y"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bare.GetAnnotations()[kunstructured.LastAppliedAnnotation]; got != `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"y"}}`+"\n" {
		t.Errorf("last-applied = %q", got)
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
