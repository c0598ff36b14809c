package crcache

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// countingTransport counts the list and watch requests of configmaps.
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    int
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps") {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return c.next.RoundTrip(req)
}

func (c *countingTransport) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// startCache starts a crcache on env, counting configmap lists and
// watches; it stops with the test.
func startCache(t *testing.T, env *testenv.Env, o Options) (*Cache, *countingTransport) {
	t.Helper()
	cfg := restConfigOf(env)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{next: hc.Transport}
	hc.Transport = ct
	c, err := newCache(cfg, cache.Options{HTTPClient: hc}, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}
	return c, ct
}

// Reads of one kind as the scheme's type, Unstructured and
// PartialObjectMetadata share one store, filled by one list and watch
// (controller-runtime's cache keeps three).
func TestOneStorePerKind(t *testing.T) {
	env := testenv.Shared(t)
	ctx := context.Background()
	c, requests := startCache(t, env, Options{})
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "extension-apiserver-authentication"}, &cm); err != nil {
		t.Fatal(err)
	}
	var meta metav1.PartialObjectMetadataList
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, &meta); err != nil {
		t.Fatal(err)
	}
	var u unstructured.UnstructuredList
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, &u); err != nil {
		t.Fatal(err)
	}
	if len(meta.Items) == 0 || len(meta.Items) != len(u.Items) {
		t.Fatalf("metadata list has %d items, unstructured %d", len(meta.Items), len(u.Items))
	}
	if n := len(c.resources); n != 1 {
		t.Errorf("%d resources for one kind", n)
	}
	if n := requests.count(); n != 1 {
		t.Errorf("%d configmap lists and watches, want 1", n)
	}
}

// recorder is a handler recording the names it sees, by event, and the
// objects it got in another form than PartialObjectMetadata.
type recorder struct {
	mu        sync.Mutex
	events    []string
	wrongForm []string
}

func (r *recorder) add(e string, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := obj.(*metav1.PartialObjectMetadata); !ok {
		r.wrongForm = append(r.wrongForm, fmt.Sprintf("%T", obj))
	}
	r.events = append(r.events, e+" "+obj.(client.Object).GetName())
}

func (r *recorder) has(e string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, e)
}

// metaWatch is a namespace of its own and a handler of a metadata-only
// informer of ConfigMaps, recording what it sees.
type metaWatch struct {
	t      *testing.T
	ctx    context.Context
	direct client.Client
	ns     string
	rec    *recorder
}

func newMetaWatch(t *testing.T, ctx context.Context, env *testenv.Env, c *Cache, ns string) *metaWatch {
	t.Helper()
	direct, err := client.New(restConfigOf(env), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	inf, err := c.GetInformer(ctx, meta)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rec.add("add", obj) },
		UpdateFunc: func(_, obj any) { rec.add("update", obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			rec.add("delete", obj)
		},
	}); err != nil {
		t.Fatal(err)
	}
	return &metaWatch{t: t, ctx: ctx, direct: direct, ns: ns, rec: rec}
}

func (w *metaWatch) create(name string) {
	w.t.Helper()
	if err := w.direct.Create(w.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *metaWatch) delete(name string) {
	w.t.Helper()
	if err := w.direct.Delete(w.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}); err != nil {
		w.t.Fatal(err)
	}
}

// waitFor waits until the handler has seen event ("add NAME").
func (w *metaWatch) waitFor(event string) {
	w.t.Helper()
	for !w.rec.has(event) {
		select {
		case <-w.ctx.Done():
			w.t.Fatalf("timed out waiting for %s", event)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A metadata-only store becomes one of whole objects when a typed read
// comes; a handler registered before keeps getting every event, in the
// metadata form it asked for.
func TestUpgradeKeepsHandlers(t *testing.T) {
	env := testenv.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, requests := startCache(t, env, Options{})
	w := newMetaWatch(t, ctx, env, c, "upgrade")
	w.create("before")
	w.waitFor("add before")
	// The typed read upgrades the store.
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "before"}, &cm); err != nil {
		t.Fatal(err)
	}
	w.create("after")
	w.waitFor("add after")
	w.delete("before")
	w.waitFor("delete before")
	if len(w.rec.wrongForm) > 0 {
		t.Errorf("the handler got objects not in its form: %v", w.rec.wrongForm)
	}
	// Two lists and watches: the metadata-only one, then the one of whole
	// objects.
	if n := requests.count(); n != 2 {
		t.Errorf("%d configmap lists and watches, want 2", n)
	}
}

// The upgrade of a metadata-only store misses nothing when the connection
// fails around it: every watch cut, connections refused for a while, then
// slow responses while the store of whole objects lists.
func TestUpgradeUnderFaults(t *testing.T) {
	env := testenv.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := faultproxy.NewForTest(t, faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
	cfg := &rest.Config{Host: p.URL(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: p.CAData()}}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCache(cfg, cache.Options{HTTPClient: hc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Start(cctx) }()
	defer func() {
		stop()
		<-done
		// The proxy's Close waits for the client's idle connections.
		hc.CloseIdleConnections()
	}()
	w := newMetaWatch(t, ctx, env, c, "upgrade-faults")
	w.create("before")
	w.waitFor("add before")

	// Cut every watch and refuse connections for 2 s; changes go on.
	p.Down(2 * time.Second)
	p.CutAll()
	w.create("during")
	w.delete("before")
	// The typed read upgrades the store while the server is unreachable,
	// then slow.
	p.Delay(200 * time.Millisecond)
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "during"}, &cm); err != nil {
		t.Fatal(err)
	}
	p.Delay(0)
	w.create("after")
	for _, e := range []string{"add during", "delete before", "add after"} {
		w.waitFor(e)
	}
}

// restConfigOf is client-go's configuration of env's admin.
func restConfigOf(env *testenv.Env) *rest.Config {
	return &rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}
}
