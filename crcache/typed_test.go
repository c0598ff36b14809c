package crcache

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/integration/testenv"
)

// acceptRecorder records the Accept header of configmap lists and watches.
type acceptRecorder struct {
	next    http.RoundTripper
	mu      sync.Mutex
	accepts []string
}

func (a *acceptRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps") {
		a.mu.Lock()
		a.accepts = append(a.accepts, req.Header.Get("Accept"))
		a.mu.Unlock()
	}
	return a.next.RoundTrip(req)
}

// A built-in kind is stored as the scheme's Go type, decoded from
// protobuf: typed reads equal the server's object (less managedFields),
// with a ByObject transform applied to the typed object; reads are the
// caller's own unless UnsafeDisableDeepCopy, in both the decoded and the
// compact store; Unstructured and metadata reads of the same store equal
// the server's too.
func TestTypedStores(t *testing.T) {
	env := testenv.Shared(t)
	ctx := t.Context()
	direct, err := client.New(restConfigOf(env), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("crcache-typed-%d", time.Now().UnixNano())
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	src := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typed", Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"note": "<&>"}},
		Data:       map[string]string{"k": "v"},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 255}},
	}
	if err := direct.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	transform := func(o any) (any, error) {
		cm, ok := o.(*corev1.ConfigMap)
		if !ok {
			return nil, fmt.Errorf("transform got %T", o)
		}
		cm.Labels["transformed"] = "yes"
		return cm, nil
	}
	// The server's object as the cache should hold it.
	var want corev1.ConfigMap
	if err := direct.Get(ctx, client.ObjectKeyFromObject(src), &want); err != nil {
		t.Fatal(err)
	}
	want.ManagedFields = nil
	want.Labels["transformed"] = "yes"
	wantU, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&want)
	if err != nil {
		t.Fatal(err)
	}

	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compact=%v", compact), func(t *testing.T) {
			cfg := restConfigOf(env)
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ar := &acceptRecorder{next: hc.Transport}
			hc.Transport = ar
			c, err := newCache(cfg, cache.Options{HTTPClient: hc, DefaultNamespaces: map[string]cache.Config{ns: {}},
				ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {Transform: transform}}}, Options{Compact: compact})
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- c.Start(cctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Start: %v", err)
				}
			}()
			if !c.WaitForCacheSync(ctx) {
				t.Fatal("the cache did not start")
			}
			key := client.ObjectKeyFromObject(src)
			var got corev1.ConfigMap
			if err := c.Get(ctx, key, &got); err != nil {
				t.Fatal(err)
			}
			if got.Kind != "ConfigMap" || got.APIVersion != "v1" {
				t.Errorf("typed read without its kind: %q %q", got.APIVersion, got.Kind)
			}
			got.TypeMeta = metav1.TypeMeta{}
			if !equality.Semantic.DeepEqual(&got, &want) {
				t.Fatalf("typed read\n%+v\nwant\n%+v", got, want)
			}
			// The caller's own: changing it changes no later read.
			got.Labels["mine"] = "x"
			got.BinaryData["bin"][0] = 9
			var again corev1.ConfigMap
			if err := c.Get(ctx, key, &again); err != nil {
				t.Fatal(err)
			}
			if again.Labels["mine"] != "" || again.BinaryData["bin"][0] != 0 {
				t.Fatal("a change to a read object reached the cache")
			}
			// UnsafeDisableDeepCopy shares the stored object (decoded
			// store) or decodes a fresh one (compact).
			var l1, l2 corev1.ConfigMapList
			for _, l := range []*corev1.ConfigMapList{&l1, &l2} {
				if err := c.List(ctx, l, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
					t.Fatal(err)
				}
			}
			shared := reflect.ValueOf(l1.Items[0].Labels).Pointer() == reflect.ValueOf(l2.Items[0].Labels).Pointer()
			if shared == compact {
				t.Errorf("UnsafeDisableDeepCopy reads share the stored maps: %v", shared)
			}

			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			if err := c.Get(ctx, key, u); err != nil {
				t.Fatal(err)
			}
			delete(u.Object, "apiVersion")
			delete(u.Object, "kind")
			if !equality.Semantic.DeepEqual(u.Object, wantU) {
				t.Fatalf("unstructured read\n%v\nwant\n%v", u.Object, wantU)
			}
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			if err := c.Get(ctx, key, m); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(m.ObjectMeta, want.ObjectMeta) {
				t.Fatalf("metadata read %+v, want %+v", m.ObjectMeta, want.ObjectMeta)
			}
			ar.mu.Lock()
			defer ar.mu.Unlock()
			for _, a := range ar.accepts {
				if a != "application/vnd.kubernetes.protobuf" {
					t.Errorf("configmaps asked for as %q, not protobuf", a)
				}
			}
			if len(ar.accepts) == 0 {
				t.Error("no configmap list or watch seen")
			}
		})
	}
}
