package informer_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

// thingsCRD is a namespaced CRD for group with one served version, v1,
// of kind Thing (resource things).
func thingsCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "things." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": "things", "singular": "thing", "kind": "Thing"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
}

// staleAPIs answers GET /apis, while it is stale, with the last 200 answer
// it let through: discovery that lags behind the server, as when the
// discovery re-read a CRD's deletion triggers still lists its resource.
// A real server does not do this on demand.
type staleAPIs struct {
	mu     sync.Mutex
	stale  bool
	header http.Header
	body   []byte
	served []time.Time // when stale answers were given
}

func (s *staleAPIs) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path != "/apis" {
			return rt.RoundTrip(r)
		}
		s.mu.Lock()
		if s.stale && s.body != nil {
			s.served = append(s.served, time.Now())
			resp := &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: s.header.Clone(), Body: io.NopCloser(bytes.NewReader(s.body)), ContentLength: int64(len(s.body)), Request: r}
			s.mu.Unlock()
			return resp, nil
		}
		s.mu.Unlock()
		resp, err := rt.RoundTrip(r)
		if err != nil || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.header, s.body = resp.Header.Clone(), body
		s.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	})
}

func (s *staleAPIs) setStale(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale = on
}

// servedAfter reports whether a stale answer was given after t.
func (s *staleAPIs) servedAfter(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.served) > 0 && s.served[len(s.served)-1].After(t)
}

func (s *staleAPIs) lists(group string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.body, []byte(`"`+group+`"`))
}

// When the discovery re-read that a CRD's deletion triggers still lists
// its resource, the set keeps the member, whose informer had synced; the
// 404 its informer meets next makes the set read discovery again and
// release it, long before the periodic refresh.
func TestResourceSetReleasesWhenDiscoveryLags(t *testing.T) {
	env := testenv.Shared(t)
	admin := client(t, env.RESTConfig(testenv.Admin))
	stale := &staleAPIs{}
	mcfg := env.RESTConfig(testenv.Admin)
	mcfg.WrapTransport = stale.wrap
	mapper, err := restmapper.NewForConfig(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	group := fmt.Sprintf("lag%d.kdyn.test", time.Now().UnixNano()%1_000_000)
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
	cfg := env.RESTConfig(testenv.Admin)
	answers := recordAnswers(cfg, "/apis/"+group+"/v1/things", false)
	notFound := func() int {
		n := 0
		for _, a := range answers() {
			if a.status == http.StatusNotFound {
				n++
			}
		}
		return n
	}
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{})
	set := informer.NewResourceSet(f, mapper, informer.ResourceSetOptions{
		Keep:            func(r *discovery.Resource) bool { return r.Group == group },
		RefreshInterval: 10 * time.Minute, // only a CRD event or a 404 re-reads discovery
	})
	ctx, cancel := context.WithCancel(context.Background())
	var run errgroup.Group
	run.Go(func() error { return f.Run(ctx) })
	run.Go(func() error { return set.Run(ctx) })
	t.Cleanup(func() { cancel(); _ = run.Wait() })
	if _, err := admin.Resource(crdGVR).Create(t.Context(), thingsCRD(group), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	has := func() bool { return slices.Contains(set.Resources(), gvr) }
	waitWithin(t, 20*time.Second, "the set picking up the new CRD", has)
	if err := set.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !stale.lists(group) {
		t.Fatal("the last /apis answer does not list the new group")
	}

	stale.setStale(true)
	if err := admin.Resource(crdGVR).Delete(t.Context(), "things."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	crds := f.ForResourceMetadata(crdGVR, informer.InformerOptions{AllNamespaces: true})
	waitWithin(t, 30*time.Second, "the CRD informer seeing the deletion", func() bool {
		_, ok := crds.Store().Get("things." + group)
		return !ok
	})
	gone := time.Now()
	// The re-read the deletion triggered came after that and was answered
	// stale; the member's informer has met a 404 since.
	waitWithin(t, 30*time.Second, "a stale re-read after the deletion and a 404 for the member", func() bool {
		return stale.servedAfter(gone) && notFound() > 0
	})
	if !has() {
		t.Fatal("the set released the member although discovery (stale) still listed it")
	}
	stale.setStale(false)
	start := time.Now()
	waitWithin(t, 30*time.Second, "the set releasing the member after its 404s", func() bool { return !has() })
	t.Logf("released %v after discovery caught up (%d 404s for the member in all)", time.Since(start).Round(time.Millisecond), notFound())
}

// waitWithin polls cond every 20 ms until it holds, failing the test
// after within.
func waitWithin(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
