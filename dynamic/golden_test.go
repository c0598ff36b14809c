package dynamic

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/rest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// recorder is an API server stand-in that records each request in a
// canonical text form and answers with a fixed object.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	last string
	body string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"}}`}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.last = canonicalRequest(req, b)
		body := r.body
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Get("watch") == "true" {
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(r.Close)
	return r
}

// canonicalRequest renders what goes on the wire: method, path, sorted
// query, Accept, Content-Type and body.
func canonicalRequest(req *http.Request, body []byte) string {
	q := req.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var qs []string
	for _, k := range keys {
		for _, v := range q[k] {
			qs = append(qs, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	return fmt.Sprintf("%s %s\nquery: %s\naccept: %s\ncontent-type: %s\nbody: %s\n",
		req.Method, req.URL.EscapedPath(), strings.Join(qs, "&"), req.Header.Get("Accept"), req.Header.Get("Content-Type"), string(body))
}

// newRecordingClient is a DynamicClient, without rate limit, over a new
// recorder.
func newRecordingClient(t *testing.T) (*recorder, *DynamicClient) {
	t.Helper()
	rec := newRecorder(t)
	rc, err := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return rec, New(rc)
}

func (r *recorder) lastRequest() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func testObject(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "web"}},
		"data":     map[string]any{"k": "v"},
	}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

type target struct {
	name   string
	gvr    schema.GroupVersionResource
	ns     string
	apiVer string
	kind   string
	sub    []string
}

func TestGoldenRequests(t *testing.T) {
	rec := newRecorder(t)
	rc, err := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := New(rc)
	ctx := context.Background()
	targets := []target{
		{name: "core-namespaced", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ns: "ns", apiVer: "v1", kind: "ConfigMap"},
		{name: "core-cluster", gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, apiVer: "v1", kind: "Namespace"},
		{name: "grouped-namespaced", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, ns: "prod", apiVer: "apps/v1", kind: "Deployment"},
		{name: "grouped-cluster", gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, apiVer: "rbac.authorization.k8s.io/v1", kind: "ClusterRole"},
		{name: "grouped-namespaced-scale", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, ns: "prod", apiVer: "autoscaling/v1", kind: "Scale", sub: []string{"scale"}},
	}
	for _, tg := range targets {
		var ri ResourceInterface = c.Resource(tg.gvr)
		if tg.ns != "" {
			ri = c.Resource(tg.gvr).Namespace(tg.ns)
		}
		obj := testObject(tg.apiVer, tg.kind, tg.ns, "x")
		calls := []struct {
			verb string
			do   func() error
		}{
			{"create", func() error {
				_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "m", DryRun: []string{"All"}}, tg.sub...)
				return err
			}},
			{"update", func() error {
				_, err := ri.Update(ctx, obj, metav1.UpdateOptions{FieldValidation: "Strict"}, tg.sub...)
				return err
			}},
			{"get", func() error {
				_, err := ri.Get(ctx, "x", metav1.GetOptions{ResourceVersion: "0"}, tg.sub...)
				return err
			}},
			{"patch-merge", func() error {
				_, err := ri.Patch(ctx, "x", types.MergePatchType, []byte(`{"data":{"k":"v2"}}`), metav1.PatchOptions{FieldManager: "m"}, tg.sub...)
				return err
			}},
			{"patch-json", func() error {
				_, err := ri.Patch(ctx, "x", types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/k","value":"v3"}]`), metav1.PatchOptions{}, tg.sub...)
				return err
			}},
			{"patch-strategic", func() error {
				_, err := ri.Patch(ctx, "x", types.StrategicMergePatchType, []byte(`{"data":{"k":"v4"}}`), metav1.PatchOptions{}, tg.sub...)
				return err
			}},
			{"apply", func() error {
				_, err := ri.Apply(ctx, "x", obj, metav1.ApplyOptions{FieldManager: "kdyn", Force: true}, tg.sub...)
				return err
			}},
			{"delete", func() error {
				return ri.Delete(ctx, "x", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground), GracePeriodSeconds: ptr.To[int64](0)}, tg.sub...)
			}},
		}
		if len(tg.sub) == 0 {
			calls = append(calls,
				struct {
					verb string
					do   func() error
				}{"update-status", func() error { _, err := ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); return err }},
				struct {
					verb string
					do   func() error
				}{"apply-status", func() error {
					_, err := ri.ApplyStatus(ctx, "x", obj, metav1.ApplyOptions{FieldManager: "kdyn"})
					return err
				}},
				struct {
					verb string
					do   func() error
				}{"list", func() error {
					_, err := ri.List(ctx, metav1.ListOptions{LabelSelector: "app=web", Limit: 500, Continue: "abc"})
					return err
				}},
				struct {
					verb string
					do   func() error
				}{"watch", func() error {
					w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: "42", AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](300)})
					if err == nil {
						for range w.ResultChan() {
						}
					}
					return err
				}},
				struct {
					verb string
					do   func() error
				}{"delete-collection", func() error {
					return ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"})
				}},
			)
		}
		for _, call := range calls {
			t.Run(tg.name+"/"+call.verb, func(t *testing.T) {
				if err := call.do(); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, tg.name+"-"+call.verb, rec.lastRequest())
			})
		}
	}
}

func TestArgumentValidation(t *testing.T) {
	rec := newRecorder(t)
	rc, _ := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	c := New(rc)
	ctx := context.Background()
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"get empty name", func() error { _, err := c.Resource(cm).Namespace("ns").Get(ctx, "", metav1.GetOptions{}); return err }, "name is required"},
		{"get slash name", func() error {
			_, err := c.Resource(cm).Namespace("ns").Get(ctx, "a/b", metav1.GetOptions{})
			return err
		}, `invalid resource name "a/b"`},
		{"slash namespace", func() error { _, err := c.Resource(cm).Namespace("a/b").List(ctx, metav1.ListOptions{}); return err }, `invalid namespace "a/b"`},
		{"delete empty", func() error { return c.Resource(cm).Namespace("ns").Delete(ctx, "", metav1.DeleteOptions{}) }, "name is required"},
		{"update nameless", func() error {
			_, err := c.Resource(cm).Namespace("ns").Update(ctx, &unstructured.Unstructured{Object: map[string]any{}}, metav1.UpdateOptions{})
			return err
		}, "name is required"},
		{"apply with managedFields", func() error {
			obj := testObject("v1", "ConfigMap", "ns", "x")
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "m"}})
			_, err := c.Resource(cm).Namespace("ns").Apply(ctx, "x", obj, metav1.ApplyOptions{FieldManager: "m"})
			return err
		}, "cannot apply an object with managedFields"},
		{"create subresource nameless", func() error {
			_, err := c.Resource(cm).Namespace("ns").Create(ctx, &unstructured.Unstructured{Object: map[string]any{}}, metav1.CreateOptions{}, "status")
			return err
		}, "name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.mu.Lock()
			rec.last = ""
			rec.mu.Unlock()
			err := tt.err()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if got := rec.lastRequest(); got != "" {
				t.Fatalf("a request was sent: %s", got)
			}
		})
	}
}

func TestListItemsGetKindFromList(t *testing.T) {
	rec := newRecorder(t)
	rec.body = `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"7","continue":"next"},"items":[
		{"metadata":{"name":"a"},"data":{"x":"1"}},
		{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]}`
	rc, _ := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	l, err := New(rc).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.GetResourceVersion() != "7" || l.GetContinue() != "next" || len(l.Items) != 2 {
		t.Fatalf("list = %+v", l)
	}
	for _, it := range l.Items {
		if it.GetKind() != "ConfigMap" || it.GetAPIVersion() != "v1" {
			t.Errorf("item %s: apiVersion %q kind %q", it.GetName(), it.GetAPIVersion(), it.GetKind())
		}
	}
	if v, _, _ := unstructured.NestedString(l.Items[0].Object, "data", "x"); v != "1" {
		t.Errorf("item data = %v", l.Items[0].Object)
	}
}
