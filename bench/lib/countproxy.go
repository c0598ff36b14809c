package lib

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kdyn/kdyn/integration/faultproxy"
)

// countingProxy is a TLS reverse proxy on 127.0.0.1 in front of the API
// server that records every request it forwards: when it arrived and what
// it asked for. It speaks HTTP/2 and HTTP/1.1 (ALPN), as the API server
// does, so each client keeps its own choice of protocol per request; it
// passes Accept-Encoding through and flushes every write at once, so
// compressed lists and watches stream as they would without it.
type countingProxy struct {
	url   string
	caPEM []byte // the CA its clients trust it by
	srv   *http.Server
	done  chan struct{}
	tr    *http.Transport

	mu   sync.Mutex
	reqs []proxiedRequest
}

// proxiedRequest is one request the proxy forwarded.
type proxiedRequest struct {
	at     time.Time
	method string
	path   string
	query  url.Values
}

// newCountingProxy starts a proxy to upstream (an https URL) whose serving
// certificate caPEM verifies.
func newCountingProxy(upstream string, caPEM []byte) (*countingProxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("counting proxy: upstream %q is not an https URL", upstream)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("counting proxy: no PEM certificate in the upstream's CA")
	}
	proxyCA, cert, err := faultproxy.ServingCert()
	if err != nil {
		return nil, err
	}
	p := &countingProxy{caPEM: proxyCA, done: make(chan struct{})}
	p.tr = &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true, // pass the client's Accept-Encoding through
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
		},
		Transport:     p.tr,
		FlushInterval: -1, // watches and streaming lists: every write at once
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.url = "https://" + ln.Addr().String()
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.record(r)
			rp.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(p.done)
		_ = p.srv.ServeTLS(ln, "", "")
	}()
	return p, nil
}

func (p *countingProxy) record(r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	p.reqs = append(p.reqs, proxiedRequest{at: time.Now(), method: r.Method, path: r.URL.Path, query: q})
	p.mu.Unlock()
}

// reset forgets the requests recorded so far.
func (p *countingProxy) reset() {
	p.mu.Lock()
	p.reqs = nil
	p.mu.Unlock()
}

// requestsBefore returns the requests that arrived before t.
func (p *countingProxy) requestsBefore(t time.Time) []proxiedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxiedRequest
	for _, r := range p.reqs {
		if r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// Close stops the proxy and cuts the exchanges in flight.
func (p *countingProxy) Close() error {
	err := p.srv.Close()
	<-p.done
	p.tr.CloseIdleConnections()
	return err
}

// requestClass sorts an API request for the per-kind counts: "discovery"
// (/api, /apis, a group or group-version's resource list, /version,
// /openapi), "watch" (watch=true, streaming lists included, of any
// resource), "lease" (any other request to coordination.k8s.io: leader
// election), "list", "get", or the method of anything else ("POST", "PUT",
// …; "other" for a path outside the API).
func requestClass(method, path string, query url.Values) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case path == "/version" || strings.HasPrefix(path, "/openapi"):
		return "discovery"
	case segs[0] == "api" && len(segs) <= 2:
		return "discovery" // /api, /api/v1
	case segs[0] == "apis" && len(segs) <= 3:
		return "discovery" // /apis, /apis/g, /apis/g/v
	case segs[0] != "api" && segs[0] != "apis":
		return "other"
	}
	if w := query.Get("watch"); w == "true" || w == "1" {
		return "watch"
	}
	if segs[0] == "apis" && segs[1] == "coordination.k8s.io" {
		return "lease"
	}
	if method != http.MethodGet {
		return method
	}
	rest := segs[2:] // after /api/v1
	if segs[0] == "apis" {
		rest = segs[3:] // after /apis/g/v
	}
	if rest[0] == "namespaces" && len(rest) >= 3 {
		rest = rest[2:] // a namespaced resource
	}
	if len(rest) == 1 {
		return "list"
	}
	return "get"
}
