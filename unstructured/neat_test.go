package unstructured

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func liveDeployment() *apiunstructured.Unstructured {
	return &apiunstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":              "web",
			"namespace":         "prod",
			"uid":               "0b5c7e1e-1111-2222-3333-444455556666",
			"resourceVersion":   "4711",
			"generation":        int64(3),
			"creationTimestamp": "2026-01-02T03:04:05Z",
			"selfLink":          "/apis/apps/v1/namespaces/prod/deployments/web",
			"managedFields": []any{
				map[string]any{"manager": "kubectl", "operation": "Apply"},
			},
			"annotations": map[string]any{
				LastAppliedAnnotation: `{"apiVersion":"apps/v1"}`,
			},
			"labels": map[string]any{"app": "web"},
		},
		"spec":   map[string]any{"replicas": int64(2)},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}

func TestNeat(t *testing.T) {
	tests := []struct {
		name string
		in   *apiunstructured.Unstructured
		opts NeatOptions
		want *apiunstructured.Unstructured
	}{
		{
			name: "live object",
			in:   liveDeployment(),
			want: &apiunstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1",
				"kind":       "Deployment",
				"metadata": map[string]any{
					"name":      "web",
					"namespace": "prod",
					"labels":    map[string]any{"app": "web"},
				},
				"spec": map[string]any{"replicas": int64(2)},
			}},
		},
		{
			name: "keep status",
			in:   liveDeployment(),
			opts: NeatOptions{KeepStatus: true},
			want: &apiunstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1",
				"kind":       "Deployment",
				"metadata": map[string]any{
					"name":      "web",
					"namespace": "prod",
					"labels":    map[string]any{"app": "web"},
				},
				"spec":   map[string]any{"replicas": int64(2)},
				"status": map[string]any{"readyReplicas": int64(2)},
			}},
		},
		{
			name: "other annotations kept, empty labels dropped",
			in: &apiunstructured.Unstructured{Object: map[string]any{
				"kind": "ConfigMap",
				"metadata": map[string]any{
					"annotations": map[string]any{LastAppliedAnnotation: "{}", "note": "keep"},
					"labels":      map[string]any{},
				},
			}},
			want: &apiunstructured.Unstructured{Object: map[string]any{
				"kind":     "ConfigMap",
				"metadata": map[string]any{"annotations": map[string]any{"note": "keep"}},
			}},
		},
		{
			name: "null maps dropped",
			in: &apiunstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"annotations": nil, "labels": nil, "name": "x"},
			}},
			want: &apiunstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "x"},
			}},
		},
		{
			name: "metadata of the wrong type is left alone",
			in:   &apiunstructured.Unstructured{Object: map[string]any{"metadata": "odd", "status": "x"}},
			want: &apiunstructured.Unstructured{Object: map[string]any{"metadata": "odd"}},
		},
		{
			name: "non-JSON values do not panic",
			in: &apiunstructured.Unstructured{Object: map[string]any{
				"spec": map[string]any{"n": 3, "s": []string{"a"}, "m": map[string]string{"k": "v"}},
			}},
			want: &apiunstructured.Unstructured{Object: map[string]any{
				"spec": map[string]any{"n": 3, "s": []string{"a"}, "m": map[string]string{"k": "v"}},
			}},
		},
		{name: "empty", in: &apiunstructured.Unstructured{}, want: &apiunstructured.Unstructured{}},
		{name: "nil", in: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *apiunstructured.Unstructured
			if tt.in != nil {
				before = &apiunstructured.Unstructured{Object: copyMap(tt.in.Object)}
			}
			got := Neat(tt.in, tt.opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.in); diff != "" {
				t.Errorf("input changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestNeatCopyIsDeep(t *testing.T) {
	in := liveDeployment()
	out := Neat(in, NeatOptions{})
	out.Object["spec"].(map[string]any)["replicas"] = int64(9)
	out.Object["metadata"].(map[string]any)["labels"].(map[string]any)["app"] = "changed"
	if diff := cmp.Diff(liveDeployment(), in); diff != "" {
		t.Errorf("changing the copy changed the input (-want +got):\n%s", diff)
	}
}

func TestStripManagedFields(t *testing.T) {
	in := liveDeployment()
	out := StripManagedFields(in)
	if _, found, _ := Get(out.Object, "metadata.managedFields"); found {
		t.Error("copy still has managedFields")
	}
	if _, found, _ := Get(in.Object, "metadata.managedFields"); !found {
		t.Error("StripManagedFields changed its input")
	}
	want := liveDeployment()
	delete(want.Object["metadata"].(map[string]any), "managedFields")
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if StripManagedFields(nil) != nil {
		t.Error("StripManagedFields(nil) != nil")
	}

	StripManagedFieldsInPlace(in)
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("in place (-want +got):\n%s", diff)
	}
	StripManagedFieldsInPlace(nil)
	StripManagedFieldsInPlace(&apiunstructured.Unstructured{})
}

func TestStripManagedFieldsTransform(t *testing.T) {
	withMF := func() *apiunstructured.Unstructured { return liveDeployment() }
	hasMF := func(u *apiunstructured.Unstructured) bool {
		_, found, _ := Get(u.Object, "metadata.managedFields")
		return found
	}

	u := withMF()
	got, err := StripManagedFieldsTransform(u)
	if err != nil || got != any(u) || hasMF(u) {
		t.Errorf("Unstructured: got %v, %v; managedFields left: %v", got, err, hasMF(u))
	}

	list := &apiunstructured.UnstructuredList{Items: []apiunstructured.Unstructured{*withMF(), *withMF()}}
	if _, err := StripManagedFieldsTransform(list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if hasMF(&list.Items[i]) {
			t.Errorf("list item %d still has managedFields", i)
		}
	}

	pom := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name:          "x",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}}
	if _, err := StripManagedFieldsTransform(pom); err != nil {
		t.Fatal(err)
	}
	if pom.ManagedFields != nil {
		t.Errorf("PartialObjectMetadata still has managedFields: %v", pom.ManagedFields)
	}

	// Things the transform must pass through without panicking.
	type tombstone struct{ Key string }
	for _, v := range []any{
		nil,
		(*apiunstructured.Unstructured)(nil),
		(*apiunstructured.UnstructuredList)(nil),
		(*metav1.PartialObjectMetadata)(nil),
		tombstone{Key: "ns/name"},
		"string",
	} {
		got, err := StripManagedFieldsTransform(v)
		if err != nil || got != v {
			t.Errorf("StripManagedFieldsTransform(%#v) = %v, %v", v, got, err)
		}
	}
}
