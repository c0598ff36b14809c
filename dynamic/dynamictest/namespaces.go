package dynamictest

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testNamespaces covers a cluster-scoped resource. A real server without a
// controller manager never finishes deleting a namespace: Delete leaves it
// Terminating, with a deletionTimestamp, until the namespace controller
// empties it. So after Delete the suite accepts NotFound or an object with
// a deletionTimestamp.
func (s *suite) testNamespaces(t *testing.T) {
	ctx := s.ctx(t)
	namespaces := s.env.Client.Resource(Namespaces)
	name := "kdyn-dt-" + s.run + "-ns"
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{runLabel: s.run}},
	}}
	created, err := namespaces.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create Namespace: %v", err)
	}
	t.Cleanup(func() {
		// A real server answers Conflict while the namespace terminates.
		err := namespaces.Delete(s.cleanupCtx(t), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			t.Logf("deleting namespace %s: %v", name, err)
		}
	})
	if created.GetNamespace() != "" {
		t.Errorf("a Namespace has metadata.namespace %q", created.GetNamespace())
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" {
		t.Errorf("created Namespace uid %q resourceVersion %q, want both set", created.GetUID(), created.GetResourceVersion())
	}

	_, err = namespaces.Create(ctx, obj, metav1.CreateOptions{})
	st := wantStatus(t, "second Create", err, metav1.StatusReasonAlreadyExists)
	wantDetails(t, "second Create", st, "namespaces", name)

	got, err := namespaces.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get Namespace: %v", err)
	}
	if got.GetUID() != created.GetUID() || got.GetKind() != "Namespace" {
		t.Errorf("Get: kind %q uid %q, want Namespace %q", got.GetKind(), got.GetUID(), created.GetUID())
	}

	list, err := namespaces.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("List Namespaces: %v", err)
	}
	if got := names(list.Items); len(got) != 1 || got[0] != name {
		t.Errorf("List metadata.name=%s = %v, want [%s]", name, got, name)
	}
	if list.GetKind() != "NamespaceList" {
		t.Errorf("list kind %q, want NamespaceList", list.GetKind())
	}

	if err := namespaces.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete Namespace: %v", err)
	}
	after, err := namespaces.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatalf("Get after Delete: %v", err)
	case after.GetDeletionTimestamp() == nil:
		t.Errorf("Namespace %s still there after Delete without a deletionTimestamp", name)
	}

	_, err = namespaces.Get(ctx, "kdyn-dt-"+s.run+"-nsmissing", metav1.GetOptions{})
	st = wantStatus(t, "Get of a missing Namespace", err, metav1.StatusReasonNotFound)
	wantDetails(t, "Get of a missing Namespace", st, "namespaces", "kdyn-dt-"+s.run+"-nsmissing")
}
