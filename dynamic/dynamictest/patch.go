package dynamictest

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func (s *suite) testMergePatch(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("merge")
	created := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1", "b": "2"}))
	patch := []byte(`{"metadata":{"labels":{"patched":"yes"}},"data":{"b":null,"c":"3"}}`)
	out, err := s.configMaps().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge Patch: %v", err)
	}
	want := map[string]string{"a": "1", "c": "3"}
	wantData(t, "merge Patch result", out, want)
	if out.GetLabels()["patched"] != "yes" || out.GetLabels()[runLabel] != s.run {
		t.Errorf("labels %v, want patched=yes added beside the others", out.GetLabels())
	}
	if rv(t, out) <= rv(t, created) {
		t.Errorf("resourceVersion %s after Patch, want more than %s", out.GetResourceVersion(), created.GetResourceVersion())
	}
	wantData(t, "Get after merge Patch", s.get(t, ctx, name), want)
}

func (s *suite) testJSONPatch(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("jsonp")
	s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1", "b": "2"}))
	patch := []byte(`[
		{"op":"test","path":"/data/a","value":"1"},
		{"op":"replace","path":"/data/a","value":"9"},
		{"op":"remove","path":"/data/b"},
		{"op":"add","path":"/data/d","value":"4"},
		{"op":"add","path":"/metadata/labels/jsonpatched","value":"yes"}
	]`)
	out, err := s.configMaps().Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("JSON Patch: %v", err)
	}
	want := map[string]string{"a": "9", "d": "4"}
	wantData(t, "JSON Patch result", out, want)
	if out.GetLabels()["jsonpatched"] != "yes" {
		t.Errorf("labels %v, want jsonpatched=yes", out.GetLabels())
	}
	wantData(t, "Get after JSON Patch", s.get(t, ctx, name), want)
}

func (s *suite) testJSONPatchTestFails(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("jsontest")
	before := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1"}))
	patch := []byte(`[{"op":"test","path":"/data/a","value":"2"},{"op":"replace","path":"/data/a","value":"3"}]`)
	_, err := s.configMaps().Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{})
	wantStatus(t, "JSON Patch whose test fails", err, metav1.StatusReasonInvalid)
	after := s.get(t, ctx, name)
	wantData(t, "Get after the failed JSON Patch", after, map[string]string{"a": "1"})
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("resourceVersion %s after the failed patch, want %s", after.GetResourceVersion(), before.GetResourceVersion())
	}

	_, err = s.configMaps().Patch(ctx, name, types.JSONPatchType, []byte(`{"not":"a list"}`), metav1.PatchOptions{})
	wantStatus(t, "JSON Patch that is not a list of operations", err, metav1.StatusReasonBadRequest)
}

func (s *suite) testPatchStaleResourceVersion(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("patchrv")
	created := s.create(t, ctx, s.configMap(name, "", nil, map[string]string{"a": "1"}))
	if _, err := s.configMaps().Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"a":"2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("Patch: %v", err)
	}
	stale := []byte(`{"metadata":{"resourceVersion":"` + created.GetResourceVersion() + `"},"data":{"a":"3"}}`)
	_, err := s.configMaps().Patch(ctx, name, types.MergePatchType, stale, metav1.PatchOptions{})
	wantStatus(t, "Patch naming a stale resourceVersion", err, metav1.StatusReasonConflict)
	wantData(t, "Get after the refused Patch", s.get(t, ctx, name), map[string]string{"a": "2"})
}

func (s *suite) testApply(t *testing.T) {
	ctx := s.ctx(t)
	name := s.name("apply")
	obj := s.configMap(name, "", nil, map[string]string{"a": "1"})

	_, err := s.configMaps().Apply(ctx, name, obj, metav1.ApplyOptions{})
	wantStatus(t, "Apply without a field manager", err, metav1.StatusReasonInvalid)

	created, err := s.configMaps().Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("Apply creating: %v", err)
	}
	wantData(t, "Apply creating", created, map[string]string{"a": "1"})
	if created.GetUID() == "" || created.GetNamespace() != s.env.Namespace {
		t.Errorf("applied object uid %q namespace %q, want a uid and %q", created.GetUID(), created.GetNamespace(), s.env.Namespace)
	}

	obj2 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]any{runLabel: s.run}},
		"data":     map[string]any{"a": "2", "b": "3"},
	}}
	updated, err := s.configMaps().Apply(ctx, name, obj2, metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("Apply updating: %v", err)
	}
	wantData(t, "Apply updating", updated, map[string]string{"a": "2", "b": "3"})
	if updated.GetUID() != created.GetUID() || rv(t, updated) <= rv(t, created) {
		t.Errorf("Apply updating: uid %q rv %s, want uid %q and a newer rv than %s",
			updated.GetUID(), updated.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
	}
	wantData(t, "Get after Apply", s.get(t, ctx, name), map[string]string{"a": "2", "b": "3"})
}
