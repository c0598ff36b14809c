package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	ctrl "github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/informer"
)

const (
	// group and version of the Widget CRD (crd.yaml).
	group   = "examples.kdyn.io"
	version = "v1"
	// crdName is the Widget CRD's name.
	crdName = "widgets." + group
	// fieldManager owns the controller's fields in managedFields.
	fieldManager = "kdyn-widget-controller"
	// ownerLabel marks the ConfigMaps the controller manages; its value is
	// the Widget's name. The ConfigMap informer selects on it.
	ownerLabel = group + "/widget"
	// conditionReady is the condition the controller writes.
	conditionReady = "Ready"
)

// Reasons of the Ready condition.
const (
	reasonSynced      = "ConfigMapSynced"
	reasonApplyFailed = "ConfigMapApplyFailed"
	reasonInvalidSpec = "InvalidSpec"
)

var (
	widgetGVR = schema.GroupVersionResource{Group: group, Version: version, Resource: "widgets"}
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// controller keeps one ConfigMap per Widget and the Widget's status.
type controller struct {
	// client sets fieldManager on every write (dynamic.WithFieldManager).
	client  dynamic.Interface
	widgets *informer.Informer[*unstructured.Unstructured]
	cms     *informer.Informer[*unstructured.Unstructured]
	queue   *ctrl.Controller[string]
	log     logr.Logger
	// events records what the controller does to each Widget.
	events events.EventRecorder
	// leading reports whether this replica may write now: with leader
	// election, whether it leads with a Lease whose renew deadline has not
	// passed (nil: always).
	leading func() bool
}

// errNotLeading ends a reconcile whose replica stopped leading before a
// write: the next leader reconciles the Widget itself.
var errNotLeading = errors.New("not leading any more")

// fence is checked right before each write. It closes the gap a paused or
// cut-off replica would otherwise have between losing the Lease and
// noticing; the one gap it cannot close, a process frozen between this
// check and its write, is closed by each write's resourceVersion
// precondition.
func (c *controller) fence() error {
	if c.leading != nil && !c.leading() {
		return errNotLeading
	}
	return nil
}

// watches are what feeds the queue: a Widget's own changes, and any
// change to a ConfigMap it controls (someone else editing or deleting it
// puts the Widget back in the queue). A ConfigMap the controller made
// carries the Widget as its controller reference, and its name in the
// owner label, which still points at it if someone removed the reference.
func (c *controller) watches() []ctrl.Watch[string] {
	return []ctrl.Watch[string]{
		ctrl.For(c.widgets),
		ctrl.Owns(c.cms, schema.GroupKind{Group: group, Kind: "Widget"}),
		ctrl.Watches(c.cms, func(cm *unstructured.Unstructured) []string {
			if name := cm.GetLabels()[ownerLabel]; name != "" {
				return []string{cm.GetNamespace() + "/" + name}
			}
			return nil
		}),
	}
}

// reconcile brings one Widget's ConfigMap and status in line with its spec.
// An error makes the queue retry the key with backoff.
func (c *controller) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	w, err := c.widgets.Lister().Namespace(ns).Get(name)
	if err != nil {
		// Deleted: its ConfigMap's ownerReference leaves it to the garbage
		// collector.
		return nil
	}
	if w.GetDeletionTimestamp() != nil {
		return nil
	}
	cond := metav1.Condition{Type: conditionReady, ObservedGeneration: w.GetGeneration()}
	data, err := specData(w)
	var cmErr error
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonInvalidSpec, err.Error()
	} else if cmErr = c.syncConfigMap(ctx, w, data); errors.Is(cmErr, errNotLeading) {
		return nil
	} else if cmErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonApplyFailed, cmErr.Error()
		c.events.Eventf(w, nil, events.Warning, reasonApplyFailed, "Apply", "%v", cmErr)
	} else {
		cond.Status, cond.Reason = metav1.ConditionTrue, reasonSynced
		cond.Message = fmt.Sprintf("ConfigMap %s holds %d keys", name, len(data))
	}
	err = c.syncStatus(ctx, w, cond)
	if errors.Is(err, errNotLeading) {
		return nil
	}
	return errors.Join(cmErr, err)
}

// specData returns spec.data (nil when unset).
func specData(w *unstructured.Unstructured) (map[string]string, error) {
	data, _, err := unstructured.NestedStringMap(w.Object, "spec", "data")
	if err != nil {
		return nil, fmt.Errorf("spec.data: %w", err)
	}
	return data, nil
}

// controllerRef is the ownerReference a Widget's ConfigMap carries.
func controllerRef(w *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: group + "/" + version, Kind: "Widget", Name: w.GetName(), UID: w.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
}

// upToDate reports whether the cached ConfigMap already is what the
// Widget wants, so nothing needs to be sent.
func upToDate(cm *unstructured.Unstructured, w *unstructured.Unstructured, data map[string]string) bool {
	if cm.GetLabels()[ownerLabel] != w.GetName() {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(cm)
	if ref == nil || ref.UID != w.GetUID() || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		return false
	}
	have, _, err := unstructured.NestedStringMap(cm.Object, "data")
	return err == nil && maps.Equal(have, data) && len(cm.GetOwnerReferences()) == 1
}

// syncConfigMap creates or updates the Widget's ConfigMap with server-side
// apply (forced: the controller owns these fields, and takes them back
// from anyone who changed them). An existing ConfigMap of that name with no
// controller is adopted; one controlled by something else makes the apply
// fail (an object has at most one controller). A ConfigMap already cached
// is applied with the resourceVersion the cache holds: if it changed since
// (a write this replica has not seen yet, or another replica's), the
// apply fails with a Conflict and the Widget is reconciled again on fresh
// data, instead of writing over what it has not seen.
func (c *controller) syncConfigMap(ctx context.Context, w *unstructured.Unstructured, data map[string]string) error {
	ns, name := w.GetNamespace(), w.GetName()
	cm, cmErr := c.cms.Lister().Namespace(ns).Get(name)
	if cmErr == nil && upToDate(cm, w, data) {
		return nil
	}
	values := make(map[string]any, len(data))
	for k, v := range data {
		values[k] = v
	}
	ref, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ptr(controllerRef(w)))
	if err != nil {
		return err
	}
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels":          map[string]any{ownerLabel: name},
			"ownerReferences": []any{ref},
		},
		"data": values,
	}}
	if cmErr == nil {
		desired.SetResourceVersion(cm.GetResourceVersion())
	}
	if err := c.fence(); err != nil {
		return err
	}
	cms := c.client.Resource(cmGVR).Namespace(ns)
	got, err := cms.Apply(ctx, name, desired, metav1.ApplyOptions{Force: true})
	if err != nil {
		return fmt.Errorf("apply ConfigMap %s/%s: %w", ns, name, err)
	}
	// Apply cannot remove keys that another field manager added (they are
	// that manager's fields): remove them with a merge patch.
	have, _, _ := unstructured.NestedStringMap(got.Object, "data")
	var extra []string
	for k := range have {
		if _, ok := data[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		patch := map[string]any{"metadata": map[string]any{"uid": string(got.GetUID()), "resourceVersion": got.GetResourceVersion()}, "data": map[string]any{}}
		for _, k := range extra {
			patch["data"].(map[string]any)[k] = nil
		}
		body, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		if err := c.fence(); err != nil {
			return err
		}
		if _, err := cms.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("remove keys %v from ConfigMap %s/%s: %w", extra, ns, name, err)
		}
	}
	c.log.V(1).Info("ConfigMap synced", "widget", ns+"/"+name, "keys", len(data), "removedKeys", extra)
	c.events.Eventf(w, got, events.Normal, "ConfigMapSynced", "Apply", "ConfigMap %s holds %d keys", name, len(data))
	return nil
}

// syncStatus writes status.observedGeneration and the Ready condition
// through the status subresource, when they differ from what the Widget
// has. lastTransitionTime changes only when the condition's status does.
func (c *controller) syncStatus(ctx context.Context, w *unstructured.Unstructured, cond metav1.Condition) error {
	if !statusNeedsWrite(w, cond) {
		return nil
	}
	// The cache may lag behind our own last write: decide on the live
	// object, so lastTransitionTime is not bumped by a stale read.
	live, err := c.client.Resource(widgetGVR).Namespace(w.GetNamespace()).Get(ctx, w.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if live.GetUID() != w.GetUID() || !statusNeedsWrite(live, cond) {
		return nil
	}
	conds := []metav1.Condition{}
	if old := readyCondition(live); old != nil {
		conds = append(conds, *old)
	}
	meta.SetStatusCondition(&conds, cond)
	ready, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[0])
	if err != nil {
		return err
	}
	apply := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/" + version, "kind": "Widget",
		// The status is decided on the live object: written only if it is
		// still that version.
		"metadata": map[string]any{"name": w.GetName(), "namespace": w.GetNamespace(), "resourceVersion": live.GetResourceVersion()},
		"status": map[string]any{
			"observedGeneration": cond.ObservedGeneration,
			// The list is a map keyed by type: this applies our condition
			// and leaves other writers' conditions alone.
			"conditions": []any{ready},
		},
	}}
	if err := c.fence(); err != nil {
		return err
	}
	_, err = c.client.Resource(widgetGVR).Namespace(w.GetNamespace()).ApplyStatus(ctx, w.GetName(), apply, metav1.ApplyOptions{Force: true})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("apply status of Widget %s/%s: %w", w.GetNamespace(), w.GetName(), err)
	}
	c.log.V(1).Info("status written", "widget", w.GetNamespace()+"/"+w.GetName(), "observedGeneration", cond.ObservedGeneration, "ready", string(cond.Status), "reason", cond.Reason)
	return nil
}

// statusNeedsWrite reports whether w's status differs from cond and its
// observedGeneration.
func statusNeedsWrite(w *unstructured.Unstructured, cond metav1.Condition) bool {
	gen, _, _ := unstructured.NestedInt64(w.Object, "status", "observedGeneration")
	if gen != cond.ObservedGeneration {
		return true
	}
	old := readyCondition(w)
	return old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message || old.ObservedGeneration != cond.ObservedGeneration
}

// readyCondition returns w's Ready condition, or nil.
func readyCondition(w *unstructured.Unstructured) *metav1.Condition {
	items, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok || m["type"] != conditionReady {
			continue
		}
		var cond metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err != nil {
			return nil
		}
		return &cond
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
