package restmapper

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/rest"
)

// fakeServer serves the aggregated discovery documents captured from a
// real kube-apiserver v1.37.2 (../discovery/testdata), with ETags; tests
// add and remove groups to play CRDs coming and going.
type fakeServer struct {
	*httptest.Server
	requests atomic.Int32
	mu       sync.Mutex
	api      []byte
	apis     map[string]any
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	var err error
	f.api, err = os.ReadFile(filepath.Join("..", "discovery", "testdata", "aggregated", "api.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "discovery", "testdata", "aggregated", "apis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f.apis); err != nil {
		t.Fatal(err)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	var body []byte
	switch r.URL.Path {
	case "/api":
		body = f.api
	case "/apis":
		f.mu.Lock()
		body, _ = json.Marshal(f.apis)
		f.mu.Unlock()
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(body)
}

// addGroup appends an aggregated-discovery group with one resource.
func (f *fakeServer) addGroup(group string, versions []string, resource, kind string, namespaced bool, categories ...string) {
	scope := "Cluster"
	if namespaced {
		scope = "Namespaced"
	}
	var vs []any
	for _, v := range versions {
		vs = append(vs, map[string]any{"version": v, "freshness": "Current", "resources": []any{map[string]any{
			"resource": resource, "singularResource": strings.ToLower(kind), "scope": scope,
			"responseKind": map[string]any{"group": group, "version": v, "kind": kind},
			"verbs":        []any{"get", "list", "watch", "create", "delete"}, "categories": toAny(categories),
		}}})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apis["items"] = append(f.apis["items"].([]any), map[string]any{"metadata": map[string]any{"name": group}, "versions": vs})
}

func toAny(s []string) []any {
	out := []any{}
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

func (f *fakeServer) removeGroup(group string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	items := f.apis["items"].([]any)
	out := items[:0]
	for _, it := range items {
		if it.(map[string]any)["metadata"].(map[string]any)["name"] != group {
			out = append(out, it)
		}
	}
	f.apis["items"] = out
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestMapper(t *testing.T, f *fakeServer, opts Options) *Mapper {
	t.Helper()
	return newWrappedTestMapper(t, f, opts, nil)
}

// newWrappedTestMapper is newTestMapper with its transport wrapped by wrap
// (rest.Config.WrapTransport).
func newWrappedTestMapper(t *testing.T, f *fakeServer, opts Options, wrap func(http.RoundTripper) http.RoundTripper) *Mapper {
	t.Helper()
	rc, err := rest.NewForConfig(&rest.Config{Host: f.URL, QPS: -1, WrapTransport: wrap})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.New(rc, discovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(dc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
