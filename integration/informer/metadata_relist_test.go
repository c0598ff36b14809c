package informer_test

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
)

// TestMetadataStreamingRelistSkipsUnchanged restarts the control plane
// (watch cache on) under a metadata-only informer while objects change and
// are deleted: the relist is a streaming list in protobuf whose frames for
// unchanged objects are recognized without decoding. Unchanged objects must
// produce no events, changed ones one update each, deleted ones a tombstone,
// and the cache must equal the server.
func TestMetadataStreamingRelistSkipsUnchanged(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	cms := writer.Resource(cmGVR).Namespace(ns)
	createAll(t, writer, ns, 40, func(i int) *unstructured.Unstructured { return configMap(ns, fmt.Sprintf("cm-%02d", i), "1") })
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
	inf := f.ForResourceMetadata(cmGVR, informer.InformerOptions{})
	var mu sync.Mutex
	var events []string
	_, _ = inf.AddEventHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc: func(_, n *metav1.PartialObjectMetadata) {
			mu.Lock()
			events = append(events, "update "+n.Name)
			mu.Unlock()
		},
		DeleteFunc: func(d informer.Deleted[*metav1.PartialObjectMetadata]) {
			mu.Lock()
			events = append(events, fmt.Sprintf("delete %s unknown=%v", d.Obj.Name, d.FinalStateUnknown))
			mu.Unlock()
		},
	})
	runFactory(t, t.Context(), f)
	if err := f.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	syncRV := inf.LastSyncResourceVersion()

	g.cut()
	if err := env.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("cm-%02d", i)
		if err := cms.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "delete "+name+" unknown=true")
		name = fmt.Sprintf("cm-%02d", 10+i)
		if _, err := cms.Update(t.Context(), configMap(ns, name, "2"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, "update "+name)
	}
	sort.Strings(want)
	g.restore()

	deadline := time.Now().Add(60 * time.Second)
	for {
		server := serverObjects(t, writer, ns, (*unstructured.Unstructured).GetResourceVersion)
		cache := map[string]string{}
		for _, o := range inf.Store().List() {
			if !strings.HasPrefix(o.Name, "kube-root-ca") {
				cache[informer.Key(o)] = o.ResourceVersion
			}
		}
		if fmt.Sprint(sortedMap(cache)) == fmt.Sprint(sortedMap(server)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metadata cache did not converge: %d cached, %d on the server", len(cache), len(server))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if inf.LastSyncResourceVersion() == syncRV {
		t.Fatal("no relist after the restart")
	}
	streams := 0
	for _, u := range g.requests() {
		if strings.Contains(u, "sendInitialEvents=true") {
			streams++
		}
	}
	if streams < 2 {
		t.Fatalf("%d streaming lists; the relist should be one too", streams)
	}
	mu.Lock()
	got := append([]string(nil), events...)
	mu.Unlock()
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events during the relist:\n got %v\nwant %v", got, want)
	}
}

// TestMetadataListThenWatchConverges runs a metadata-only informer with
// streaming lists off: its lists are protobuf PartialObjectMetadataLists
// read item by item as they arrive (the wire layer's ListMetadata). After
// creates, updates and deletes the cache equals a fresh list.
func TestMetadataListThenWatchConverges(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	createAll(t, writer, ns, 60, func(i int) *unstructured.Unstructured { return configMap(ns, fmt.Sprintf("cm-%02d", i), "1") })
	g := newGate()
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = g.wrap
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns, DisableStreaming: true})
	inf := f.ForResourceMetadata(cmGVR, informer.InformerOptions{})
	runFactory(t, t.Context(), f)
	if err := f.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(inf.Store().List()); n < 60 {
		t.Fatalf("%d objects after the list", n)
	}
	churn(t, writer, ns, 100, "c")
	waitFor(t, func() bool {
		server := serverObjects(t, writer, ns, (*unstructured.Unstructured).GetResourceVersion)
		cache := map[string]string{}
		for _, o := range inf.Store().List() {
			if o.ManagedFields != nil {
				t.Fatalf("%s: managedFields kept", o.Name)
			}
			if !strings.HasPrefix(o.Name, "kube-root-ca") {
				cache[informer.Key(o)] = o.ResourceVersion
			}
		}
		return fmt.Sprint(sortedMap(cache)) == fmt.Sprint(sortedMap(server))
	})
	lists := 0
	for _, u := range g.requests() {
		if strings.Contains(u, "sendInitialEvents") {
			t.Fatalf("a streaming list with streaming off: %s", u)
		}
		if !strings.Contains(u, "watch=true") {
			lists++
		}
	}
	if lists == 0 {
		t.Fatalf("no list request: %v", g.requests())
	}
}

// TestMetadataStreamingListGoesOnAsTheWatch: a metadata-only informer's
// streaming list asks for an uncompressed answer and goes on as the watch
// after its initial-events-end bookmark: later changes arrive on the same
// request, and no second watch is opened.
func TestMetadataStreamingListGoesOnAsTheWatch(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	createAll(t, writer, ns, 30, func(i int) *unstructured.Unstructured { return configMap(ns, fmt.Sprintf("cm-%02d", i), "1") })
	cfg := env.RESTConfig(testenv.Admin)
	answers := recordAnswers(cfg, "", true)
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns})
	inf := f.ForResourceMetadata(cmGVR, informer.InformerOptions{})
	updated := make(chan string, 10)
	_, _ = inf.AddEventHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc: func(_, n *metav1.PartialObjectMetadata) { updated <- n.Name },
	})
	runFactory(t, t.Context(), f)
	if err := f.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Resource(cmGVR).Namespace(ns).Update(t.Context(), configMap(ns, "cm-07", "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-updated:
		if name != "cm-07" {
			t.Fatalf("update of %s", name)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no update delivered by the streaming list's watch")
	}
	got := answers()
	if len(got) != 1 || got[0].query.Get("sendInitialEvents") != "true" || got[0].compressed {
		t.Fatalf("watches %+v: want one, the streaming list, uncompressed", got)
	}
}
