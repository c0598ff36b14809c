package fake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	widgets    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

func configMap(ns, name string, labels map[string]any, data map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	if labels != nil {
		md["labels"] = labels
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}
	if data != nil {
		obj["data"] = data
	}
	return &unstructured.Unstructured{Object: obj}
}

func widget(ns, name string, spec, status map[string]any) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
	}
	if spec != nil {
		obj["spec"] = spec
	}
	if status != nil {
		obj["status"] = status
	}
	return &unstructured.Unstructured{Object: obj}
}

// must returns v, or fails t when err is set: must(r.Get(...))(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantReason checks that err is a *apierrors.StatusError with reason, and
// that its message contains each of contains.
func wantReason(t *testing.T, err error, reason metav1.StatusReason, contains ...string) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a *apierrors.StatusError with reason %s", err, err, reason)
	}
	if got := se.ErrStatus.Reason; got != reason {
		t.Fatalf("reason %q (%v), want %s", got, err, reason)
	}
	for _, c := range contains {
		if !strings.Contains(se.ErrStatus.Message, c) {
			t.Errorf("message %q does not contain %q", se.ErrStatus.Message, c)
		}
	}
}

func TestSeedObjects(t *testing.T) {
	typed := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: "ns", UID: "given-uid", Labels: map[string]string{"a": "b"}},
	}
	list := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*configMap("ns", "in-list", nil, nil)}}
	seed := configMap("ns", "plain", nil, map[string]any{"k": "v"})
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ns", "namespace": "ignored"},
	}}
	c := NewClient(typed, list, seed, ns, widget("ns", "w", nil, nil))
	seed.Object["data"] = map[string]any{"k": "changed after NewClient"}

	got := c.Objects(configMaps)
	var names []string
	for _, o := range got {
		names = append(names, o.GetName())
	}
	if diff := cmp.Diff([]string{"in-list", "plain", "typed"}, names); diff != "" {
		t.Errorf("seeded ConfigMaps (-want +got):\n%s", diff)
	}
	if got[2].GetUID() != "given-uid" || got[2].GetLabels()["a"] != "b" {
		t.Errorf("typed seed: uid %q labels %v, want the given ones", got[2].GetUID(), got[2].GetLabels())
	}
	if got[1].GetUID() == "" || got[1].GetCreationTimestamp().Time.IsZero() || got[1].GetGeneration() != 1 {
		t.Errorf("plain seed: uid %q creationTimestamp %v generation %d, want them filled in", got[1].GetUID(), got[1].GetCreationTimestamp(), got[1].GetGeneration())
	}
	if v, _, _ := unstructured.NestedString(got[1].Object, "data", "k"); v != "v" {
		t.Errorf("seed data = %q: a change after NewClient leaked in", v)
	}
	nsObjs := c.Objects(namespaces)
	if len(nsObjs) != 1 || nsObjs[0].GetNamespace() != "" {
		t.Errorf("Namespaces %v, want one without metadata.namespace (cluster-scoped)", nsObjs)
	}
	// An unregistered kind goes to its naive plural, namespaced by its object.
	w := must(c.Resource(widgets).Namespace("ns").Get(t.Context(), "w", metav1.GetOptions{}))(t)
	if w.GetKind() != "Widget" {
		t.Errorf("widget kind %q", w.GetKind())
	}
	_, err := c.Resource(widgets).Get(t.Context(), "w", metav1.GetOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "namespaced", "Namespace(ns)")
}

func TestSeedErrors(t *testing.T) {
	noKind := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	c := NewClient(configMap("ns", "ok", nil, nil), noKind)
	_, err := c.Resource(configMaps).Namespace("ns").Get(t.Context(), "ok", metav1.GetOptions{})
	wantReason(t, err, metav1.StatusReasonInternalError, "object 1", "apiVersion and kind are required")

	c = NewClient()
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"nil", nil, "nil object"},
		{"no kind", noKind, "apiVersion and kind are required"},
		{"typed without TypeMeta", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, "apiVersion and kind are required"},
		{"typed list", &metav1.PartialObjectMetadataList{}, "typed list"},
		{"no namespace for a namespaced kind", configMap("", "x", nil, nil), "metadata.namespace"},
		{"bad name", configMap("ns", "Not_A_Name", nil, nil), "metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Add(tc.obj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Add: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	noErr(t, c.Add(configMap("ns", "dup", nil, nil)))
	if err := c.Add(configMap("ns", "dup", nil, nil)); !apierrors.IsAlreadyExists(errors.Unwrap(err)) {
		t.Errorf("Add of a duplicate: %v, want AlreadyExists", err)
	}
}

func TestRegister(t *testing.T) {
	c := NewClient()
	for _, bad := range []ResourceInfo{
		{GVR: schema.GroupVersionResource{Resource: "xs"}, Kind: "X"},
		{GVR: schema.GroupVersionResource{Version: "v1"}, Kind: "X"},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "xs/status"}, Kind: "X"},
		{GVR: schema.GroupVersionResource{Version: "v1", Resource: "xs"}},
	} {
		if err := c.Register(bad); err == nil {
			t.Errorf("Register(%+v) accepted", bad)
		}
	}
	// An irregular plural, cluster-scoped, with a custom list kind.
	people := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "people"}
	noErr(t, c.Register(ResourceInfo{GVR: people, Kind: "Person", ListKind: "PersonCollection"}))
	noErr(t, c.Add(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Person", "metadata": map[string]any{"name": "ada"},
	}}))
	list := must(c.Resource(people).List(t.Context(), metav1.ListOptions{}))(t)
	if len(list.Items) != 1 || list.GetKind() != "PersonCollection" {
		t.Errorf("people: kind %q items %d, want PersonCollection with 1", list.GetKind(), len(list.Items))
	}
	_, err := c.Resource(people).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
	}}, metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, `serves kind "Person"`)
	_, err = c.Resource(people).Namespace("ns").Get(t.Context(), "ada", metav1.GetOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "cluster-scoped")
}

func TestPluralize(t *testing.T) {
	for kind, want := range map[string]string{
		"Widget": "widgets", "Policy": "policies", "Gateway": "gateways", "Class": "classes",
		"Box": "boxes", "Match": "matches", "Mesh": "meshes", "Quiz": "quizes",
	} {
		if got := pluralize(kind); got != want {
			t.Errorf("pluralize(%q) = %q, want %q", kind, got, want)
		}
	}
	for plural, want := range map[string]string{
		"widgets": "Widget", "policies": "Policy", "classes": "Class", "boxes": "Box", "matches": "Match", "things": "Thing",
	} {
		if got := kindFromResource(plural); got != want {
			t.Errorf("kindFromResource(%q) = %q, want %q", plural, got, want)
		}
	}
}

func TestUnregisteredResources(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	// Nothing registered, nothing stored: an empty list, no panic.
	gadgets := schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "gadgets"}
	list := must(c.Resource(gadgets).List(ctx, metav1.ListOptions{}))(t)
	if list.GetKind() != "GadgetList" || list.GetAPIVersion() != "example.com/v2" || len(list.Items) != 0 {
		t.Errorf("empty list: %s %s with %d items, want example.com/v2 GadgetList, empty", list.GetAPIVersion(), list.GetKind(), len(list.Items))
	}
	w := must(c.Resource(gadgets).Watch(ctx, metav1.ListOptions{}))(t)
	w.Stop()

	// The first object decides kind and scope.
	_, err := c.Resource(gadgets).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v2", "metadata": map[string]any{"name": "g"},
	}}, metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, "no kind")
	must(c.Resource(gadgets).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": map[string]any{"name": "g"},
	}}, metav1.CreateOptions{}))(t)
	list = must(c.Resource(gadgets).List(ctx, metav1.ListOptions{}))(t)
	if list.GetKind() != "GizmoList" {
		t.Errorf("list kind %q after creating a Gizmo, want GizmoList", list.GetKind())
	}
	_, err = c.Resource(gadgets).Namespace("ns").Get(ctx, "g", metav1.GetOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "cluster-scoped")

	// A namespaced one, learned from the request's namespace.
	w2 := must(c.Resource(widgets).Namespace("a").Create(ctx, widget("", "w", nil, nil), metav1.CreateOptions{}))(t)
	if w2.GetNamespace() != "a" {
		t.Errorf("namespace %q, want the request's", w2.GetNamespace())
	}
	_, err = c.Resource(widgets).Create(ctx, widget("", "x", nil, nil), metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "namespaced")
	all := must(c.Resource(widgets).List(ctx, metav1.ListOptions{}))(t)
	if len(all.Items) != 1 || all.GetKind() != "WidgetList" {
		t.Errorf("widgets in all namespaces: %d items, kind %q", len(all.Items), all.GetKind())
	}
}

func TestStatusSubresource(t *testing.T) {
	c := NewClient()
	noErr(t, c.Register(ResourceInfo{GVR: widgets, Kind: "Widget", Namespaced: true, Status: true}))
	ctx := t.Context()
	r := c.Resource(widgets).Namespace("ns")

	created := must(r.Create(ctx, widget("ns", "w", map[string]any{"size": int64(1)}, map[string]any{"ready": true}), metav1.CreateOptions{}))(t)
	if _, ok := created.Object["status"]; ok {
		t.Errorf("Create kept status %v; a resource with a status subresource drops it", created.Object["status"])
	}
	if created.GetGeneration() != 1 {
		t.Errorf("generation %d after create, want 1", created.GetGeneration())
	}

	// Status-only update: spec and labels in the request are ignored.
	st := created.DeepCopy()
	st.Object["status"] = map[string]any{"ready": true}
	st.Object["spec"] = map[string]any{"size": int64(99)}
	st.SetLabels(map[string]string{"ignored": "yes"})
	afterStatus := must(r.UpdateStatus(ctx, st, metav1.UpdateOptions{}))(t)
	if diff := cmp.Diff(map[string]any{"ready": true}, afterStatus.Object["status"]); diff != "" {
		t.Errorf("status after UpdateStatus (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"size": int64(1)}, afterStatus.Object["spec"]); diff != "" {
		t.Errorf("UpdateStatus changed spec (-want +got):\n%s", diff)
	}
	if afterStatus.GetLabels() != nil || afterStatus.GetGeneration() != 1 {
		t.Errorf("UpdateStatus: labels %v generation %d, want none and 1", afterStatus.GetLabels(), afterStatus.GetGeneration())
	}

	// Main update: a status change is ignored, a spec change bumps generation.
	main := afterStatus.DeepCopy()
	main.Object["status"] = map[string]any{"ready": false}
	main.Object["spec"] = map[string]any{"size": int64(2)}
	afterMain := must(r.Update(ctx, main, metav1.UpdateOptions{}))(t)
	if diff := cmp.Diff(map[string]any{"ready": true}, afterMain.Object["status"]); diff != "" {
		t.Errorf("main Update changed status (-want +got):\n%s", diff)
	}
	if afterMain.GetGeneration() != 2 {
		t.Errorf("generation %d after a spec change, want 2", afterMain.GetGeneration())
	}
	// A metadata-only change does not.
	labelled := afterMain.DeepCopy()
	labelled.SetLabels(map[string]string{"l": "v"})
	if got := must(r.Update(ctx, labelled, metav1.UpdateOptions{}))(t); got.GetGeneration() != 2 {
		t.Errorf("generation %d after a label change, want 2", got.GetGeneration())
	}

	// Patch and apply of the status subresource change status only.
	patched := must(r.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"size":5},"status":{"phase":"Up"}}`), metav1.PatchOptions{}, "status"))(t)
	if phase, _, _ := unstructured.NestedString(patched.Object, "status", "phase"); phase != "Up" {
		t.Errorf("status.phase %q after a status patch, want Up", phase)
	}
	if size, _, _ := unstructured.NestedInt64(patched.Object, "spec", "size"); size != 2 {
		t.Errorf("spec.size %d after a status patch, want 2 kept", size)
	}
	applied := must(r.ApplyStatus(ctx, "w", widget("ns", "w", nil, map[string]any{"phase": "Applied"}), metav1.ApplyOptions{FieldManager: "test"}))(t)
	if phase, _, _ := unstructured.NestedString(applied.Object, "status", "phase"); phase != "Applied" {
		t.Errorf("status.phase %q after ApplyStatus, want Applied", phase)
	}
	// Get of the status subresource returns the whole object.
	whole := must(r.Get(ctx, "w", metav1.GetOptions{}, "status"))(t)
	if _, ok := whole.Object["spec"]; !ok {
		t.Error("Get of status has no spec; the server returns the whole object")
	}
	_, err := r.ApplyStatus(ctx, "missing", widget("ns", "missing", nil, nil), metav1.ApplyOptions{FieldManager: "test"})
	wantReason(t, err, metav1.StatusReasonNotFound)

	// ConfigMaps have no status subresource; other subresources are not served.
	cms := c.Resource(configMaps).Namespace("ns")
	must(cms.Create(ctx, configMap("", "cm", nil, nil), metav1.CreateOptions{}))(t)
	_, err = cms.UpdateStatus(ctx, configMap("ns", "cm", nil, nil), metav1.UpdateOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "no status subresource", "Status: true")
	_, err = r.Get(ctx, "w", metav1.GetOptions{}, "scale")
	wantReason(t, err, metav1.StatusReasonNotFound, `"scale"`)
	_, err = cms.Create(ctx, configMap("", "cm2", nil, nil), metav1.CreateOptions{}, "status")
	wantReason(t, err, metav1.StatusReasonNotFound, "not supported")
	err = cms.Delete(ctx, "cm", metav1.DeleteOptions{}, "status")
	wantReason(t, err, metav1.StatusReasonNotFound, "not supported")
}

func TestGenerationWithoutStatusSubresource(t *testing.T) {
	c := NewClient()
	r := c.Resource(widgets).Namespace("ns")
	ctx := t.Context()
	w := must(r.Create(ctx, widget("ns", "w", map[string]any{"a": "1"}, map[string]any{"s": "1"}), metav1.CreateOptions{}))(t)
	if _, ok := w.Object["status"]; !ok {
		t.Error("Create dropped status of a resource without a status subresource")
	}
	w.Object["status"] = map[string]any{"s": "2"}
	w = must(r.Update(ctx, w, metav1.UpdateOptions{}))(t)
	if s, _, _ := unstructured.NestedString(w.Object, "status", "s"); s != "2" || w.GetGeneration() != 1 {
		t.Errorf("after a status change: status.s %q generation %d, want 2 and 1", s, w.GetGeneration())
	}
	w = must(r.Patch(ctx, "w", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/a","value":"2"}]`), metav1.PatchOptions{}))(t)
	if w.GetGeneration() != 2 {
		t.Errorf("generation %d after a spec patch, want 2", w.GetGeneration())
	}
	// Update cannot set generation, uid or creationTimestamp.
	forged := w.DeepCopy()
	forged.SetGeneration(40)
	forged.SetCreationTimestamp(metav1.NewTime(time.Unix(0, 0)))
	got := must(r.Update(ctx, forged, metav1.UpdateOptions{}))(t)
	if ts := got.GetCreationTimestamp(); got.GetGeneration() != 2 || !ts.Equal(ptr(w.GetCreationTimestamp())) {
		t.Errorf("update set generation %d creationTimestamp %v", got.GetGeneration(), got.GetCreationTimestamp())
	}
}

func ptr[T any](v T) *T { return &v }

func TestCopiesDoNotLeak(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")
	in := configMap("", "cm", map[string]any{"l": "1"}, map[string]any{"k": "v"})
	out := must(r.Create(ctx, in, metav1.CreateOptions{}))(t)
	w := must(r.Watch(ctx, metav1.ListOptions{ResourceVersion: out.GetResourceVersion()}))(t)
	defer w.Stop()

	in.Object["data"].(map[string]any)["k"] = "mutated input"
	out.Object["data"].(map[string]any)["k"] = "mutated output"
	got := must(r.Get(ctx, "cm", metav1.GetOptions{}))(t)
	got.Object["data"].(map[string]any)["k"] = "mutated get"
	c.Objects(configMaps)[0].Object["data"].(map[string]any)["k"] = "mutated Objects"
	list := must(r.List(ctx, metav1.ListOptions{}))(t)
	list.Items[0].Object["data"].(map[string]any)["k"] = "mutated list"

	upd := must(r.Get(ctx, "cm", metav1.GetOptions{}))(t)
	upd.SetLabels(map[string]string{"l": "2"})
	must(r.Update(ctx, upd, metav1.UpdateOptions{}))(t)
	ev := <-w.ResultChan()
	ev.Object.(*unstructured.Unstructured).Object["data"].(map[string]any)["k"] = "mutated event"

	final := must(r.Get(ctx, "cm", metav1.GetOptions{}))(t)
	if k, _, _ := unstructured.NestedString(final.Object, "data", "k"); k != "v" {
		t.Errorf("stored data.k = %q: a caller's mutation leaked into the store", k)
	}
}

func TestNonJSONValuesAreNormalized(t *testing.T) {
	c := NewClient()
	obj := widget("ns", "w", map[string]any{"replicas": 3, "names": []string{"a"}, "ratio": float32(0.5)}, nil)
	out := must(c.Resource(widgets).Namespace("ns").Create(t.Context(), obj, metav1.CreateOptions{}))(t)
	spec := out.Object["spec"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"replicas": int64(3), "names": []any{"a"}, "ratio": 0.5}, spec); diff != "" {
		t.Errorf("spec after create (-want +got):\n%s", diff)
	}
	out.DeepCopy() // would panic on non-JSON types
}

func TestCreateRules(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")

	long := strings.Repeat("g", 70)
	gen := configMap("", "", nil, nil)
	gen.SetGenerateName(long)
	out := must(r.Create(ctx, gen, metav1.CreateOptions{}))(t)
	if len(out.GetName()) != 63 || !strings.HasPrefix(out.GetName(), long[:58]) {
		t.Errorf("generated name %q, want generateName cut to 58 characters plus 5", out.GetName())
	}

	_, err := r.Create(ctx, configMap("", "Bad_Name", nil, nil), metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonInvalid, "metadata.name")
	_, err = r.Create(ctx, configMap("", "ok", map[string]any{"bad key!": "v"}, nil), metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonInvalid, "metadata.labels")
	_, err = r.Create(ctx, nil, metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, "nil object")
	wrongAV := configMap("", "x", nil, nil)
	wrongAV.SetAPIVersion("apps/v1")
	_, err = r.Create(ctx, wrongAV, metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, `apiVersion "apps/v1"`)
	_, err = r.Create(ctx, configMap("", "x", nil, nil), metav1.CreateOptions{DryRun: []string{"Bogus"}})
	wantReason(t, err, metav1.StatusReasonInvalid, "dryRun")

	// Defaults from the resource when apiVersion and kind are missing.
	bare := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "bare"}}}
	if out := must(r.Create(ctx, bare, metav1.CreateOptions{}))(t); out.GetKind() != "ConfigMap" || out.GetAPIVersion() != "v1" {
		t.Errorf("defaulted %s %s", out.GetAPIVersion(), out.GetKind())
	}

	// A cluster-scoped object loses its namespace, as on the server.
	ns := must(c.Resource(namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n1", "namespace": "x"},
	}}, metav1.CreateOptions{}))(t)
	if ns.GetNamespace() != "" {
		t.Errorf("Namespace has namespace %q", ns.GetNamespace())
	}
	_, err = c.Resource(namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "has.dots"},
	}}, metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonInvalid, "metadata.name")

	// Dry run stores nothing.
	dry := must(r.Create(ctx, configMap("", "dry", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}))(t)
	if dry.GetUID() == "" {
		t.Error("dry-run create returned no uid")
	}
	_, err = r.Get(ctx, "dry", metav1.GetOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound)

	// A canceled context fails as the real client would.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Get(canceled, "bare", metav1.GetOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context: %v, want context.Canceled", err)
	}
	_, err = r.Apply(ctx, "m", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "m", "managedFields": []any{map[string]any{"manager": "x"}}},
	}}, metav1.ApplyOptions{FieldManager: "t"})
	if err == nil || !strings.Contains(err.Error(), "managedFields") {
		t.Errorf("Apply with managedFields: %v, want the real client's refusal", err)
	}
}

func TestDryRunUpdatePatchDelete(t *testing.T) {
	c := NewClient(configMap("ns", "cm", nil, map[string]any{"k": "v"}))
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")
	dry := metav1.DryRunAll
	cm := must(r.Get(ctx, "cm", metav1.GetOptions{}))(t)
	cm.Object["data"] = map[string]any{"k": "dry"}
	if out := must(r.Update(ctx, cm, metav1.UpdateOptions{DryRun: []string{dry}}))(t); out.Object["data"].(map[string]any)["k"] != "dry" {
		t.Errorf("dry-run update returned %v", out.Object["data"])
	}
	must(r.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"k":"dry"}}`), metav1.PatchOptions{DryRun: []string{dry}}))(t)
	noErr(t, r.Delete(ctx, "cm", metav1.DeleteOptions{DryRun: []string{dry}}))
	after := must(r.Get(ctx, "cm", metav1.GetOptions{}))(t)
	if after.GetResourceVersion() != cm.GetResourceVersion() || after.Object["data"].(map[string]any)["k"] != "v" {
		t.Errorf("dry runs changed the object: rv %s data %v", after.GetResourceVersion(), after.Object["data"])
	}
}

func TestPatchTypes(t *testing.T) {
	c := NewClient(configMap("ns", "cm", nil, map[string]any{"a": "1"}))
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")

	// Strategic merge is a merge patch here.
	out := must(r.Patch(ctx, "cm", types.StrategicMergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{}))(t)
	if diff := cmp.Diff(map[string]any{"a": "1", "b": "2"}, out.Object["data"]); diff != "" {
		t.Errorf("strategic merge patch (-want +got):\n%s", diff)
	}
	// Apply accepts YAML, merges onto the object, and creates missing ones.
	out = must(r.Patch(ctx, "cm", types.ApplyPatchType, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  c: \"3\"\n"), metav1.PatchOptions{FieldManager: "t"}))(t)
	if diff := cmp.Diff(map[string]any{"a": "1", "b": "2", "c": "3"}, out.Object["data"]); diff != "" {
		t.Errorf("apply onto an object (-want +got):\n%s", diff)
	}
	created := must(r.Patch(ctx, "new", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`), metav1.PatchOptions{FieldManager: "t"}))(t)
	if created.GetUID() == "" || created.GetNamespace() != "ns" {
		t.Errorf("apply-created object uid %q namespace %q", created.GetUID(), created.GetNamespace())
	}
	_, err := r.Patch(ctx, "other", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"different"}}`), metav1.PatchOptions{FieldManager: "t"})
	wantReason(t, err, metav1.StatusReasonBadRequest, "does not match the name on the URL")
	_, err = r.Patch(ctx, "cm", types.MergePatchType, []byte(`{"metadata":{"name":"renamed"}}`), metav1.PatchOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, "does not match the name on the URL")
	_, err = r.Patch(ctx, "cm", types.MergePatchType, []byte(`{"metadata":{"namespace":"elsewhere"}}`), metav1.PatchOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, "does not match the namespace")
	_, err = r.Patch(ctx, "cm", types.MergePatchType, []byte(`{"metadata":{"uid":"forged"}}`), metav1.PatchOptions{})
	wantReason(t, err, metav1.StatusReasonInvalid, "metadata.uid", "field is immutable")
	_, err = r.Patch(ctx, "missing", types.MergePatchType, []byte(`not json`), metav1.PatchOptions{})
	wantReason(t, err, metav1.StatusReasonBadRequest, "invalid JSON patch")
	_, err = r.Patch(ctx, "cm", types.ApplyPatchType, []byte("a: [b"), metav1.PatchOptions{FieldManager: "t"})
	wantReason(t, err, metav1.StatusReasonBadRequest, "error encoding patch")
	_, err = r.Patch(ctx, "cm", types.ApplyCBORPatchType, []byte(`{}`), metav1.PatchOptions{FieldManager: "t"})
	wantReason(t, err, metav1.StatusReasonUnsupportedMediaType)
	force := true
	_, err = r.Patch(ctx, "cm", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{Force: &force})
	wantReason(t, err, metav1.StatusReasonInvalid, "force")
	// A patch clearing resourceVersion is unconditional.
	must(r.Patch(ctx, "cm", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":null},"data":{"d":"4"}}`), metav1.PatchOptions{}))(t)
}

func TestFinalizersAndDeletion(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	r := c.Resource(widgets).Namespace("ns")
	obj := widget("ns", "w", nil, nil)
	obj.SetFinalizers([]string{"example.com/hold"})
	must(r.Create(ctx, obj, metav1.CreateOptions{}))(t)
	w := must(r.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true}))(t)
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %s, want the initial ADDED", ev.Type)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Bookmark {
		t.Fatalf("second event %s, want the initial-events BOOKMARK", ev.Type)
	}

	noErr(t, r.Delete(ctx, "w", metav1.DeleteOptions{}))
	ev := <-w.ResultChan()
	held := ev.Object.(*unstructured.Unstructured)
	if ev.Type != watch.Modified || held.GetDeletionTimestamp() == nil || *held.GetDeletionGracePeriodSeconds() != 0 {
		t.Fatalf("after Delete: %s with deletionTimestamp %v, want MODIFIED with one", ev.Type, held.GetDeletionTimestamp())
	}
	// Update cannot clear the deletionTimestamp; clearing finalizers deletes.
	held.SetDeletionTimestamp(nil)
	held.SetFinalizers(nil)
	must(r.Update(ctx, held, metav1.UpdateOptions{}))(t)
	if ev := <-w.ResultChan(); ev.Type != watch.Deleted {
		t.Fatalf("after clearing finalizers: %s, want DELETED", ev.Type)
	}
	if len(c.Objects(widgets)) != 0 {
		t.Errorf("objects left: %v", c.Objects(widgets))
	}
}

func TestDeleteCollectionSelectors(t *testing.T) {
	c := NewClient(
		configMap("a", "x", map[string]any{"app": "web"}, nil),
		configMap("a", "y", map[string]any{"app": "web"}, nil),
		configMap("a", "z", map[string]any{"app": "db"}, nil),
		configMap("b", "x", map[string]any{"app": "web"}, nil),
	)
	ctx := t.Context()
	noErr(t, c.Resource(configMaps).Namespace("a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.name!=y"}))
	var left []string
	for _, o := range c.Objects(configMaps) {
		left = append(left, o.GetNamespace()+"/"+o.GetName())
	}
	if diff := cmp.Diff([]string{"a/y", "a/z", "b/x"}, left); diff != "" {
		t.Errorf("left after DeleteCollection (-want +got):\n%s", diff)
	}
	err := c.Resource(configMaps).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	wantReason(t, err, metav1.StatusReasonNotFound, "needs a namespace")
	err = c.Resource(configMaps).Namespace("a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "spec.x=1"})
	wantReason(t, err, metav1.StatusReasonBadRequest, "spec.x")
}

func TestListSortingAndResourceVersions(t *testing.T) {
	// etcd orders keys as strings: "a-b/x" sorts before "a/x".
	c := NewClient(configMap("a", "x", nil, nil), configMap("a-b", "x", nil, nil), configMap("a", "w", nil, nil))
	ctx := t.Context()
	all := must(c.Resource(configMaps).List(ctx, metav1.ListOptions{}))(t)
	var keys []string
	for _, it := range all.Items {
		keys = append(keys, it.GetNamespace()+"/"+it.GetName())
	}
	if diff := cmp.Diff([]string{"a-b/x", "a/w", "a/x"}, keys); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if all.GetResourceVersion() != "3" {
		t.Errorf("list resourceVersion %q, want the counter, 3", all.GetResourceVersion())
	}

	r := c.Resource(configMaps).Namespace("a")
	noErr(t, r.Delete(ctx, "w", metav1.DeleteOptions{}))
	// An exact resourceVersion lists the past.
	past := must(r.List(ctx, metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}))(t)
	if len(past.Items) != 2 || past.GetResourceVersion() != "3" {
		t.Errorf("list at rv 3: %d items rv %s, want 2 and 3", len(past.Items), past.GetResourceVersion())
	}
	_, err := r.List(ctx, metav1.ListOptions{ResourceVersion: "99"})
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("list at a future resourceVersion: %v, want too large", err)
	}
	_, err = r.List(ctx, metav1.ListOptions{ResourceVersion: "abc"})
	wantReason(t, err, metav1.StatusReasonBadRequest, `"abc"`)
	_, err = r.List(ctx, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	wantReason(t, err, metav1.StatusReasonInvalid, "resourceVersionMatch")
	_, err = r.List(ctx, metav1.ListOptions{Continue: "garbage!"})
	wantReason(t, err, metav1.StatusReasonBadRequest, "continue token")
	page := must(c.Resource(configMaps).List(ctx, metav1.ListOptions{Limit: 1}))(t)
	if page.GetRemainingItemCount() == nil || *page.GetRemainingItemCount() != 1 {
		t.Errorf("remainingItemCount %v, want 1", page.GetRemainingItemCount())
	}
	_, err = c.Resource(namespaces).List(ctx, metav1.ListOptions{Continue: page.GetContinue()})
	wantReason(t, err, metav1.StatusReasonBadRequest, "continue token is for")
}

func TestHistoryCompaction(t *testing.T) {
	c := NewClient()
	c.historySize = 3
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")
	first := must(r.Create(ctx, configMap("", "first", nil, nil), metav1.CreateOptions{}))(t)
	for i := range 2 {
		must(r.Create(ctx, configMap("", fmt.Sprintf("cm%d", i), nil, nil), metav1.CreateOptions{}))(t)
	}
	page := must(r.List(ctx, metav1.ListOptions{Limit: 1}))(t)
	// Three more changes still leave every change after page's in history.
	for i := range 3 {
		must(r.Create(ctx, configMap("", fmt.Sprintf("kept%d", i), nil, nil), metav1.CreateOptions{}))(t)
	}
	must(r.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.GetContinue()}))(t)
	// The fourth does not.
	must(r.Create(ctx, configMap("", "later", nil, nil), metav1.CreateOptions{}))(t)
	_, err := r.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.GetContinue()})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("continue after compaction: %v, want 410 Expired", err)
	}
	_, err = r.List(ctx, metav1.ListOptions{ResourceVersion: page.GetResourceVersion(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("exact list after compaction: %v, want 410 Expired", err)
	}
	w := must(r.Watch(ctx, metav1.ListOptions{ResourceVersion: first.GetResourceVersion()}))(t)
	defer w.Stop()
	ev, ok := <-w.ResultChan()
	if !ok || ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
		t.Fatalf("watch from a compacted resourceVersion: %v %v, want an ERROR 410", ev.Type, ev.Object)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the watch goes on after its ERROR event")
	}
}

func TestWatchResumeAndFilters(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	a, b := c.Resource(configMaps).Namespace("a"), c.Resource(configMaps).Namespace("b")
	start := must(a.List(ctx, metav1.ListOptions{}))(t).GetResourceVersion()
	must(a.Create(ctx, configMap("", "one", nil, nil), metav1.CreateOptions{}))(t)
	must(b.Create(ctx, configMap("", "two", nil, nil), metav1.CreateOptions{}))(t)
	must(a.Create(ctx, configMap("", "three", nil, nil), metav1.CreateOptions{}))(t)

	// Resuming replays history after the resourceVersion, for namespace a.
	w := must(a.Watch(ctx, metav1.ListOptions{ResourceVersion: start}))(t)
	defer w.Stop()
	for _, want := range []string{"one", "three"} {
		ev := <-w.ResultChan()
		if got := ev.Object.(*unstructured.Unstructured).GetName(); ev.Type != watch.Added || got != want {
			t.Fatalf("event %s %s, want ADDED %s", ev.Type, got, want)
		}
	}
	// All namespaces, field selector on the name, from now.
	no := false
	all := must(c.Resource(configMaps).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=four", SendInitialEvents: &no, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}))(t)
	defer all.Stop()
	must(b.Create(ctx, configMap("", "five", nil, nil), metav1.CreateOptions{}))(t)
	four := must(b.Create(ctx, configMap("", "four", nil, nil), metav1.CreateOptions{}))(t)
	ev := <-all.ResultChan()
	if got := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || got.GetName() != "four" || got.GetResourceVersion() != four.GetResourceVersion() {
		t.Errorf("all-namespaces watch got %s %s, want ADDED four", ev.Type, got.GetName())
	}
	select {
	case ev := <-w.ResultChan():
		t.Errorf("the namespace-a watch saw %s %s from namespace b", ev.Type, ev.Object.(*unstructured.Unstructured).GetName())
	default:
	}

	// A watch from a future resourceVersion waits for it.
	future := must(a.Watch(ctx, metav1.ListOptions{ResourceVersion: "100"}))(t)
	defer future.Stop()
	must(a.Create(ctx, configMap("", "six", nil, nil), metav1.CreateOptions{}))(t)
	select {
	case ev := <-future.ResultChan():
		t.Errorf("a watch from rv 100 saw %s at rv %s", ev.Type, ev.Object.(metav1.Object).GetResourceVersion())
	default:
	}

	_, err := a.Watch(ctx, metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	wantReason(t, err, metav1.StatusReasonInvalid, "resourceVersionMatch")
	_, err = a.Watch(ctx, metav1.ListOptions{LabelSelector: "a in (b"})
	wantReason(t, err, metav1.StatusReasonBadRequest)
}

func TestWatchEnds(t *testing.T) {
	c := NewClient()
	r := c.Resource(configMaps).Namespace("ns")
	wait := func(t *testing.T, w watch.Interface) {
		t.Helper()
		select {
		case _, ok := <-w.ResultChan():
			if ok {
				t.Fatal("an event, want the channel closed")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the channel is still open")
		}
	}
	t.Run("context canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		w := must(r.Watch(ctx, metav1.ListOptions{}))(t)
		cancel()
		wait(t, w)
		w.Stop()
	})
	t.Run("timeout", func(t *testing.T) {
		one := int64(1)
		w := must(r.Watch(t.Context(), metav1.ListOptions{TimeoutSeconds: &one}))(t)
		defer w.Stop()
		wait(t, w)
	})
	t.Run("stop", func(t *testing.T) {
		w := must(r.Watch(t.Context(), metav1.ListOptions{}))(t)
		w.Stop()
		wait(t, w)
		must(r.Create(t.Context(), configMap("", "after-stop", nil, nil), metav1.CreateOptions{}))(t)
		c.mu.Lock()
		n := len(c.watchers)
		c.mu.Unlock()
		if n != 0 {
			t.Errorf("%d watchers registered after Stop", n)
		}
	})
}

func TestSlowWatcherIsDropped(t *testing.T) {
	c := NewClient()
	c.watchBuffer = 5
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")
	slow := must(r.Watch(ctx, metav1.ListOptions{}))(t)
	defer slow.Stop()
	// Writers never block on the slow watcher.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			if _, err := r.Create(ctx, configMap("", fmt.Sprintf("cm%02d", i), nil, nil), metav1.CreateOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writers blocked on a watcher that does not read")
	}
	var types []watch.EventType
	for ev := range slow.ResultChan() {
		types = append(types, ev.Type)
		if ev.Type == watch.Error {
			err := apierrors.FromObject(ev.Object)
			if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "too old resource version") {
				t.Errorf("ERROR event %v, want 410 too old resource version", err)
			}
		}
	}
	want := []watch.EventType{watch.Added, watch.Added, watch.Added, watch.Added, watch.Added, watch.Error}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("events of the slow watcher (-want +got):\n%s", diff)
	}
}

func TestConcurrentWriters(t *testing.T) {
	c := NewClient()
	ctx := t.Context()
	r := c.Resource(configMaps).Namespace("ns")
	w := must(r.Watch(ctx, metav1.ListOptions{}))(t)
	defer w.Stop()
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for j := range each {
				name := fmt.Sprintf("w%d-%d", i, j)
				if _, err := r.Create(ctx, configMap("", name, nil, nil), metav1.CreateOptions{}); err != nil {
					t.Error(err)
				}
				patch := []byte(`{"data":{"n":"1"}}`)
				if _, err := r.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Error(err)
				}
				if _, err := r.List(ctx, metav1.ListOptions{Limit: 3}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	last := uint64(0)
	for range writers * each * 2 {
		ev := <-w.ResultChan()
		var rv uint64
		fmt.Sscan(ev.Object.(metav1.Object).GetResourceVersion(), &rv)
		if rv <= last {
			t.Fatalf("event resourceVersion %d after %d, want increasing", rv, last)
		}
		last = rv
	}
	if last != writers*each*2 {
		t.Errorf("last resourceVersion %d, want one per write, %d", last, writers*each*2)
	}
}

func TestBuiltinNameRules(t *testing.T) {
	c := NewClient()
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	role := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": name},
		}}
	}
	must(c.Resource(roles).Create(t.Context(), role("system:controller:x"), metav1.CreateOptions{}))(t)
	_, err := c.Resource(roles).Create(t.Context(), role("a/b"), metav1.CreateOptions{})
	wantReason(t, err, metav1.StatusReasonInvalid, "may not contain '/'")
}
