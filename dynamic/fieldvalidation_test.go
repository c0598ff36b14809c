package dynamic

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// WithFieldValidation adds fieldValidation to every write, Apply included:
// its request is the undecorated Apply's plus that one parameter.
func TestWithFieldValidation(t *testing.T) {
	rec, c := newRecordingClient(t)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns"},
		"data":     map[string]any{"k": "v"},
	}}
	ri := c.Resource(cmGVR).Namespace("ns")
	if _, err := ri.Apply(t.Context(), "x", obj, metav1.ApplyOptions{FieldManager: "m", Force: true}); err != nil {
		t.Fatal(err)
	}
	plain := rec.lastRequest()

	strict := WithDryRun(WithFieldValidation(WithFieldManager(c, "m"), metav1.FieldValidationStrict)).Resource(cmGVR).Namespace("ns")
	if _, err := strict.Apply(t.Context(), "x", obj, metav1.ApplyOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(plain, "query: ", "query: dryRun=All&", 1)
	want = strings.Replace(want, "&force=true", "&fieldValidation=Strict&force=true", 1)
	if got := rec.lastRequest(); got != want {
		t.Errorf("apply request:\n%s\nwant:\n%s", got, want)
	}

	cases := []struct {
		name string
		call func(ri ResourceInterface) error
		want string
	}{
		{"create", func(ri ResourceInterface) error {
			_, err := ri.Create(t.Context(), obj, metav1.CreateOptions{})
			return err
		}, "fieldValidation=Warn"},
		{"update", func(ri ResourceInterface) error {
			_, err := ri.Update(t.Context(), obj, metav1.UpdateOptions{})
			return err
		}, "fieldValidation=Warn"},
		{"patch", func(ri ResourceInterface) error {
			_, err := ri.Patch(t.Context(), "x", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
			return err
		}, "fieldValidation=Warn"},
		{"explicit wins", func(ri ResourceInterface) error {
			_, err := ri.Patch(t.Context(), "x", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{FieldValidation: "Ignore"})
			return err
		}, "fieldValidation=Ignore"},
		{"apply status", func(ri ResourceInterface) error {
			_, err := ri.ApplyStatus(t.Context(), "x", obj, metav1.ApplyOptions{FieldManager: "m"})
			return err
		}, "PATCH /api/v1/namespaces/ns/configmaps/x/status\nquery: fieldManager=m&fieldValidation=Warn&force=false"},
	}
	warn := WithFieldValidation(c, metav1.FieldValidationWarn).Resource(cmGVR).Namespace("ns")
	for _, tc := range cases {
		if err := tc.call(warn); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := rec.lastRequest(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: request:\n%s\nwant it to contain %q", tc.name, got, tc.want)
		}
	}
	if WithFieldValidation(c, "") != Interface(c) {
		t.Error("an empty directive decorates the client")
	}
}
