package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// The migration from client-side to server-side apply, as kubectl does it
// after a server-side apply: an object last written by client-side apply
// has its fields owned by an Update manager, so a later server-side apply
// that drops a field would leave it behind. kubectl hands those fields to
// the server-side apply manager and applies again.
const (
	// lastAppliedManager owns the last-applied annotation once the
	// object is applied server-side, so that it stays.
	lastAppliedManager = "kubectl-last-applied"
	// defaultSSAManager is kubectl's server-side apply manager; only it
	// keeps the annotation.
	defaultSSAManager = "kubectl"
	// maxMigrationPatches bounds the retries of the migration patch on a
	// conflict, as kubectl's.
	maxMigrationPatches = 5
)

// lastAppliedPath is the annotation's field path.
var lastAppliedPath = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata", "annotations", kunstructured.LastAppliedAnnotation))

// migrateToServerSide runs kubectl's migration for obj, just applied
// server-side by manager with the patch applyBody: it keeps the
// last-applied annotation under its own manager, moves the fields of the
// client-side apply managers to manager, and applies again when it moved
// any. Failures are warnings, as kubectl's: the apply itself succeeded.
func migrateToServerSide(ctx context.Context, errOut io.Writer, t *cli.ManifestTarget, obj *unstructured.Unstructured, manager string, applyBody *unstructured.Unstructured, opts metav1.ApplyOptions) *unstructured.Unstructured {
	if err := keepLastApplied(ctx, t, obj, manager); err != nil {
		fmt.Fprintf(errOut, "Warning: failed to migrate kubectl.kubernetes.io/last-applied-configuration for Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %s\n", err)
		return obj
	}
	migrated, err := upgradeManagedFields(ctx, t, obj, manager)
	if err != nil {
		fmt.Fprintf(errOut, "Warning: server rejected managed fields migration to Server-Side Apply. This is non-fatal and will be retried next time you apply. Error: %s\n", err)
		return obj
	}
	if migrated == nil {
		return obj
	}
	again, err := t.Resource.Apply(ctx, obj.GetName(), applyBody, opts)
	if err != nil {
		fmt.Fprintf(errOut, "Warning: failed to re-apply configuration after performing Server-Side Apply migration. This is non-fatal and will be retried next time you apply. Error: %s\n", err)
		return migrated
	}
	return again
}

// keepLastApplied applies the object's last-applied annotation under its
// own manager, unless an Apply manager owns it already or the object has
// none (only for kubectl's default manager, as kubectl).
func keepLastApplied(ctx context.Context, t *cli.ManifestTarget, obj *unstructured.Unstructured, manager string) error {
	if manager != defaultSSAManager {
		return nil
	}
	value, ok := obj.GetAnnotations()[kunstructured.LastAppliedAnnotation]
	if !ok || len(fieldOwners(obj.GetManagedFields(), metav1.ManagedFieldsOperationApply, lastAppliedPath)) > 0 {
		return nil
	}
	just := &unstructured.Unstructured{}
	just.SetGroupVersionKind(obj.GroupVersionKind())
	just.SetName(obj.GetName())
	just.SetNamespace(obj.GetNamespace())
	just.SetAnnotations(map[string]string{kunstructured.LastAppliedAnnotation: value})
	_, err := t.Resource.Apply(ctx, obj.GetName(), just, metav1.ApplyOptions{FieldManager: lastAppliedManager})
	return err
}

// upgradeManagedFields moves the fields of the client-side apply managers
// (the Update managers owning the last-applied annotation) into manager's
// Apply entry, with a JSON patch conditional on the resourceVersion,
// retried on a conflict. It returns the patched object, or nil when there
// was nothing to move.
func upgradeManagedFields(ctx context.Context, t *cli.ManifestTarget, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	var err error
	for range maxMigrationPatches {
		csa := map[string]bool{}
		for _, e := range fieldOwners(obj.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, lastAppliedPath) {
			csa[e.Manager] = true
		}
		before := obj.GetManagedFields()
		after := before
		for name := range csa {
			if after, err = mergeManager(after, name, manager); err != nil {
				return nil, err
			}
		}
		if reflect.DeepEqual(before, after) {
			return nil, nil
		}
		patch, err := json.Marshal([]map[string]any{
			{"op": "replace", "path": "/metadata/managedFields", "value": after},
			{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		})
		if err != nil {
			return nil, err
		}
		res, err := t.Resource.Patch(ctx, obj.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		if err == nil {
			return res, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		if obj, err = t.Resource.Get(ctx, obj.GetName(), metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
	return nil, err
}

// fieldOwners are the entries of operation op whose fields include all of
// fields.
func fieldOwners(entries []metav1.ManagedFieldsEntry, op metav1.ManagedFieldsOperationType, fields *fieldpath.Set) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Operation != op {
			continue
		}
		set, err := entrySet(e)
		if err != nil {
			continue
		}
		if fields.Difference(set).Empty() {
			out = append(out, e)
		}
	}
	return out
}

// mergeManager moves csaName's Update fields (of the main resource) into
// ssaName's Apply entry — csaName's entry becomes it when there is none —
// and drops csaName's Update entry.
func mergeManager(entries []metav1.ManagedFieldsEntry, csaName, ssaName string) ([]metav1.ManagedFieldsEntry, error) {
	entries = append([]metav1.ManagedFieldsEntry(nil), entries...)
	isCSA := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == csaName && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == ""
	}
	target := -1
	for i, e := range entries {
		if e.Manager == ssaName && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			target = i
			break
		}
	}
	if target < 0 {
		for i, e := range entries {
			if isCSA(e) {
				target = i
				break
			}
		}
		if target < 0 {
			return entries, nil
		}
		entries[target].Operation = metav1.ManagedFieldsOperationApply
		entries[target].Manager = ssaName
	}
	combined, err := entrySet(entries[target])
	if err != nil {
		return nil, fmt.Errorf("reading the fields of %s: %w", ssaName, err)
	}
	for _, e := range entries {
		if isCSA(e) && e.APIVersion == entries[target].APIVersion {
			set, err := entrySet(e)
			if err != nil {
				return nil, fmt.Errorf("reading the fields of %s: %w", csaName, err)
			}
			combined = combined.Union(set)
			break
		}
	}
	raw, err := combined.ToJSON()
	if err != nil {
		return nil, err
	}
	entries[target].FieldsV1 = metav1.NewFieldsV1(string(raw))
	out := entries[:0]
	for _, e := range entries {
		if !isCSA(e) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// entrySet decodes an entry's fields.
func entrySet(e metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	s := &fieldpath.Set{}
	if e.FieldsV1 == nil {
		return s, nil
	}
	err := s.FromJSON(e.FieldsV1.GetRawReader())
	return s, err
}
