package apply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fieldsEntry(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(raw)}
}

// The client-side apply manager's fields join the server-side apply
// manager's Apply entry, and its Update entry goes; other managers stay.
func TestMergeManager(t *testing.T) {
	csa := fieldsEntry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate,
		`{"f:data":{".":{},"f:key":{},"f:legacy":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`)
	ssa := fieldsEntry("kubectl", metav1.ManagedFieldsOperationApply, `{"f:data":{"f:key":{}}}`)
	other := fieldsEntry("someone", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:other":{}}}`)

	got, err := mergeManager([]metav1.ManagedFieldsEntry{csa, ssa, other}, csa.Manager, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Manager != "kubectl" || got[1].Manager != "someone" {
		t.Fatalf("entries: %+v", got)
	}
	set, err := entrySet(got[0])
	if err != nil {
		t.Fatal(err)
	}
	want, _ := entrySet(csa)
	if !set.Equals(want) {
		t.Errorf("kubectl owns %s, want %s", set, want)
	}

	// Without an Apply entry, the client-side apply entry becomes it.
	got, err = mergeManager([]metav1.ManagedFieldsEntry{csa}, csa.Manager, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Manager != "kubectl" || got[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("entries: %+v", got)
	}

	// Owners of the annotation: the client-side apply manager.
	owners := fieldOwners([]metav1.ManagedFieldsEntry{csa, ssa, other}, metav1.ManagedFieldsOperationUpdate, lastAppliedPath)
	if len(owners) != 1 || owners[0].Manager != csa.Manager {
		t.Errorf("owners of the annotation: %+v", owners)
	}
}
