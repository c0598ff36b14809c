package informer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/rest"
)

func labeled(name, rv string, lbls map[string]string, owner string, node string) *unstructured.Unstructured {
	u := cm(name, rv)
	u.SetLabels(lbls)
	if owner != "" {
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: types.UID(owner)}})
	}
	if node != "" {
		u.Object["spec"] = map[string]any{"nodeName": node, "containers": []any{map[string]any{"image": "a:" + node}, map[string]any{"image": "b"}}}
	}
	return u
}

func names(objs []*unstructured.Unstructured) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestIndexersAndListers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil,
			labeled("a", "1", map[string]string{"app": "web"}, "u1", "n1"),
			labeled("b", "2", map[string]string{"app": "db"}, "u1", "n2"),
			labeled("c", "3", map[string]string{"app": "web", "tier": "x"}, "u2", "n1"))
		w := src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, listWatch, rec)
		if err := inf.AddIndexer("app", LabelIndex[*unstructured.Unstructured]("app")); err != nil {
			t.Fatal(err)
		}
		rec.expect(t, "add a@1 initial=true", "add b@2 initial=true", "add c@3 initial=true")
		waitUntil(t, inf.HasSynced)
		// Indexers added after the informer has started index what is cached.
		for name, fn := range map[string]IndexFunc[*unstructured.Unstructured]{
			OwnerUIDIndexName: OwnerUIDIndex[*unstructured.Unstructured](),
			"node":            GJSONIndex[*unstructured.Unstructured]("spec.nodeName"),
			"image":           GJSONIndex[*unstructured.Unstructured]("spec.containers.#.image"),
			"firstImage":      GJSONIndex[*unstructured.Unstructured]("spec.containers.0.image"),
			"complex":         GJSONIndex[*unstructured.Unstructured](`metadata.labels.app`),
		} {
			if err := inf.AddIndexer(name, fn); err != nil {
				t.Fatal(err)
			}
		}
		if err := inf.AddIndexer("app", LabelIndex[*unstructured.Unstructured]("app")); err == nil {
			t.Fatal("duplicate index accepted")
		}
		l := inf.Lister()
		check := func(index, value string, want ...string) {
			t.Helper()
			got, err := l.ByIndex(index, value)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, names(got)); diff != "" {
				t.Errorf("ByIndex(%s, %s) (-want +got):\n%s", index, value, diff)
			}
		}
		check("app", "web", "a", "c")
		check(OwnerUIDIndexName, "u1", "a", "b")
		check("node", "n1", "a", "c")
		check("image", "b", "a", "b", "c")
		check("image", "a:n2", "b")
		check("firstImage", "a:n1", "a", "c")
		check("complex", "db", "b")
		check(NamespaceIndex, "ns", "a", "b", "c")
		// The index follows changes.
		w.Modify(labeled("a", "11", map[string]string{"app": "db"}, "u2", "n3"))
		rec.expect(t, "update a 1->11")
		check("app", "web", "c")
		check("app", "db", "a", "b")
		check("node", "n1", "c")
		w.Delete(labeled("b", "12", nil, "", ""))
		rec.expect(t, "delete b@12 unknown=false")
		check("app", "db", "a")
		check(OwnerUIDIndexName, "u1", []string{}...)
		// Listers.
		sel, _ := labels.Parse("app=db")
		got, err := l.List(sel)
		if err != nil || fmt.Sprint(names(got)) != "[a]" {
			t.Fatalf("List(app=db) = %v, %v", names(got), err)
		}
		if o, err := l.Namespace("ns").Get("c"); err != nil || o.GetName() != "c" {
			t.Fatalf("Namespace.Get = %v, %v", o, err)
		}
		if _, err := l.Namespace("other").Get("c"); err == nil {
			t.Fatal("found c in another namespace")
		}
		if all, _ := l.Namespace("other").List(nil); len(all) != 0 {
			t.Fatalf("other namespace lists %v", names(all))
		}
		if o, err := l.Get("ns/a"); err != nil || o.GetResourceVersion() != "11" {
			t.Fatalf("Get(ns/a) = %v, %v", o, err)
		}
		if _, err := l.ByIndex("nope", "x"); err == nil {
			t.Fatal("unknown index accepted")
		}
	})
}

func TestHandlerAddedLateGetsCacheAsInitialAdds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"), cm("b", "2"))
		w := src.addWatch(nil)
		first := newRecorder()
		inf := startInformer(t, src, listWatch, first)
		first.expect(t, "add a@1 initial=true", "add b@2 initial=true")
		late := newRecorder()
		reg, err := inf.AddEventHandler(late)
		if err != nil {
			t.Fatal(err)
		}
		late.expectSet(t, "add a@1 initial=true", "add b@2 initial=true")
		waitUntil(t, reg.HasSynced)
		w.Add(cm("c", "11"))
		first.expect(t, "add c@11 initial=false")
		late.expect(t, "add c@11 initial=false")
		reg.Remove()
		w.Add(cm("d", "12"))
		first.expect(t, "add d@12 initial=false") // every goroutine blocked: late would have had it too
		select {
		case e := <-late.ch:
			t.Fatalf("removed handler got %q", e)
		default:
		}
	})
}

// blockingHandler blocks in OnAdd until released.
type blockingHandler struct {
	HandlerFuncs[*unstructured.Unstructured]
	release chan struct{}
	mu      sync.Mutex
	got     int
}

func TestSlowHandlerDoesNotStallOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil)
		w := src.addWatch(nil)
		slow := &blockingHandler{release: make(chan struct{})}
		release := sync.OnceFunc(func() { close(slow.release) })
		slow.AddFunc = func(*unstructured.Unstructured, bool) {
			<-slow.release
			slow.mu.Lock()
			slow.got++
			slow.mu.Unlock()
		}
		fast := newRecorder()
		inf := startInformer(t, src, listWatch, nil)
		t.Cleanup(release) // before Run is waited for: a failed check must not leave it stuck on the handler
		// Added while Run starts: each handler must run in one goroutine.
		reg, _ := inf.AddEventHandler(slow)
		if _, err := inf.AddEventHandler(fast); err != nil {
			t.Fatal(err)
		}
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		for i := 0; i < 500; i++ {
			w.Add(cm(fmt.Sprintf("o%03d", i), fmt.Sprint(100+i)))
		}
		for i := 0; i < 500; i++ {
			<-fast.ch
		}
		if inf.Store().Len() != 500 {
			t.Fatalf("cache has %d objects while a handler is stuck", inf.Store().Len())
		}
		if p := reg.Pending(); p < 499 {
			t.Fatalf("slow handler buffer holds %d", p)
		}
		release()
		waitUntil(t, func() bool { slow.mu.Lock(); defer slow.mu.Unlock(); return slow.got == 500 })
	})
}

func TestUnchangedRelistKeepsCachedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"))
		w := src.addWatch(nil)
		src.addList("20", "", nil, cm("a", "1"))
		src.addWatch(nil)
		inf := startInformer(t, src, listWatch, nil)
		waitUntil(t, inf.HasSynced)
		before, _ := inf.Store().Get("ns/a")
		w.Error(gone())
		waitUntil(t, func() bool { return inf.LastSyncResourceVersion() == "20" })
		after, _ := inf.Store().Get("ns/a")
		if before != after {
			t.Fatal("a relist replaced an unchanged object (double memory during relists)")
		}
	})
}

// A relist that finds cached objects unchanged counts each as seen without
// allocating (no copy of its key, no set growing with the relist: at 250k
// objects that set was most of what a compact cache held beyond itself
// while relisting), and its end drops exactly the objects it did not see.
func TestRelistCountsKnownObjectsWithoutAllocating(t *testing.T) {
	inf := New(newScriptedSource(), listWatch)
	const n = 2000
	keys := make([]string, n)
	inf.beginSync()
	for i := range n {
		obj := cm(fmt.Sprintf("object-%d", i), "1")
		keys[i] = Key(obj)
		inf.upsert(watch.Added, obj, nil, true)
	}
	inf.endSync("10")

	inf.beginSync()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, k := range keys[1:] { // all but the first: it is gone
		if !inf.known(k, "1") {
			t.Fatalf("%s not known at resourceVersion 1", k)
		}
	}
	runtime.ReadMemStats(&after)
	if allocs := after.Mallocs - before.Mallocs; allocs > n/100 {
		t.Errorf("counting %d known objects as seen made %d allocations", n-1, allocs)
	}
	inf.endSync("20")
	if _, ok := inf.Store().Get(keys[0]); ok {
		t.Error("the object the relist did not see is still cached")
	}
	if got := inf.Store().Len(); got != n-1 {
		t.Errorf("cache holds %d objects after the relist, want %d", got, n-1)
	}
}

func TestTransformAndMutationDetection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		obj := cm("a", "1")
		obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "x"}})
		src.addList("10", "", nil, obj)
		src.addWatch(nil)
		opts := listWatch
		opts.DetectMutations = true
		opts.Transform = func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			u.SetManagedFields(nil)
			return u, nil
		}
		inf := startInformer(t, src, opts, nil)
		waitUntil(t, inf.HasSynced)
		got, _ := inf.Store().Get("ns/a")
		if got.GetManagedFields() != nil {
			t.Fatal("transform not applied")
		}
		if err := inf.CheckMutations(); err != nil {
			t.Fatal(err)
		}
		got.SetLabels(map[string]string{"mutated": "yes"}) // a bug a test should catch
		if err := inf.CheckMutations(); err == nil {
			t.Fatal("in-place mutation not detected")
		}
	})
}

func TestRunReturnsAfterEveryGoroutineExits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// goleak in TestMain fails the package if any goroutine survives;
		// here also check that Run returns promptly with handlers mid-buffer.
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"))
		src.addWatch(nil)
		inf := startInformer(t, src, listWatch, HandlerFuncs[*unstructured.Unstructured]{AddFunc: func(*unstructured.Unstructured, bool) {
			time.Sleep(time.Millisecond)
		}})
		waitUntil(t, inf.HasSynced)
		keys := inf.Store().Keys()
		sort.Strings(keys)
		if len(keys) != 1 {
			t.Fatal(keys)
		}
	})
}

// A handler added while Run is stopping (another handler still busy) is
// refused, rather than started after Run has begun waiting for handlers,
// which would hold Run until that handler was removed.
func TestAddEventHandlerWhileStoppingIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"))
		src.addWatch(nil)
		busy := &blockingHandler{release: make(chan struct{})}
		entered := make(chan struct{})
		busy.AddFunc = func(*unstructured.Unstructured, bool) {
			close(entered)
			<-busy.release
		}
		inf := New[*unstructured.Unstructured](src, listWatch)
		if _, err := inf.AddEventHandler(busy); err != nil {
			t.Fatal(err)
		}
		cancel, done := runInformer(inf)
		<-entered
		cancel()
		// Once Run is stopping, a new handler is refused.
		synctest.Wait()
		if _, err := inf.AddEventHandler(newRecorder()); err == nil || !strings.Contains(err.Error(), "stopped") {
			t.Fatalf("AddEventHandler once Run's context ended: %v, want it refused (stopped)", err)
		}
		close(busy.release)
		waitClosed(t, done, "Run did not return once the busy handler finished")
	})
}

// An object an index function fails on is neither cached nor delivered,
// and an update it fails on leaves the previous version cached and
// indexed: the cache never holds an object its handlers were not told of.
func TestIndexErrorLeavesTheStoreAsItWas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"))
		w := src.addWatch(nil)
		rec := newRecorder()
		inf := startInformer(t, src, listWatch, rec)
		rec.expect(t, "add a@1 initial=true")
		waitUntil(t, inf.HasSynced)
		picky := func(o *unstructured.Unstructured) ([]string, error) {
			if o.GetResourceVersion() >= "5" {
				return nil, errors.New("no index for this one")
			}
			return []string{o.GetName()}, nil
		}
		if err := inf.AddIndexer("picky", picky); err != nil {
			t.Fatal(err)
		}
		w.Add(cm("bad", "5"))  // fails the index: not cached, not delivered
		w.Modify(cm("a", "6")) // fails the index: a@1 stays
		w.Add(cm("good", "2")) // indexes: delivered
		rec.expect(t, "add good@2 initial=false")
		if _, ok := inf.Store().Get("ns/bad"); ok {
			t.Fatal("the object the index failed on is cached")
		}
		if a, _ := inf.Store().Get("ns/a"); a.GetResourceVersion() != "1" {
			t.Fatalf("a is at %s after a failed update, want 1", a.GetResourceVersion())
		}
		if got, err := inf.Store().ByIndex("picky", "a"); err != nil || len(got) != 1 {
			t.Fatalf("ByIndex(picky, a) = %v, %v", got, err)
		}
	})
}

// A handler may remove itself from its own callback: Remove returns (it
// does not wait for the callback calling it), no event follows, and Run
// still returns on cancel.
func TestHandlerRemovesItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "1"))
		w := src.addWatch(nil)
		inf := startInformer(t, src, listWatch, nil)
		var mu sync.Mutex
		var got []string
		var reg *Registration[*unstructured.Unstructured]
		removed := make(chan struct{})
		h := HandlerFuncs[*unstructured.Unstructured]{AddFunc: func(o *unstructured.Unstructured, _ bool) {
			mu.Lock()
			got = append(got, o.GetName())
			r := reg
			mu.Unlock()
			if o.GetName() == "b" {
				r.Remove()
				close(removed)
			}
		}}
		mu.Lock()
		var err error
		reg, err = inf.AddEventHandler(h)
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		waitUntil(t, inf.HasSynced)
		w.Add(cm("b", "11"))
		waitClosed(t, removed, "Remove from the handler's own callback did not return")
		w.Add(cm("c", "12"))
		waitUntil(t, func() bool { _, ok := inf.Store().Get("ns/c"); return ok })
		fast := newRecorder()
		if _, err := inf.AddEventHandler(fast); err != nil {
			t.Fatal(err)
		}
		fast.expect(t, "add a@1 initial=true", "add b@11 initial=true", "add c@12 initial=true")
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 2 || got[1] != "b" {
			t.Fatalf("the removed handler got %v, want [a b]", got)
		}
	})
}

// A factory's namespace does not apply to informers asked for in all
// namespaces, as a resource set asks for cluster-scoped resources and for
// CRDs (a namespaced request for them is answered 404).
func TestAllNamespacesIgnoresTheFactoryNamespace(t *testing.T) {
	f := NewFactory(nil, FactoryOptions{Namespace: "prod"})
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	if k := f.key(gvr, InformerOptions{}, false); k.ns != "prod" {
		t.Fatalf("default namespace %q, want prod", k.ns)
	}
	if k := f.key(gvr, InformerOptions{Namespace: "dev"}, false); k.ns != "dev" {
		t.Fatalf("overridden namespace %q, want dev", k.ns)
	}
	if k := f.key(gvr, InformerOptions{AllNamespaces: true}, true); k.ns != "" {
		t.Fatalf("AllNamespaces gave namespace %q", k.ns)
	}
	s := &ResourceSet{opts: ResourceSetOptions{Informer: InformerOptions{Namespace: "team"}}}
	if o := s.informerOptions(&discovery.Resource{APIResource: metav1.APIResource{Namespaced: false}}); f.key(gvr, o, true).ns != "" {
		t.Fatalf("a resource set's cluster-scoped member is watched in namespace %q", f.key(gvr, o, true).ns)
	}
	if o := s.informerOptions(&discovery.Resource{APIResource: metav1.APIResource{Namespaced: true}}); f.key(gvr, o, true).ns != "team" {
		t.Fatalf("a resource set's namespaced member is watched in namespace %q, want team", f.key(gvr, o, true).ns)
	}
}

// Resource sets give back the informers they hold without stopping one
// that a user of the factory, or another set, still holds; Release stops
// it whoever holds it.
func TestResourceSetHoldsDoNotStopSharedInformers(t *testing.T) {
	f := NewFactory(fake.NewClient(), FactoryOptions{})
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	k := f.key(gvr, InformerOptions{}, true)
	has := func() bool { f.mu.Lock(); defer f.mu.Unlock(); _, ok := f.entries[k]; return ok }
	a := shared(f, metadataOnly, gvr, InformerOptions{}, false) // set A
	b := shared(f, metadataOnly, gvr, InformerOptions{}, false) // set B
	if a != b {
		t.Fatal("two holders got different informers")
	}
	if f.releaseHeld(k) || !has() {
		t.Fatal("set A's release stopped the informer set B holds")
	}
	if u := f.ForResourceMetadata(gvr, InformerOptions{}); u != a {
		t.Fatal("the user got another informer")
	}
	if f.releaseHeld(k) || !has() {
		t.Fatal("set B's release stopped the informer a user holds")
	}
	if !f.ReleaseMetadata(gvr, InformerOptions{}) || has() {
		t.Fatal("Release did not stop and forget the informer")
	}
	// Held by one set only: its release stops it.
	shared(f, wholeObjects, gvr, InformerOptions{}, false)
	if !f.releaseHeld(f.key(gvr, InformerOptions{}, false)) {
		t.Fatal("the last set's release did not stop the informer")
	}
}

// After Run returned, the factory still hands out informers, but they
// never run: WaitForSync names them instead of reporting success. So it
// does for informers handed out before a Run whose context had ended.
func TestWaitForSyncAfterRunNamesInformersThatNeverRan(t *testing.T) {
	f := NewFactory(fake.NewClient(), FactoryOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := f.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Run(t.Context()); err == nil {
		t.Fatal("a second Run was accepted")
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	f.ForResourceMetadata(gvr, InformerOptions{})
	err := f.WaitForSync(t.Context())
	var se *SyncError
	if !errors.As(err, &se) || se.GVR != gvr || !strings.Contains(err.Error(), "stopped before this informer ran") {
		t.Fatalf("WaitForSync after Run = %v", err)
	}
}

// A resource set's WaitForSync that runs out of time names the members
// not yet synced, each wrapping the context's error.
func TestResourceSetWaitForSyncNamesPendingMembers(t *testing.T) {
	slow := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	done := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	s := &ResourceSet{members: map[schema.GroupVersionResource]*member{
		slow: {ns: "team", synced: func() bool { return false }, givenUp: func() error { return nil }},
		done: {synced: func() bool { return true }, givenUp: func() error { return nil }},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err := s.WaitForSync(ctx)
	var se *SyncError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) || se.GVR != slow || se.Namespace != "team" ||
		!strings.Contains(err.Error(), "in namespace team") || strings.Contains(err.Error(), "configmaps") {
		t.Fatalf("WaitForSync = %v", err)
	}
}

// With OnSyncError, WaitForSync reports a forbidden member and one that
// has not synced within SyncTimeout, once each, and returns when the
// others have synced.
func TestResourceSetOnSyncErrorExcusesMembers(t *testing.T) {
	forbidden := schema.GroupVersionResource{Group: "secret.example", Version: "v1", Resource: "vaults"}
	slow := schema.GroupVersionResource{Group: "metrics.example", Version: "v1", Resource: "pods"}
	done := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var reported []string
	s := &ResourceSet{
		opts: ResourceSetOptions{SyncTimeout: 30 * time.Millisecond, OnSyncError: func(err error) { reported = append(reported, err.Error()) }},
		members: map[schema.GroupVersionResource]*member{
			forbidden: {started: time.Now(), synced: func() bool { return false }, givenUp: func() error {
				return apierrors.NewForbidden(forbidden.GroupResource(), "", errors.New("no"))
			}},
			slow: {started: time.Now(), synced: func() bool { return false }, givenUp: func() error { return nil }},
			done: {started: time.Now(), synced: func() bool { return true }, givenUp: func() error { return nil }},
		},
	}
	if err := s.WaitForSync(t.Context()); err != nil {
		t.Fatalf("WaitForSync = %v", err)
	}
	sort.Strings(reported)
	if len(reported) != 2 || !strings.Contains(reported[0], "metrics.example/v1, Resource=pods") || !strings.Contains(reported[0], "not synced within 30ms") ||
		!strings.Contains(reported[1], "vaults") || !strings.Contains(reported[1], "forbidden") {
		t.Fatalf("reported %q", reported)
	}
	if err := s.WaitForSync(t.Context()); err != nil || len(reported) != 2 {
		t.Fatalf("second WaitForSync = %v, reported %d", err, len(reported))
	}
}

// A member's 404 makes the set read discovery again once per 404, whether
// or not the member had synced (a deleted CRD's resource that discovery
// still listed at the first re-read); other errors and old 404s do not.
func TestResourceSetRereadsDiscoveryOncePerNotFound(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	var (
		err error
		n   uint64
	)
	fail := func(e error) { err, n = e, n+1 }
	s := &ResourceSet{members: map[schema.GroupVersionResource]*member{
		gvr: {synced: func() bool { return true }, lastErr: func() (uint64, error) { return n, err }},
	}}
	notFound := apierrors.NewNotFound(gvr.GroupResource(), "")
	steps := []struct {
		what string
		fail error
		want bool
	}{
		{what: "no error yet", want: false},
		{what: "a 404 after the sync", fail: notFound, want: true},
		{what: "the same 404, looked at again", want: false},
		{what: "another 404", fail: notFound, want: true},
		{what: "a 500", fail: apierrors.NewInternalError(errors.New("boom")), want: false},
		{what: "a 404 again", fail: notFound, want: true},
	}
	for _, st := range steps {
		if st.fail != nil {
			fail(st.fail)
		}
		if got := s.memberGone(); got != st.want {
			t.Errorf("%s: memberGone = %v, want %v", st.what, got, st.want)
		}
	}
}

// Informers handed out while the factory runs start at once, and
// WaitForSync, called before Run, waits for them instead of reporting
// success: here until the server's Forbidden gives them up.
func TestInformersHandedOutWhileRunningStart(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"widgets is forbidden"}`)
	}))
	defer srv.Close()
	dc, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactory(dc, FactoryOptions{DisableStreaming: true})
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	f.ForResourceMetadata(gvr, InformerOptions{})
	ctx, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	defer func() {
		stop()
		<-done
	}()
	other := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	time.Sleep(20 * time.Millisecond)
	f.ForResource(other, InformerOptions{})
	err = f.WaitForSync(ctx)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "gadgets") || !strings.Contains(err.Error(), "widgets") || requests.Load() < 2 {
		t.Fatalf("WaitForSync = %v after %d requests; want both informers to run and report Forbidden", err, requests.Load())
	}
}
