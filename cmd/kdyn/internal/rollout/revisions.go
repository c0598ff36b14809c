package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// This file finds an object's revisions: the ReplicaSets a Deployment
// controls, or the ControllerRevisions a StatefulSet or DaemonSet controls.

var (
	replicaSetsGVR         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	controllerRevisionsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}
)

// changeCauseAnnotation records why a revision was made.
const changeCauseAnnotation = "kubernetes.io/change-cause"

// revision is one entry of an object's rollout history.
type revision struct {
	number      int64
	changeCause string
	// template is the revision's pod template.
	template map[string]any
	// source is the ReplicaSet or ControllerRevision.
	source *unstructured.Unstructured
}

// revisions returns obj's revisions, oldest first: ReplicaSets for a
// Deployment, numbered by their revision annotation (0 without one, as
// kubectl numbers them; skipped when it is not a number),
// ControllerRevisions otherwise;
// only those obj controls (its controller owner reference), among those
// its selector matches.
func revisions(ctx context.Context, c dynamic.Interface, obj *unstructured.Unstructured) ([]revision, error) {
	selMap, _, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil {
		return nil, err
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(selMap, &ls); err != nil {
		return nil, fmt.Errorf("the selector of %s %q: %w", obj.GetKind(), obj.GetName(), err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("failed to create selector for %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	deployment := obj.GroupVersionKind().GroupKind() == deploymentGK
	gvr := controllerRevisionsGVR
	if deployment {
		gvr = replicaSetsGVR
	}
	list, err := dynamic.ListAll(ctx, c.Resource(gvr).Namespace(obj.GetNamespace()), metav1.ListOptions{LabelSelector: sel.String()}, dynamic.PageOptions{})
	if err != nil {
		return nil, err
	}
	var out []revision
	for i := range list.Items {
		item := &list.Items[i]
		if ref := metav1.GetControllerOf(item); ref == nil || ref.UID != obj.GetUID() {
			continue
		}
		r := revision{source: item, changeCause: item.GetAnnotations()[changeCauseAnnotation]}
		if deployment {
			n, err := annotationRevision(item)
			if err != nil {
				continue // as kubectl: a ReplicaSet without a number is no revision
			}
			r.number = n
			r.template, _, _ = unstructured.NestedMap(item.Object, "spec", "template")
		} else {
			r.number = intField(item, "revision")
			r.template, _, _ = unstructured.NestedMap(item.Object, "data", "spec", "template")
			delete(r.template, "$patch")
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out, nil
}

// find returns revision n, or with n == 0 the one before the latest.
func find(revs []revision, n int64) (revision, bool) {
	if n == 0 {
		if len(revs) < 2 {
			return revision{}, false
		}
		return revs[len(revs)-2], true
	}
	for _, r := range revs {
		if r.number == n {
			return r, true
		}
	}
	return revision{}, false
}

// withTemplate is obj with its pod template replaced by the revision's:
// what the object looked like at that revision.
func withTemplate(obj *unstructured.Unstructured, template map[string]any) *unstructured.Unstructured {
	out := obj.DeepCopy()
	_ = unstructured.SetNestedField(out.Object, runtime.DeepCopyJSONValue(template), "spec", "template")
	return out
}

// controllerRevisionPatch is the ControllerRevision's data as JSON: the
// strategic merge patch that restores its pod template.
func controllerRevisionPatch(cr *unstructured.Unstructured) ([]byte, error) {
	data, ok := cr.Object["data"]
	if !ok {
		return nil, fmt.Errorf("controller revision %s has no data", cr.GetName())
	}
	return json.Marshal(data)
}
