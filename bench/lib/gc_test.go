package lib

import (
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestGCCountingProxy checks the gc scenario's counting proxy: it records
// every request, HTTP/2 and HTTP/1.1 alike, keeps each client's protocol,
// passes a gzip body through untouched, and streams a watch's frames as
// they are written rather than when the response ends.
func TestGCCountingProxy(t *testing.T) {
	frame := make(chan struct{})
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"ADDED"}`+"\n")
			w.(http.Flusher).Flush()
			<-frame // the client must see the first frame before the second is written
			io.WriteString(w, `{"type":"MODIFIED"}`+"\n")
			return
		}
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "compressed "+r.Proto)
			zw.Close()
			return
		}
		io.WriteString(w, "plain "+r.Proto)
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})

	p, err := newCountingProxy(upstream.URL, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("the proxy's certificate is not PEM")
	}
	client := func(h2 bool) *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2, DisableCompression: true}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	get := func(c *http.Client, path string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.url+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	read := func(resp *http.Response) string {
		t.Helper()
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	h2, h1 := client(true), client(false)
	if resp := get(h2, "/api", nil); resp.ProtoMajor != 2 || read(resp) != "plain HTTP/2.0" {
		t.Errorf("HTTP/2 client: got %s", resp.Proto)
	}
	if resp := get(h1, "/api/v1/namespaces/ns/configmaps", nil); resp.ProtoMajor != 1 {
		t.Errorf("HTTP/1.1 client: got %s", resp.Proto)
	} else {
		read(resp)
	}
	resp := get(h2, "/api/v1/secrets", map[string]string{"Accept-Encoding": "gzip"})
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip passed through", ce)
	}
	zr, err := gzip.NewReader(strings.NewReader(read(resp)))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); !strings.HasPrefix(string(b), "compressed ") {
		t.Errorf("gzip body %q", b)
	}

	resp = get(h2, "/api/v1/configmaps?watch=true", nil)
	first := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := resp.Body.Read(buf)
		first <- string(buf[:n])
	}()
	select {
	case f := <-first:
		if !strings.Contains(f, "ADDED") {
			t.Errorf("first watch read %q", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch's first frame did not come through before the response ended")
	}
	close(frame)
	read(resp)

	cut := time.Now()
	get(h1, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x", nil).Body.Close()
	if n := len(p.requestsBefore(cut)); n != 4 {
		t.Errorf("%d requests before the cut, want 4", n)
	}
	if n := len(p.requestsBefore(time.Now().Add(time.Second))); n != 5 {
		t.Errorf("%d requests in all, want 5", n)
	}
	p.reset()
	if n := len(p.requestsBefore(time.Now().Add(time.Second))); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
}

func TestGCRequestClass(t *testing.T) {
	for _, tc := range []struct {
		method, url, want string
	}{
		{"GET", "/api", "discovery"},
		{"GET", "/api/v1", "discovery"},
		{"GET", "/apis", "discovery"},
		{"GET", "/apis/apps/v1", "discovery"},
		{"GET", "/version", "discovery"},
		{"GET", "/openapi/v3", "discovery"},
		{"GET", "/api/v1/configmaps?watch=true&sendInitialEvents=true", "watch"},
		{"GET", "/apis/apps/v1/namespaces/x/deployments?watch=1", "watch"},
		{"GET", "/api/v1/configmaps?limit=500", "list"},
		{"GET", "/api/v1/namespaces/x/configmaps", "list"},
		{"GET", "/api/v1/namespaces", "list"},
		{"GET", "/api/v1/namespaces/x", "get"},
		{"GET", "/api/v1/namespaces/x/configmaps/y", "get"},
		{"GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", "get"},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/x/leases/gc", "lease"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/x/leases/gc", "lease"},
		{"GET", "/apis/coordination.k8s.io/v1/leases?watch=true", "watch"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/x/events", "POST"},
		{"GET", "/healthz", "other"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := requestClass(tc.method, u.Path, u.Query()); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
}

func TestGCProcParsing(t *testing.T) {
	// A command name with spaces and parentheses, as /proc shows it.
	stat := "4242 (gc (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 37 5 0 0 20 0 9 0 100 123456 789 18446744073709551615\n"
	if n, err := parseStatCPUTicks([]byte(stat)); err != nil || n != 42 {
		t.Errorf("parseStatCPUTicks = %d, %v; want 42", n, err)
	}
	if _, err := parseStatCPUTicks([]byte("4242 (gc) S 1 2")); err == nil {
		t.Error("parseStatCPUTicks accepted a short line")
	}
	status := "Name:\tgc\nVmPeak:\t 1000 kB\nVmHWM:\t   60001 kB\nVmRSS:\t   51234 kB\nRssAnon:\t 40000 kB\n"
	if n, err := parseStatusBytes([]byte(status), "VmRSS"); err != nil || n != 51234<<10 {
		t.Errorf("VmRSS = %d, %v; want %d", n, err, 51234<<10)
	}
	if n, err := parseStatusBytes([]byte(status), "VmHWM"); err != nil || n != 60001<<10 {
		t.Errorf("VmHWM = %d, %v; want %d", n, err, 60001<<10)
	}
	if _, err := parseStatusBytes([]byte("Name:\tgc\n"), "VmRSS"); err == nil {
		t.Error("parseStatusBytes found a VmRSS in a status without one")
	}
	if _, err := parseStatusBytes([]byte("VmRSS:\t12x kB\n"), "VmRSS"); err == nil {
		t.Error("parseStatusBytes accepted a malformed VmRSS")
	}
}
