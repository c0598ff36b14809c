package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kdyn/kdyn/rest"
)

// fakeServer serves discovery documents captured from a real
// kube-apiserver v1.37.2 (testdata/), in the aggregated or the legacy form,
// with ETags, and counts requests per path.
type fakeServer struct {
	*httptest.Server
	aggregated atomic.Bool
	mu         sync.Mutex
	counts     map[string]int
	total      atomic.Int32
	notMod     atomic.Int32
	override   map[string]string // path → body, for tests that change documents
	delay      time.Duration
	inflight   atomic.Int32
	peak       atomic.Int32
}

func newFakeServer(t *testing.T, aggregated bool) *fakeServer {
	t.Helper()
	f := &fakeServer{counts: map[string]int{}, override: map[string]string{}}
	f.aggregated.Store(aggregated)
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.total.Add(1)
	if n := f.inflight.Add(1); n > f.peak.Load() {
		f.peak.Store(n)
	}
	defer f.inflight.Add(-1)
	time.Sleep(f.delay)
	f.mu.Lock()
	f.counts[r.URL.Path]++
	body, overridden := f.override[r.URL.Path]
	f.mu.Unlock()
	wantAgg := f.aggregated.Load() && strings.Contains(r.Header.Get("Accept"), "g=apidiscovery.k8s.io")
	var file string
	switch {
	case overridden:
	case wantAgg && (r.URL.Path == "/api" || r.URL.Path == "/apis"):
		file = filepath.Join("testdata", "aggregated", strings.TrimPrefix(r.URL.Path, "/")+".json")
	default:
		name := strings.ReplaceAll(strings.TrimPrefix(r.URL.Path, "/"), "/", "_")
		if b, err := os.ReadFile(filepath.Join("testdata", "legacy", name+".503")); err == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(b)
			return
		}
		file = filepath.Join("testdata", "legacy", name+".json")
	}
	if !overridden {
		b, err := os.ReadFile(file)
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"the server could not find the requested resource"}`))
			return
		}
		body = string(b)
	}
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	if wantAgg && (r.URL.Path == "/api" || r.URL.Path == "/apis") {
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if r.Header.Get("If-None-Match") == etag {
		f.notMod.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(body))
}

func (f *fakeServer) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[path]
}

func (f *fakeServer) reset() {
	f.mu.Lock()
	f.counts = map[string]int{}
	f.mu.Unlock()
	f.total.Store(0)
	f.notMod.Store(0)
}

// countingTransport counts the requests that reach the network.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func newTestClient(t *testing.T, f *fakeServer, opts Options) (*Client, *countingTransport) {
	t.Helper()
	ct := &countingTransport{}
	cfg := &rest.Config{Host: f.URL, QPS: -1, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		ct.next = rt
		return ct
	}}
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, ct
}
