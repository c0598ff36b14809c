package faultproxy_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backend is an httptest HTTPS server: /echo answers what it received,
// and a watch request streams the lines sent on frames.
type backend struct {
	srv    *httptest.Server
	frames chan string
	hits   atomic.Int64
}

type echo struct {
	Method, Path, Query, Body, Auth string
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{frames: make(chan string)}
	done := make(chan struct{})
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		if faultproxy.IsWatch(r) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for {
				select {
				case f := <-b.frames:
					_, _ = io.WriteString(w, f)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				case <-done:
					return
				}
			}
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(echo{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Get("Authorization")})
	}))
	b.srv.StartTLS()
	t.Cleanup(func() {
		close(done)
		b.srv.Close()
	})
	return b
}

func (b *backend) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.srv.Certificate().Raw})
}

func newProxy(t *testing.T, b *backend) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(faultproxy.Options{Upstream: b.srv.URL, UpstreamCAData: b.caPEM()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// client returns an HTTP/1.1 client that trusts the proxy's CA.
func client(t *testing.T, p *faultproxy.Proxy) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: false}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// lines reads a streaming body line by line onto a channel; the channel
// gets a final entry with the error that ended the body.
type line struct {
	s   string
	err error
}

func readLines(body io.Reader) <-chan line {
	ch := make(chan line, 16)
	go func() {
		defer close(ch)
		br := bufio.NewReader(body)
		for {
			s, err := br.ReadString('\n')
			if s != "" || err != nil {
				ch <- line{s, err}
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan line, within time.Duration) (line, bool) {
	t.Helper()
	select {
	case l, ok := <-ch:
		return l, ok
	case <-time.After(within):
		return line{}, false
	}
}

// openWatch starts a watch through the proxy and waits for its headers.
func openWatch(t *testing.T, c *http.Client, p *faultproxy.Proxy) (*http.Response, <-chan line) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/api/v1/configmaps?watch=true", nil)
	resp, err := c.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.ProtoMajor != 1 {
		t.Fatalf("proto %s, want HTTP/1.1", resp.Proto)
	}
	return resp, readLines(resp.Body)
}

func TestForwardsAndRecords(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	req, _ := http.NewRequest(http.MethodPost, p.URL()+"/api/v1/namespaces/x/configmaps?fieldManager=m", strings.NewReader(`{"a":1}`))
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := echo{"POST", "/api/v1/namespaces/x/configmaps", "fieldManager=m", `{"a":1}`, "Bearer tok"}
	if e != want {
		t.Fatalf("backend saw %+v, want %+v", e, want)
	}
	if resp.ProtoMajor != 1 {
		t.Fatalf("proto %s, want HTTP/1.1", resp.Proto)
	}
	if _, _, err := get(t, c, p.URL()+"/api/v1/namespaces/x/configmaps"); err != nil {
		t.Fatal(err)
	}
	if n := p.Requests()["/api/v1/namespaces/x/configmaps"][200]; n != 2 {
		t.Fatalf("Requests counted %d 200s, want 2: %v", n, p.Requests())
	}
	recs := p.Records()
	if len(recs) != 2 || recs[0].Method != "POST" || recs[0].UpstreamStatus != 200 || recs[0].End.IsZero() || recs[0].Query != "fieldManager=m" {
		t.Fatalf("records: %+v", recs)
	}
}

func TestRespond429And5xx(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	p.Respond429(2, 1500*time.Millisecond, faultproxy.PathPrefix("/a"))
	if resp, _, err := get(t, c, p.URL()+"/b"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/b: %v %v", resp, err)
	}
	for i := 0; i < 2; i++ {
		resp, body, err := get(t, c, p.URL()+"/a")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
			t.Fatalf("answer %d: %s Retry-After=%q", i, resp.Status, resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(body), `"reason":"TooManyRequests"`) || !strings.Contains(string(body), `"retryAfterSeconds":2`) {
			t.Fatalf("body %s", body)
		}
	}
	if resp, _, _ := get(t, c, p.URL()+"/a"); resp.StatusCode != 200 {
		t.Fatalf("third /a: %s, want forwarded", resp.Status)
	}
	p.Respond5xx(503, -1, faultproxy.PathPrefix("/apis/metrics.k8s.io/"))
	for i := 0; i < 3; i++ {
		resp, body, _ := get(t, c, p.URL()+"/apis/metrics.k8s.io/v1beta1")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "" || !strings.Contains(string(body), "ServiceUnavailable") {
			t.Fatalf("%s %s", resp.Status, body)
		}
	}
	p.Reset()
	if resp, _, _ := get(t, c, p.URL()+"/apis/metrics.k8s.io/v1beta1"); resp.StatusCode != 200 {
		t.Fatalf("after Reset: %s", resp.Status)
	}
	if got := b.hits.Load(); got != 3 {
		t.Fatalf("backend saw %d requests, want 3", got)
	}
	if n := p.Requests()["/a"][429]; n != 2 {
		t.Fatalf("counted %d 429s", n)
	}
}

func TestCutAllBreaksStreams(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	b.frames <- "{\"n\":1}\n"
	if l, ok := next(t, lines, 5*time.Second); !ok || l.s != "{\"n\":1}\n" {
		t.Fatalf("first frame: %+v", l)
	}
	if n := p.CutAll(); n != 1 {
		t.Fatalf("CutAll cut %d exchanges, want 1", n)
	}
	l, ok := next(t, lines, 5*time.Second)
	if !ok || l.err == nil || errors.Is(l.err, io.EOF) {
		t.Fatalf("after the cut: %+v (want a broken stream, not a clean end)", l)
	}
	waitFor(t, func() bool {
		r := p.Records()
		return len(r) == 1 && r[0].Has(faultproxy.FaultCut) && !r[0].End.IsZero()
	})
	// The proxy still serves new connections.
	if resp, _, err := get(t, c, p.URL()+"/echo"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the cut: %v %v", resp, err)
	}
}

func TestStallHoldsBytesWithoutClosing(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	b.frames <- "{\"n\":1}\n"
	if _, ok := next(t, lines, 5*time.Second); !ok {
		t.Fatal("no first frame")
	}
	p.Stall(true)
	b.frames <- "{\"n\":2}\n"
	if l, ok := next(t, lines, 300*time.Millisecond); ok {
		t.Fatalf("stalled stream delivered %+v", l)
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := c.Get(p.URL() + "/echo")
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a request was answered during the stall: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	p.Stall(false)
	if l, ok := next(t, lines, 5*time.Second); !ok || l.s != "{\"n\":2}\n" {
		t.Fatalf("after the stall: %+v", l)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	recs := p.Records()
	if !recs[0].Stalled || !recs[1].Stalled {
		t.Fatalf("records do not show the stall: %+v", recs)
	}
}

func TestStallOpenHoldsOnlyExchangesInFlight(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	waitFor(t, func() bool { return p.OpenWatches() == 1 })
	if n := p.StallOpen(); n != 1 {
		t.Fatalf("StallOpen held %d exchanges, want 1", n)
	}
	b.frames <- "{\"n\":1}\n"
	if l, ok := next(t, lines, 300*time.Millisecond); ok {
		t.Fatalf("held stream delivered %+v", l)
	}
	if resp, _, err := get(t, c, p.URL()+"/echo"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a new request during StallOpen: %v %v", resp, err)
	}
	p.Stall(false)
	if l, ok := next(t, lines, 5*time.Second); !ok || l.s != "{\"n\":1}\n" {
		t.Fatalf("after release: %+v", l)
	}
}

func TestCloseWatchMidFrame(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	waitFor(t, func() bool { return p.OpenWatches() == 1 })
	if n := p.CloseWatchMidFrame(); n != 1 {
		t.Fatalf("armed %d watches", n)
	}
	frame := "{\"type\":\"ADDED\",\"object\":{}}\n"
	b.frames <- frame
	l, ok := next(t, lines, 5*time.Second)
	if !ok || l.s != frame[:len(frame)/2] || !errors.Is(l.err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %+v, want %q and an unexpected EOF", l, frame[:len(frame)/2])
	}
	waitFor(t, func() bool { return p.Records()[0].Has(faultproxy.FaultMidFrame) })
}

func TestInjectMalformedFrame(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	b.frames <- "{\"n\":1}\n"
	if _, ok := next(t, lines, 5*time.Second); !ok {
		t.Fatal("no first frame")
	}
	if n := p.InjectMalformedFrame(); n != 1 {
		t.Fatalf("injected into %d watches", n)
	}
	if l, ok := next(t, lines, 5*time.Second); !ok || l.s != faultproxy.MalformedFrame {
		t.Fatalf("got %+v, want the malformed frame", l)
	}
	if json.Valid([]byte(faultproxy.MalformedFrame)) {
		t.Fatal("MalformedFrame is valid JSON")
	}
	b.frames <- "{\"n\":2}\n"
	if l, ok := next(t, lines, 5*time.Second); !ok || l.s != "{\"n\":2}\n" {
		t.Fatalf("the stream did not carry on: %+v", l)
	}
	// The proxy counts a frame once it has written it, which may be just
	// after the client read it.
	waitFor(t, func() bool {
		r := p.Records()[0]
		return r.Has(faultproxy.FaultMalformed) && r.Frames == 2
	})
}

func TestDownRefusesThenRecovers(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	p.Down(700 * time.Millisecond)
	if _, _, err := get(t, c, p.URL()+"/echo"); err == nil {
		t.Fatal("a request succeeded while the proxy was down")
	}
	if p.Refused() == 0 {
		t.Fatal("no connection refused")
	}
	time.Sleep(800 * time.Millisecond)
	if resp, _, err := get(t, c, p.URL()+"/echo"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after Down: %v %v", resp, err)
	}
}

func TestDelay(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	p.Delay(300 * time.Millisecond)
	start := time.Now()
	if _, _, err := get(t, c, p.URL()+"/echo"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("answered after %v, want at least 300ms", d)
	}
}

// DelayMatching holds the matching requests only, and only n of them.
func TestDelayMatching(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	p.DelayMatching(300*time.Millisecond, 1, faultproxy.PathPrefix("/slow"))
	timed := func(path string) time.Duration {
		t.Helper()
		start := time.Now()
		if _, _, err := get(t, c, p.URL()+path); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	if d := timed("/echo"); d >= 300*time.Millisecond {
		t.Fatalf("a request that does not match waited %v", d)
	}
	if d := timed("/slow"); d < 300*time.Millisecond {
		t.Fatalf("the matching request answered after %v, want at least 300ms", d)
	}
	if d := timed("/slow"); d >= 300*time.Millisecond {
		t.Fatalf("a second matching request waited %v; the rule was for one", d)
	}
	var delayed int
	for _, r := range p.Records() {
		if r.Has(faultproxy.FaultDelay) {
			delayed++
		}
	}
	if delayed != 1 {
		t.Fatalf("%d records carry FaultDelay, want 1", delayed)
	}
}

func TestCutBeforeAndAfterForward(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	c := client(t, p)
	post := func() error {
		resp, err := c.Post(p.URL()+"/x", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	p.CutBeforeForward(1, faultproxy.Method(http.MethodPost, nil))
	if err := post(); err == nil {
		t.Fatal("POST succeeded through CutBeforeForward")
	}
	if b.hits.Load() != 0 {
		t.Fatal("the backend saw a request cut before forwarding")
	}
	p.CutAfterForward(1, faultproxy.Method(http.MethodPost, nil))
	if err := post(); err == nil {
		t.Fatal("POST succeeded through CutAfterForward")
	}
	if b.hits.Load() != 1 {
		t.Fatalf("the backend saw %d requests, want 1", b.hits.Load())
	}
	if err := post(); err != nil {
		t.Fatalf("third POST: %v", err)
	}
	recs := p.Records()
	if !recs[0].Has(faultproxy.FaultCutBeforeForward) || recs[0].UpstreamStatus != 0 || recs[0].Status != 0 {
		t.Fatalf("record 0: %+v", recs[0])
	}
	if !recs[1].Has(faultproxy.FaultCutAfterForward) || recs[1].UpstreamStatus != 200 || recs[1].Status != 0 {
		t.Fatalf("record 1: %+v", recs[1])
	}
}

func TestUpstreamUnreachableIs502(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p, err := faultproxy.New(faultproxy.Options{Upstream: "https://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, body, err := get(t, client(t, p), p.URL()+"/api")
	if err != nil || resp.StatusCode != 502 || !strings.Contains(string(body), `"kind":"Status"`) {
		t.Fatalf("%v %v %s", resp, err, body)
	}
}

func TestRESTConfigWithKdyn(t *testing.T) {
	b := newBackend(t)
	p := newProxy(t, b)
	cfg := p.RESTConfig(&rest.Config{Host: b.srv.URL, BearerToken: "secret", TLSClientConfig: rest.TLSClientConfig{CAData: b.caPEM()}})
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body, err := rc.Get().AbsPath("/version").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.Unmarshal(body, &e); err != nil || e.Auth != "Bearer secret" || e.Path != "/version" {
		t.Fatalf("%s %v", body, err)
	}
	rc.HTTPClient().CloseIdleConnections()
}

func TestCloseEndsStalledExchanges(t *testing.T) {
	b := newBackend(t)
	p, err := faultproxy.New(faultproxy.Options{Upstream: b.srv.URL, UpstreamCAData: b.caPEM()})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, p)
	_, lines := openWatch(t, c, p)
	p.Stall(true)
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if l, ok := next(t, lines, 5*time.Second); !ok || l.err == nil {
		t.Fatalf("the watch did not end: %+v", l)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
