package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

func TestConfigMapVerbs(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	ctx := t.Context()
	cms := c.Resource(cmGVR).Namespace(ns)

	created, err := cms.Create(ctx, configMap(ns, "a", map[string]string{"app": "web"}, map[string]string{"k": "v"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetKind() != "ConfigMap" {
		t.Fatalf("created = %v", created.Object)
	}
	if _, err := cms.Create(ctx, configMap(ns, "a", nil, nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	gen := configMap(ns, "", nil, nil)
	gen.SetGenerateName("gen-")
	g, err := cms.Create(ctx, gen, metav1.CreateOptions{})
	if err != nil || !strings.HasPrefix(g.GetName(), "gen-") || len(g.GetName()) <= 4 {
		t.Fatalf("generateName: %v, %v", g, err)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("get = %v, %v", got, err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	got.Object["data"] = map[string]any{"k": "v2"}
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// created still carries the old resourceVersion: a stale update.
	created.Object["data"] = map[string]any{"k": "stale"}
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}
	p, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"m":"merged"}}`), metav1.PatchOptions{})
	if err != nil || p.Object["data"].(map[string]any)["m"] != "merged" {
		t.Fatalf("merge patch: %v, %v", p, err)
	}
	p, err = cms.Patch(ctx, "a", types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/k","value":"json"},{"op":"remove","path":"/data/m"}]`), metav1.PatchOptions{})
	if err != nil || p.Object["data"].(map[string]any)["k"] != "json" || p.Object["data"].(map[string]any)["m"] != nil {
		t.Fatalf("json patch: %v, %v", p, err)
	}
	if updated.GetResourceVersion() == p.GetResourceVersion() {
		t.Fatal("patches did not change the resourceVersion")
	}
	// dryRun=All changes nothing.
	dry := dynamic.WithDryRun(c).Resource(cmGVR).Namespace(ns)
	if _, err := dry.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"dry"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dry.Create(ctx, configMap(ns, "dry", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dry.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || after.Object["data"].(map[string]any)["k"] != "json" {
		t.Fatalf("after dry run: %v, %v", after, err)
	}
	if _, err := cms.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run create created: %v", err)
	}
	// DeleteCollection with a label selector.
	for i := 0; i < 3; i++ {
		if _, err := cms.Create(ctx, configMap(ns, fmt.Sprintf("sel-%d", i), map[string]string{"batch": "x"}, nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=x"}); err != nil {
		t.Fatal(err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Items {
		if strings.HasPrefix(it.GetName(), "sel-") {
			t.Fatalf("%s survived DeleteCollection", it.GetName())
		}
		if it.GetKind() != "ConfigMap" || it.GetAPIVersion() != "v1" {
			t.Fatalf("list item without kind: %v", it.Object)
		}
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestDeploymentStrategicMergePatch(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "nginx:1"},
					map[string]any{"name": "sidecar", "image": "envoy:1"},
				}}},
		},
	}}
	deploys := c.Resource(deployGVR).Namespace(ns)
	if _, err := deploys.Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Strategic merge patches the container named "app" and keeps the other.
	p, err := deploys.Patch(t.Context(), "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(p.Object, "spec", "template", "spec", "containers")
	if len(containers) != 2 || containers[0].(map[string]any)["image"] != "nginx:2" || containers[1].(map[string]any)["image"] != "envoy:1" {
		t.Fatalf("containers after strategic merge = %v", containers)
	}
	// A merge patch replaces the list wholesale.
	p, err = deploys.Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:3"}]}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ = unstructured.NestedSlice(p.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("containers after merge patch = %v", containers)
	}
	// Scale subresource of a built-in.
	scale, err := deploys.Get(t.Context(), "web", metav1.GetOptions{}, "scale")
	if err != nil || scale.GetKind() != "Scale" {
		t.Fatalf("scale = %v, %v", scale, err)
	}
}

func TestNamespaceClusterScoped(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	name := "cluster-" + randSuffix()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": map[string]any{"kdyn": "yes"}}}}
	if _, err := c.Resource(nsGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := c.Resource(nsGVR).List(t.Context(), metav1.ListOptions{LabelSelector: "kdyn=yes", FieldSelector: "metadata.name=" + name})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list = %v, %v", l, err)
	}
	if err := c.Resource(nsGVR).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without a controller manager the namespace stays Terminating.
	got, err := c.Resource(nsGVR).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || got.GetDeletionTimestamp() == nil {
		t.Fatalf("deleted namespace = %v, %v", got, err)
	}
	phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
	if phase != "Terminating" {
		t.Fatalf("phase = %q", phase)
	}
}

func widgetSpec(group string) crdSpec {
	return crdSpec{group: group, kind: "Widget", plural: "widgets", singular: "widget", shortNames: []string{"wdg"},
		namespaced: true, versions: []string{"v1"}, subresources: true, printerColumns: true}
}

func widget(group, ns, name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"replicas": replicas, "color": "red", "size": int64(3)},
	}}
}

func TestCRDSubresourcesApplyAndTables(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	group := uniqueGroup("widgets")
	createCRD(t, c, widgetSpec(group))
	ns := newNamespace(t, c)
	ctx := t.Context()
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	ws := c.Resource(gvr).Namespace(ns)

	w, err := ws.Create(ctx, widget(group, ns, "w1", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Status only changes through the status subresource.
	w.Object["status"] = map[string]any{"replicas": int64(2), "observedGeneration": w.GetGeneration()}
	st, err := ws.UpdateStatus(ctx, w, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(st.Object, "status", "replicas"); r != 2 {
		t.Fatalf("status after UpdateStatus = %v", st.Object["status"])
	}
	// Scale: get and update.
	scale, err := ws.Get(ctx, "w1", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); r != 2 {
		t.Fatalf("scale spec = %v", scale.Object["spec"])
	}
	_ = unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas")
	if _, err := ws.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	got, _ := ws.Get(ctx, "w1", metav1.GetOptions{})
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Fatalf("replicas after scale update = %d", r)
	}
	// ApplyStatus with its own field manager.
	statusApply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns}, "status": map[string]any{"replicas": int64(5)}}}
	as, err := ws.ApplyStatus(ctx, "w1", statusApply, metav1.ApplyOptions{FieldManager: "status-writer", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(as.Object, "status", "replicas"); r != 5 {
		t.Fatalf("status after ApplyStatus = %v", as.Object["status"])
	}

	// Server-side apply: a conflict between two managers.
	mine := widget(group, ns, "applied", 1)
	if _, err := ws.Apply(ctx, "applied", mine, metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
		t.Fatal(err)
	}
	theirs := widget(group, ns, "applied", 1)
	_ = unstructured.SetNestedField(theirs.Object, "blue", "spec", "color")
	_, err = ws.Apply(ctx, "applied", theirs, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("conflicting apply: %v, want a Conflict naming alice", err)
	}
	forced, err := ws.Apply(ctx, "applied", theirs, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if col, _, _ := unstructured.NestedString(forced.Object, "spec", "color"); col != "blue" {
		t.Fatalf("color after forced apply = %q", col)
	}
	withMF := forced.DeepCopy()
	if _, err := ws.Apply(ctx, "applied", withMF, metav1.ApplyOptions{FieldManager: "bob"}); err != dynamic.ErrManagedFieldsSet {
		t.Fatalf("apply with managedFields: %v", err)
	}

	// A Table list of the CRD shows its printer columns.
	tbl, err := c.Tables().Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{}, dynamic.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, cd := range tbl.ColumnDefinitions {
		cols = append(cols, cd.Name)
	}
	if strings.Join(cols, ",") != "Name,Color,Size" || len(tbl.Rows) != 2 {
		t.Fatalf("table columns %v, %d rows", cols, len(tbl.Rows))
	}
	// Rows are sorted by name: "applied" (blue, forced) then "w1" (red).
	if tbl.Rows[0].Cells[1] != "blue" || tbl.Rows[1].Cells[0] != "w1" || tbl.Rows[1].Cells[1] != "red" || tbl.Rows[1].Cells[2] != int64(3) {
		t.Fatalf("rows = %v / %v", tbl.Rows[0].Cells, tbl.Rows[1].Cells)
	}

	// Kind-based access through the mapper: namespace defaulting and scope.
	m, err := restmapper.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	mc := dynamic.NewMapped(c, m).WithDefaultNamespace(ns)
	noNS := widget(group, "", "mapped", 1)
	out, err := mc.Apply(ctx, noNS, metav1.ApplyOptions{FieldManager: "kdyn"})
	if err != nil || out.GetNamespace() != ns {
		t.Fatalf("mapped apply = %v, %v", out, err)
	}
	badNS := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x", "namespace": "oops"}}}
	if _, _, err := mc.ForObject(ctx, badNS); err == nil || !strings.Contains(err.Error(), "cluster-scoped") {
		t.Fatalf("cluster-scoped with namespace: %v", err)
	}
}

func TestForegroundDeletionWithoutControllerManager(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	cms := c.Resource(cmGVR).Namespace(ns)
	if _, err := cms.Create(t.Context(), configMap(ns, "owner", nil, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(t.Context(), "owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	// No garbage collector runs here, so the server leaves the object with
	// the foregroundDeletion finalizer and a deletionTimestamp.
	got, err := cms.Get(t.Context(), "owner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetDeletionTimestamp() == nil || len(got.GetFinalizers()) != 1 || got.GetFinalizers()[0] != metav1.FinalizerDeleteDependents {
		t.Fatalf("after foreground delete: deletionTimestamp=%v finalizers=%v", got.GetDeletionTimestamp(), got.GetFinalizers())
	}
	// Removing the finalizer (what the garbage collector would do) lets it go.
	if _, err := cms.Patch(t.Context(), "owner", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(t.Context(), "owner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after clearing the finalizer: %v", err)
	}
}

func TestWatchEventsAndBookmarks(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	cms := c.Resource(cmGVR).Namespace(ns)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion(), AllowWatchBookmarks: true, LabelSelector: "w=1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		_, _ = cms.Create(ctx, configMap(ns, "other", nil, nil), metav1.CreateOptions{}) // filtered out
		_, _ = cms.Create(ctx, configMap(ns, "x", map[string]string{"w": "1"}, nil), metav1.CreateOptions{})
		_, _ = cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"data":{"a":"b"}}`), metav1.PatchOptions{})
		_ = cms.Delete(ctx, "x", metav1.DeleteOptions{})
	}()
	var types_ []watch.EventType
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			continue
		}
		u := ev.Object.(*unstructured.Unstructured)
		if u.GetName() != "x" {
			t.Fatalf("selector let %s through", u.GetName())
		}
		types_ = append(types_, ev.Type)
		if len(types_) == 3 {
			break
		}
	}
	if fmt.Sprint(types_) != "[ADDED MODIFIED DELETED]" {
		t.Fatalf("events = %v", types_)
	}
	// Bookmarks: with sendInitialEvents the server ends the initial events
	// with an annotated bookmark.
	w2, err := cms.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true, SendInitialEvents: ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	for ev := range w2.ResultChan() {
		if ev.Type == watch.Bookmark {
			u := ev.Object.(*unstructured.Unstructured)
			if u.GetAnnotations()["k8s.io/initial-events-end"] != "true" || u.GetResourceVersion() == "" {
				t.Fatalf("bookmark = %v", u.Object)
			}
			return
		}
	}
	t.Fatal("no bookmark")
}

func TestListPaging1200(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	cms := c.Resource(cmGVR).Namespace(ns)
	const n = 1200
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := cms.Create(t.Context(), configMap(ns, fmt.Sprintf("cm-%05d", i), nil, map[string]string{"i": fmt.Sprint(i)}), metav1.CreateOptions{})
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	pages := 0
	for obj, err := range dynamic.Items(t.Context(), countingLister{cms, &pages}, metav1.ListOptions{}, dynamic.PageOptions{PageSize: 500}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, obj.GetName())
	}
	if len(names) != n || pages != 3 {
		t.Fatalf("%d names in %d pages", len(names), pages)
	}
	for i, name := range names {
		if name != fmt.Sprintf("cm-%05d", i) {
			t.Fatalf("item %d is %s: not in order", i, name)
		}
	}
	all, err := dynamic.ListAll(t.Context(), cms, metav1.ListOptions{}, dynamic.PageOptions{PageSize: 500})
	if err != nil || len(all.Items) != n || all.GetResourceVersion() == "" {
		t.Fatalf("ListAll: %d items, %v", len(all.Items), err)
	}

	// Metadata-only list and watch carry no data.
	md := c.Metadata().Resource(cmGVR).Namespace(ns)
	ml, err := md.List(t.Context(), metav1.ListOptions{Limit: 10})
	if err != nil || len(ml.Items) != 10 || ml.Kind != "PartialObjectMetadataList" {
		t.Fatalf("metadata list: %v %v", ml, err)
	}
	if ml.Items[0].Name != "cm-00000" || ml.Items[0].UID == "" {
		t.Fatalf("item = %+v", ml.Items[0])
	}
	raw, err := c.RESTClient().Get().Version("v1").Namespace(ns).Resource("configmaps").Param("limit", "1").
		Accept("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").DoRaw(t.Context())
	if err != nil || strings.Contains(string(raw), `"data"`) {
		t.Fatalf("metadata-only list carries data: %s", raw)
	}
	mw, err := md.Watch(t.Context(), metav1.ListOptions{ResourceVersion: ml.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Stop()
	if _, err := cms.Patch(t.Context(), "cm-00001", types.MergePatchType, []byte(`{"data":{"x":"y"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := <-mw.ResultChan()
	p, ok := ev.Object.(*metav1.PartialObjectMetadata)
	if !ok || ev.Type != watch.Modified || p.Name != "cm-00001" || p.Kind != "PartialObjectMetadata" {
		t.Fatalf("metadata watch event = %v %#v", ev.Type, ev.Object)
	}
}

type countingLister struct {
	dynamic.ResourceInterface
	pages *int
}

func (c countingLister) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	*c.pages++
	return c.ResourceInterface.List(ctx, opts)
}

func TestMetadataUsesProtobuf(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	ns := newNamespace(t, c)
	if _, err := c.Resource(cmGVR).Namespace(ns).Create(t.Context(), configMap(ns, "pb", nil, map[string]string{"k": "v"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ctypes []string
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				ctypes = append(ctypes, resp.Header.Get("Content-Type"))
			}
			return resp, err
		})
	}
	mc, err := dynamic.NewMetadataForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := mc.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(l.Items) == 0 {
		t.Fatalf("list: %v %v", l, err)
	}
	p, err := mc.Resource(cmGVR).Namespace(ns).Get(t.Context(), "pb", metav1.GetOptions{})
	if err != nil || p.Name != "pb" || p.UID == "" {
		t.Fatalf("get: %+v %v", p, err)
	}
	w, err := mc.Resource(cmGVR).Namespace(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.Resource(cmGVR).Namespace(ns).Patch(t.Context(), "pb", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	if pm, ok := ev.Object.(*metav1.PartialObjectMetadata); !ok || ev.Type != watch.Modified || pm.Name != "pb" {
		t.Fatalf("event %v %#v", ev.Type, ev.Object)
	}
	got := append([]string(nil), ctypes...)
	if _, err := mc.Resource(cmGVR).Namespace(ns).Get(t.Context(), "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("error answer: %v", err)
	}
	for _, ct := range got {
		if !strings.HasPrefix(ct, "application/vnd.kubernetes.protobuf") {
			t.Fatalf("content types %v: metadata requests should be answered in protobuf", got)
		}
	}
}
