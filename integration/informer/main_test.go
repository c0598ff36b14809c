// Package informer_test proves the informer against a real kube-apiserver
// v1.37.2: convergence, restarts, compaction, streaming lists and resource
// sets.
package informer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/rest"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

var (
	cmGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// gate is a transport that can hold every request (and cut open streams)
// to play a network outage between the informer and the server.
type gate struct {
	mu     sync.Mutex
	closed bool
	open   chan struct{}
	cancel []context.CancelFunc
	urls   []string
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		g.mu.Lock()
		g.urls = append(g.urls, r.URL.RequestURI())
		closed, open := g.closed, g.open
		g.mu.Unlock()
		if closed {
			select {
			case <-open:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
		ctx, cancel := context.WithCancel(r.Context())
		g.mu.Lock()
		g.cancel = append(g.cancel, cancel)
		g.mu.Unlock()
		return rt.RoundTrip(r.WithContext(ctx))
	})
}

// cut closes the gate and breaks every request in flight.
func (g *gate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.open = make(chan struct{})
	for _, c := range g.cancel {
		c()
	}
	g.cancel = nil
}

func (g *gate) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = false
	close(g.open)
}

func (g *gate) requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.urls...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func client(t *testing.T, cfg *rest.Config) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one test (left behind).
func newNamespace(t *testing.T, c dynamic.Interface) string {
	t.Helper()
	return testenv.NewNamespace(t, c, "inf")
}

func configMap(ns, name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"v": value}}}
}

// tracker is a handler that keeps its own view from events only, to check
// that every change was delivered.
type tracker struct {
	mu      sync.Mutex
	objs    map[string]string // key → data.v
	deletes map[string]int
	unknown int
}

// createAll creates n ConfigMaps made by mk(i) in ns.
func createAll(t *testing.T, c dynamic.Interface, ns string, n int, mk func(i int) *unstructured.Unstructured) {
	t.Helper()
	for i := range n {
		if _, err := c.Resource(cmGVR).Namespace(ns).Create(t.Context(), mk(i), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// runFactory runs f until ctx is done or the test ends; the test's
// cleanup waits until every informer of f has stopped.
func runFactory(t *testing.T, ctx context.Context, f *informer.Factory) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// startTracked adds a tracker to inf, runs f (until the end of the test)
// and waits for it to sync.
func startTracked(t *testing.T, f *informer.Factory, inf *informer.Informer[*unstructured.Unstructured]) *tracker {
	t.Helper()
	tr := newTracker()
	if _, err := inf.AddEventHandler(tr.handler()); err != nil {
		t.Fatal(err)
	}
	runFactory(t, t.Context(), f)
	if err := f.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return tr
}

func newTracker() *tracker { return &tracker{objs: map[string]string{}, deletes: map[string]int{}} }

func (tr *tracker) handler() informer.HandlerFuncs[*unstructured.Unstructured] {
	return informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(o *unstructured.Unstructured, _ bool) { tr.set(o) },
		UpdateFunc: func(_, o *unstructured.Unstructured) {
			tr.set(o)
		},
		DeleteFunc: func(d informer.Deleted[*unstructured.Unstructured]) {
			tr.mu.Lock()
			defer tr.mu.Unlock()
			delete(tr.objs, informer.Key(d.Obj))
			tr.deletes[informer.Key(d.Obj)]++
			if d.FinalStateUnknown {
				tr.unknown++
			}
		},
	}
}

func (tr *tracker) set(o *unstructured.Unstructured) {
	v, _, _ := unstructured.NestedString(o.Object, "data", "v")
	tr.mu.Lock()
	tr.objs[informer.Key(o)] = v
	tr.mu.Unlock()
}

// serverState lists the namespace fresh from the server: each
// ConfigMap's data.v by key.
func serverState(t *testing.T, c dynamic.Interface, ns string) map[string]string {
	t.Helper()
	return serverObjects(t, c, ns, func(o *unstructured.Unstructured) string {
		v, _, _ := unstructured.NestedString(o.Object, "data", "v")
		return v
	})
}

// serverObjects lists the namespace fresh from the server and maps each
// ConfigMap's key to field(object), leaving out the one the control plane
// creates.
func serverObjects(t *testing.T, c dynamic.Interface, ns string, field func(*unstructured.Unstructured) string) map[string]string {
	t.Helper()
	l, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range l.Items {
		o := &l.Items[i]
		if strings.HasPrefix(o.GetName(), "kube-root-ca") {
			continue
		}
		out[o.GetNamespace()+"/"+o.GetName()] = field(o)
	}
	return out
}

func cacheState(inf *informer.Informer[*unstructured.Unstructured]) map[string]string {
	out := map[string]string{}
	for _, o := range inf.Store().List() {
		v, _, _ := unstructured.NestedString(o.Object, "data", "v")
		out[informer.Key(o)] = v
	}
	return out
}

// converge waits until the cache and the handler's view both equal the
// server's state.
func converge(t *testing.T, c dynamic.Interface, ns string, inf *informer.Informer[*unstructured.Unstructured], tr *tracker) {
	t.Helper()
	want := serverState(t, c, ns)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := cacheState(inf)
		tr.mu.Lock()
		view := fmt.Sprint(sortedMap(tr.objs))
		tr.mu.Unlock()
		if fmt.Sprint(sortedMap(got)) == fmt.Sprint(sortedMap(want)) && view == fmt.Sprint(sortedMap(want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache did not converge: %d cached, %d handler view, %d on the server", len(got), len(tr.objs), len(want))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sortedMap(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// churn makes n random creates, updates and deletes in ns and returns how
// many objects it deleted.
func churn(t *testing.T, c dynamic.Interface, ns string, n int, prefix string) int {
	t.Helper()
	cms := c.Resource(cmGVR).Namespace(ns)
	// Start from what exists, so deletes also hit objects a watcher knew.
	live := []string{}
	for key := range serverState(t, c, ns) {
		_, name, _ := strings.Cut(key, "/")
		live = append(live, name)
	}
	sort.Strings(live)
	deleted := 0
	for i := 0; i < n; i++ {
		switch {
		case len(live) < 5 || rand.IntN(3) == 0:
			name := fmt.Sprintf("%s-%04d", prefix, i)
			if _, err := cms.Create(t.Context(), configMap(ns, name, "0"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			live = append(live, name)
		case rand.IntN(2) == 0:
			name := live[rand.IntN(len(live))]
			p := []byte(fmt.Sprintf(`{"data":{"v":"%d"}}`, i))
			if _, err := cms.Patch(t.Context(), name, "application/merge-patch+json", p, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		default:
			j := rand.IntN(len(live))
			if err := cms.Delete(t.Context(), live[j], metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			live = append(live[:j], live[j+1:]...)
			deleted++
		}
	}
	return deleted
}
