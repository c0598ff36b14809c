// Package wire_test proves kdyn's dynamic client sends the same requests as
// client-go's for every verb: method, path, query, Accept, Content-Type and
// body, byte for byte.
package wire_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	cgdynamic "k8s.io/client-go/dynamic"
	cgrest "k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
)

type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) handler(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
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
	r.mu.Lock()
	r.reqs = append(r.reqs, fmt.Sprintf("%s %s?%s\naccept: %s\ncontent-type: %s\nbody: %s", req.Method, req.URL.EscapedPath(),
		strings.Join(qs, "&"), req.Header.Get("Accept"), req.Header.Get("Content-Type"), b))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		return
	}
	fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns"}}`)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// calls runs every verb through a ResourceInterface-shaped set of funcs.
type iface interface {
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error)
	UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions) (*unstructured.Unstructured, error)
	Delete(ctx context.Context, name string, options metav1.DeleteOptions, subresources ...string) error
	DeleteCollection(ctx context.Context, options metav1.DeleteOptions, listOptions metav1.ListOptions) error
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
	Apply(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions, subresources ...string) (*unstructured.Unstructured, error)
	ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, options metav1.ApplyOptions) (*unstructured.Unstructured, error)
}

func exercise(t *testing.T, ri iface, watch func() error) {
	t.Helper()
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns", "labels": map[string]any{"a": "b"}}, "data": map[string]any{"k": "v"}}}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "m", DryRun: []string{"All"}, FieldValidation: "Strict"})
	must(err)
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{}, "status")
	must(err)
	_, err = ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: "m"})
	must(err)
	_, err = ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	must(err)
	_, err = ri.Get(ctx, "x", metav1.GetOptions{ResourceVersion: "0"})
	must(err)
	_, err = ri.Get(ctx, "x", metav1.GetOptions{}, "scale")
	must(err)
	_, err = ri.List(ctx, metav1.ListOptions{LabelSelector: "a=b", FieldSelector: "metadata.name=x", Limit: 500, Continue: "c",
		ResourceVersion: "10", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr.To[int64](30)})
	must(err)
	for _, pt := range []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType} {
		_, err = ri.Patch(ctx, "x", pt, []byte(`{"data":{"k":"v2"}}`), metav1.PatchOptions{FieldManager: "m", Force: ptr.To(false)})
		must(err)
	}
	_, err = ri.Patch(ctx, "x", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status")
	must(err)
	_, err = ri.Apply(ctx, "x", obj, metav1.ApplyOptions{FieldManager: "kdyn", Force: true, DryRun: []string{"All"}})
	must(err)
	_, err = ri.ApplyStatus(ctx, "x", obj, metav1.ApplyOptions{FieldManager: "kdyn"})
	must(err)
	must(ri.Delete(ctx, "x", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](5), PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
		Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("u1")), ResourceVersion: ptr.To("7")}}))
	must(ri.Delete(ctx, "x", metav1.DeleteOptions{}))
	must(ri.DeleteCollection(ctx, metav1.DeleteOptions{OrphanDependents: ptr.To(true)}, metav1.ListOptions{LabelSelector: "a=b"}))
	must(watch())
}

func TestSameRequestsAsClientGo(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(rec.handler))
	defer srv.Close()
	targets := []struct {
		name string
		gvr  schema.GroupVersionResource
		ns   string
	}{
		{"core namespaced", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns"},
		{"core all namespaces", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, ""},
		{"grouped namespaced", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "prod"},
		{"grouped cluster", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, ""},
	}
	cg, err := cgdynamic.NewForConfig(&cgrest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	kd, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	watchOpts := metav1.ListOptions{ResourceVersion: "42", AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](300),
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, LabelSelector: "a=b"}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			var cgri, kdri iface
			var cgw, kdw func() error
			if tg.ns == "" {
				r1, r2 := cg.Resource(tg.gvr), kd.Resource(tg.gvr)
				cgri, kdri = r1, r2
				cgw = func() error { w, err := r1.Watch(context.Background(), watchOpts); drain(w, err); return err }
				kdw = func() error { w, err := r2.Watch(context.Background(), watchOpts); drain(w, err); return err }
			} else {
				r1, r2 := cg.Resource(tg.gvr).Namespace(tg.ns), kd.Resource(tg.gvr).Namespace(tg.ns)
				cgri, kdri = r1, r2
				cgw = func() error { w, err := r1.Watch(context.Background(), watchOpts); drain(w, err); return err }
				kdw = func() error { w, err := r2.Watch(context.Background(), watchOpts); drain(w, err); return err }
			}
			exercise(t, cgri, cgw)
			want := rec.take()
			exercise(t, kdri, kdw)
			got := rec.take()
			if len(want) < 17 {
				t.Fatalf("only %d client-go requests recorded", len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("requests differ (-client-go +kdyn):\n%s", diff)
			}
		})
	}
}

func drain(w interface {
	Stop()
}, err error) {
	if err == nil && w != nil {
		w.Stop()
	}
}
