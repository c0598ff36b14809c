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

	"github.com/kdyn/kdyn/informer"
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
	cfg := &rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}
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

// recorder is a handler recording the names it sees, by event.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) has(e string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.events, e)
}

// A metadata-only store becomes one of whole objects when a typed read
// comes; a handler registered before keeps getting every event, in the
// metadata form it asked for.
func TestUpgradeKeepsHandlers(t *testing.T) {
	env := testenv.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, requests := startCache(t, env, Options{})
	direct, err := client.New(&rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := "upgrade"
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
	var wrongForm []string
	var wmu sync.Mutex
	form := func(obj any) {
		if _, ok := obj.(*metav1.PartialObjectMetadata); !ok {
			wmu.Lock()
			wrongForm = append(wrongForm, fmt.Sprintf("%T", obj))
			wmu.Unlock()
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { form(obj); rec.add("add " + obj.(client.Object).GetName()) },
		UpdateFunc: func(_, obj any) { form(obj); rec.add("update " + obj.(client.Object).GetName()) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			form(obj)
			rec.add("delete " + obj.(client.Object).GetName())
		},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	create := func(name string) {
		t.Helper()
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	waitFor("the add of before", func() bool { return rec.has("add before") })

	// The typed read upgrades the store.
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "before"}, &cm); err != nil {
		t.Fatal(err)
	}
	create("after")
	waitFor("the add of after", func() bool { return rec.has("add after") })
	if err := direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}}); err != nil {
		t.Fatal(err)
	}
	waitFor("the delete of before", func() bool { return rec.has("delete before") })
	if len(wrongForm) > 0 {
		t.Errorf("the handler got objects not in its form: %v", wrongForm)
	}
	// Two lists and watches: the metadata-only one, then the one of whole
	// objects.
	if n := requests.count(); n != 2 {
		t.Errorf("%d configmap lists and watches, want 2", n)
	}
}

// With Options.Shard, a cache holds only its shard's objects: two caches
// with the two halves of the hash range hold every object once.
func TestShardedCaches(t *testing.T) {
	env := testenv.Shared(t)
	ctx := context.Background()
	direct, err := client.New(&rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := "sharded"
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, r := range informer.SplitRanges(2) {
		shard, err := informer.NewShard(informer.ShardByUID, r)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := startCache(t, env, Options{Shard: shard})
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 || len(list.Items) == 40 {
			t.Errorf("shard %s holds %d of 40 objects", informer.FormatRanges([]informer.HashRange{r}), len(list.Items))
		}
		for _, cm := range list.Items {
			seen[cm.Name]++
		}
	}
	for i := range 40 {
		if n := seen[fmt.Sprintf("cm-%02d", i)]; n != 1 {
			t.Errorf("cm-%02d is in %d shards", i, n)
		}
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
	direct, err := client.New(restConfigOf(env), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := "upgrade-faults"
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
		AddFunc: func(obj any) { rec.add("add " + obj.(client.Object).GetName()) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			rec.add("delete " + obj.(client.Object).GetName())
		},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	create := func(name string) {
		t.Helper()
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	waitFor("the add of before", func() bool { return rec.has("add before") })

	// Cut every watch and refuse connections for 2 s; changes go on.
	p.Down(2 * time.Second)
	p.CutAll()
	create("during")
	if err := direct.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "before"}}); err != nil {
		t.Fatal(err)
	}
	// The typed read upgrades the store while the server is unreachable,
	// then slow.
	p.Delay(200 * time.Millisecond)
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "during"}, &cm); err != nil {
		t.Fatal(err)
	}
	p.Delay(0)
	create("after")
	for _, e := range []string{"add during", "delete before", "add after"} {
		waitFor(e, func() bool { return rec.has(e) })
	}
}

// restConfigOf is client-go's configuration of env's admin.
func restConfigOf(env *testenv.Env) *rest.Config {
	return &rest.Config{Host: env.Host(), BearerToken: env.AdminToken(), TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData()}}
}
