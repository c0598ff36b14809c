package rest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/kdyn/kdyn/internal/wire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// protoServer is an HTTPS server offering HTTP/2 that records the protocol
// of each request by path and answers an empty list, or, for watches, one
// ADDED event.
func protoServer(t *testing.T) (*httptest.Server, func(path string) []int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string][]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = append(seen[r.URL.Path], r.ProtoMajor)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			fmt.Fprintln(w, `{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}}`)
			return
		}
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[]}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func(path string) []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), seen[path]...)
	}
}

func TestBulkRequestsGoOverHTTP1(t *testing.T) {
	srv, seen := protoServer(t)
	c, err := NewForConfig(&Config{Host: srv.URL, TLSClientConfig: TLSClientConfig{CAData: serverCA(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list := func(r *Request) *Request { return r.Version("v1").Namespace("ns").Resource("configmaps") }
	if err := list(c.Get()).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	if err := list(c.Get()).Do(wire.WithBulk(ctx)).Error(); err != nil {
		t.Fatal(err)
	}
	if got := seen("/api/v1/namespaces/ns/configmaps"); fmt.Sprint(got) != "[2 1]" {
		t.Fatalf("protocols of a plain then a bulk list = %v, want [2 1]", got)
	}
	for _, bulk := range []bool{false, true} {
		wctx := ctx
		if bulk {
			wctx = wire.WithBulk(ctx)
		}
		w, err := list(c.Get()).VersionedParams(&metav1.ListOptions{Watch: true}).Watch(wctx)
		if err != nil {
			t.Fatal(err)
		}
		ev := <-w.ResultChan()
		w.Stop()
		if ev.Type != watch.Added {
			t.Fatalf("bulk=%v: first event %v, want ADDED", bulk, ev.Type)
		}
	}
	if got := seen("/api/v1/namespaces/ns/configmaps"); fmt.Sprint(got[2:]) != "[2 1]" {
		t.Fatalf("protocols of a plain then a bulk watch = %v, want [2 1]", got[2:])
	}
}

// A Client over an http.Client of the caller's has no bulk transport: bulk
// requests go through that client.
func TestBulkWithoutABulkTransport(t *testing.T) {
	srv, seen := protoServer(t)
	cfg := &Config{Host: srv.URL, TLSClientConfig: TLSClientConfig{CAData: serverCA(srv)}}
	hc, err := HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := wire.WithBulk(context.Background())
	w, err := c.Get().Version("v1").Resource("configmaps").VersionedParams(&metav1.ListOptions{Watch: true}).Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-w.ResultChan()
	w.Stop()
	if got := seen("/api/v1/configmaps"); fmt.Sprint(got) != "[2]" {
		t.Fatalf("protocols = %v, want [2]", got)
	}
}

// TestUpgradeClientSpeaksHTTP1: the client for connection upgrades is the
// HTTP/1.1 one, with the same credentials, while HTTPClient speaks HTTP/2.
func TestUpgradeClientSpeaksHTTP1(t *testing.T) {
	var mu sync.Mutex
	auth := map[int]string{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.ProtoMajor] = r.Header.Get("Authorization")
		mu.Unlock()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	c, err := NewForConfig(&Config{Host: srv.URL, BearerToken: "t0ken", TLSClientConfig: TLSClientConfig{CAData: serverCA(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, hc := range []*http.Client{c.UpgradeClient(), c.HTTPClient()} {
		resp, err := hc.Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if auth[1] != "Bearer t0ken" || auth[2] != "Bearer t0ken" {
		t.Errorf("Authorization by protocol major version: %v", auth)
	}
}
