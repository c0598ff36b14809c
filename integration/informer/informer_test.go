package informer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

func TestConvergesAfter500Changes(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
	inf := f.ForResource(cmGVR, informer.InformerOptions{})
	keep := f.ForResource(cmGVR, informer.InformerOptions{KeepManagedFields: true})
	tr := startTracked(t, f, inf)
	churn(t, writer, ns, 500, "c")
	converge(t, writer, ns, inf, tr)
	// A streaming list was used against v1.37.2 (seen in the request log).
	streamed := false
	for _, u := range g.requests() {
		if strings.Contains(u, "sendInitialEvents=true") && strings.Contains(u, "watch=true") {
			streamed = true
		}
	}
	if !streamed {
		t.Fatalf("no streaming list in the request log: %v", g.requests())
	}
	for _, o := range inf.Store().List() {
		if o.GetManagedFields() != nil {
			t.Fatal("the factory did not strip managedFields")
		}
	}
	// The same objects with KeepManagedFields keep them.
	waitFor(t, func() bool { return keep.Store().Len() == inf.Store().Len() })
	for _, o := range keep.Store().List() {
		if len(o.GetManagedFields()) == 0 && !strings.HasPrefix(o.GetName(), "kube-root-ca") {
			t.Fatalf("%s: managedFields dropped despite KeepManagedFields", o.GetName())
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitWithin(t, 30*time.Second, "condition", cond)
}

func TestStreamingFallbackWhenRefused(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	for i := 0; i < 3; i++ {
		if _, err := writer.Resource(cmGVR).Namespace(ns).Create(t.Context(), configMap(ns, fmt.Sprint("x", i), "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A proxy in front of the real server that refuses streaming lists, as
	// a server without the feature does.
	target, _ := url.Parse(env.Host())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = env.HTTPClient(testenv.Admin).Transport
	var refused, lists int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			refused++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`))
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			lists++
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the factory has stopped (cleanups run last-in first-out)
	cfg := env.RESTConfig(testenv.Admin)
	cfg.Host = srv.URL
	cfg.BearerToken = ""
	cfg.TLSClientConfig.CAData = nil
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
	inf := f.ForResource(cmGVR, informer.InformerOptions{})
	tr := startTracked(t, f, inf)
	if refused != 1 || lists < 1 {
		t.Fatalf("refused %d streaming lists, made %d lists", refused, lists)
	}
	if _, err := writer.Resource(cmGVR).Namespace(ns).Create(t.Context(), configMap(ns, "late", "2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	converge(t, writer, ns, inf, tr)
}

func TestSurvivesRestartAndCompaction(t *testing.T) {
	env := testenv.New(t, testenv.Options{ExtraArgs: []string{"--watch-cache=false"}})
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	churn(t, writer, ns, 60, "a")
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
	inf := f.ForResource(cmGVR, informer.InformerOptions{})
	tr := startTracked(t, f, inf)
	converge(t, writer, ns, inf, tr)

	// 1. The control plane restarts mid-watch; objects change and are
	// deleted while the informer cannot reach it.
	g.cut()
	if err := env.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	deleted := churn(t, writer, ns, 80, "b")
	before := snapshotDeletes(tr)
	g.restore()
	converge(t, writer, ns, inf, tr)
	if deleted > 0 && snapshotDeletes(tr) <= before {
		t.Fatalf("%d deletes happened while the informer was away; none was delivered", deleted)
	}

	// 2. etcd is compacted past the informer's resourceVersion while it is
	// away: the resumed watch gets 410 and the informer relists.
	g.cut()
	deleted = churn(t, writer, ns, 80, "c")
	if err := env.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	before = snapshotDeletes(tr)
	lastRV := inf.LastSyncResourceVersion()
	g.restore()
	converge(t, writer, ns, inf, tr)
	if inf.LastSyncResourceVersion() == lastRV {
		t.Fatal("no relist after compaction")
	}
	if deleted > 0 && snapshotDeletes(tr) <= before {
		t.Fatal("deletes during the compaction gap were not delivered")
	}
	tr.mu.Lock()
	unknown := tr.unknown
	tr.mu.Unlock()
	if deleted > 0 && unknown == 0 {
		t.Fatal("deletes inferred from a relist should be tombstones with FinalStateUnknown")
	}
	// Listed (this server has no watch cache, so no streaming lists)
	// objects come without managedFields too.
	for _, o := range inf.Store().List() {
		if o.GetManagedFields() != nil {
			t.Fatal("a listed object kept its managedFields")
		}
	}
}

func snapshotDeletes(tr *tracker) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, c := range tr.deletes {
		n += c
	}
	return n
}

func TestWaitForSyncForbiddenDoesNotHang(t *testing.T) {
	env := testenv.Shared(t)
	f := informer.NewFactory(client(t, env.RESTConfig(testenv.Nobody)), informer.FactoryOptions{})
	f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, informer.InformerOptions{})
	f.ForResourceMetadata(cmGVR, informer.InformerOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	runFactory(t, ctx, f)
	start := time.Now()
	err := f.WaitForSync(ctx)
	if err == nil || !apierrors.IsForbidden(err) {
		t.Fatalf("WaitForSync = %v, want Forbidden", err)
	}
	var se *informer.SyncError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "secrets") || !strings.Contains(err.Error(), "configmaps") {
		t.Fatalf("error does not name each resource: %v", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatalf("WaitForSync took %v", time.Since(start))
	}
}

func TestResourceSetFollowsCRDs(t *testing.T) {
	env := testenv.Shared(t)
	admin := client(t, env.RESTConfig(testenv.Admin))
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	c := client(t, cfg)
	mapper, err := restmapper.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{})
	events := make(chan informer.Event, 10000)
	set := informer.NewResourceSet(f, mapper, informer.ResourceSetOptions{
		Keep:    restmapper.SupportsVerbs("list", "watch", "delete"),
		Handler: func(e informer.Event) { events <- e },
	})
	// A second handler (as controller.WatchesSet adds) gets every event too.
	more := make(chan informer.Event, 10000)
	if err := set.AddHandler(func(e informer.Event) { more <- e }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var run errgroup.Group
	run.Go(func() error { return f.Run(ctx) })
	run.Go(func() error { return set.Run(ctx) })
	t.Cleanup(func() { cancel(); _ = run.Wait() })
	if err := set.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := set.AddHandler(func(informer.Event) {}); err == nil || !strings.Contains(err.Error(), "after Run") {
		t.Fatalf("AddHandler once the set runs = %v, want an error", err)
	}
	if n := len(set.Resources()); n < 20 {
		t.Fatalf("only %d resources in the set", n)
	}
	group := fmt.Sprintf("set%d.kdyn.test", time.Now().UnixNano()%1_000_000)
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
	if _, err := admin.Resource(crdGVR).Create(t.Context(), thingsCRD(group), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	has := func() bool { return slices.Contains(set.Resources(), gvr) }
	start := time.Now()
	for !has() {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the set did not pick up the new CRD")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("new CRD joined the set after %v", time.Since(start).Round(time.Millisecond))
	// An object of the new kind arrives as an event tagged with its resource.
	thing := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Thing", "metadata": map[string]any{"name": "t1", "namespace": "default"}}}
	var created *unstructured.Unstructured
	deadline := time.Now().Add(20 * time.Second)
	for created == nil {
		created, err = admin.Resource(gvr).Namespace("default").Create(t.Context(), thing, metav1.CreateOptions{})
		if err != nil && time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitEvent(t, events, func(e informer.Event) bool { return e.GVR == gvr && e.Object.GetName() == "t1" })
	waitEvent(t, more, func(e informer.Event) bool { return e.GVR == gvr && e.Object.GetName() == "t1" })
	// Deleting the CRD releases its informer, with no 404 loop.
	if err := admin.Resource(crdGVR).Delete(t.Context(), "things."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for has() {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the set kept the deleted CRD's informer")
		}
		time.Sleep(50 * time.Millisecond)
	}
	released := len(g.requests())
	time.Sleep(3 * time.Second)
	n := 0
	for _, u := range g.requests()[released:] {
		if strings.Contains(u, "/apis/"+group+"/") {
			n++
		}
	}
	if n > 0 {
		t.Fatalf("%d requests for the deleted resource after its release", n)
	}
}

func waitEvent(t *testing.T, events chan informer.Event, match func(informer.Event) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-events:
			if match(e) {
				return
			}
		case <-deadline:
			t.Fatal("event not delivered")
		}
	}
}
