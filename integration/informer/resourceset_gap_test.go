package informer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

// hideGroup answers /apis without one group while told to: what a server
// coming back from a restart answers before it serves its custom
// resources again (measured at 250,000 objects; a real server will not
// do it on demand).
type hideGroup struct {
	group  string
	hiding atomic.Bool
	mu     sync.Mutex
	hidden int // answers given without the group
}

func (h *hideGroup) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/apis" && h.hiding.Load() {
			// A whole answer to change, not a 304 for the cached one.
			r = r.Clone(r.Context())
			r.Header.Del("If-None-Match")
			r.Header.Del("If-Modified-Since")
		}
		resp, err := rt.RoundTrip(r)
		if err != nil || r.URL.Path != "/apis" || !h.hiding.Load() || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err == nil {
			if items, ok := doc["items"].([]any); ok {
				doc["items"] = slices.DeleteFunc(items, func(it any) bool {
					md, _ := it.(map[string]any)["metadata"].(map[string]any)
					return md["name"] == h.group
				})
				body, _ = json.Marshal(doc)
				h.mu.Lock()
				h.hidden++
				h.mu.Unlock()
			}
		}
		resp.Header.Del("ETag")
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return resp, nil
	})
}

func (h *hideGroup) answers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hidden
}

// While discovery lacks a custom resource whose CRD is still there, the
// set keeps its member (no ResourceGone deletes, no second list); once the
// CRD is deleted, it releases it.
func TestResourceSetKeepsACustomResourceDiscoveryLacks(t *testing.T) {
	env := testenv.Shared(t)
	admin := client(t, env.RESTConfig(testenv.Admin))
	group := "gap.kdyn.test"
	ns := newNamespace(t, admin)
	const n = 10
	gvr := createThings(t, admin, group, ns, n)
	t.Cleanup(func() {
		_ = admin.Resource(crdGVR).Delete(context.Background(), "things."+group, metav1.DeleteOptions{})
	})
	hide := &hideGroup{group: group}
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = hide.wrap
	mapper, err := restmapper.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(client(t, env.RESTConfig(testenv.Admin)), informer.FactoryOptions{Namespace: ns})
	set, counts := runThingsSet(t, f, mapper, gvr, 200*time.Millisecond)
	gone, adds := &counts.gone, &counts.adds

	hide.hiding.Store(true)
	start := time.Now()
	for hide.answers() < 5 {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the set did not read discovery again")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !slices.Contains(set.Resources(), gvr) || gone.Load() != 0 || adds.Load() != n {
		t.Fatalf("with discovery lacking %s but its CRD there: in the set %v, %d ResourceGone deletes, %d adds (want true, 0, %d)",
			gvr, slices.Contains(set.Resources(), gvr), gone.Load(), adds.Load(), n)
	}

	if err := admin.Resource(crdGVR).Delete(t.Context(), "things."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for slices.Contains(set.Resources(), gvr) {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the set kept the member after its CRD was deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("released %v after the CRD's deletion, with %d ResourceGone deletes", time.Since(start).Round(time.Millisecond), gone.Load())
}

// createThings creates the CRD things.<group> and n Things in ns (retrying
// until the new CRD is served), and returns the Things' resource.
func createThings(t *testing.T, admin *dynamic.DynamicClient, group, ns string, n int) schema.GroupVersionResource {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
	if _, err := admin.Resource(crdGVR).Create(t.Context(), thingsCRD(group), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < n; {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Thing", "metadata": map[string]any{"name": fmt.Sprintf("t%d", i), "namespace": ns}}}
		if _, err := admin.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // the CRD is not served yet
			continue
		}
		i++
	}
	return gvr
}

// setCounts are the events a counting ResourceSet handler saw.
type setCounts struct{ gone, adds atomic.Int64 }

// runThingsSet runs, until the test ends, a ResourceSet of gvr alone with
// mapper and f, counting its adds and ResourceGone deletes, and waits for
// its sync.
func runThingsSet(t *testing.T, f *informer.Factory, mapper *restmapper.Mapper, gvr schema.GroupVersionResource, refresh time.Duration) (*informer.ResourceSet, *setCounts) {
	t.Helper()
	c := &setCounts{}
	set := informer.NewResourceSet(f, mapper, informer.ResourceSetOptions{
		Keep:            func(r *discovery.Resource) bool { return r.GVR() == gvr },
		RefreshInterval: refresh,
		Handler: func(e informer.Event) {
			switch {
			case e.ResourceGone:
				c.gone.Add(1)
			case e.Type == "ADDED":
				c.adds.Add(1)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	var run errgroup.Group
	run.Go(func() error { return f.Run(ctx) })
	run.Go(func() error { return set.Run(ctx) })
	t.Cleanup(func() { cancel(); _ = run.Wait() })
	if err := set.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return set, c
}
