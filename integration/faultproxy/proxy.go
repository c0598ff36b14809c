package faultproxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kdyn/kdyn/rest"
)

// Limits of one exchange.
const (
	// maxRequestBody bounds a request body the proxy reads before
	// forwarding it.
	maxRequestBody = 32 << 20
	// maxFrame bounds one watch frame (one line).
	maxFrame = 64 << 20
	// closeTimeout bounds how long Close waits for the exchanges in flight.
	closeTimeout = 10 * time.Second
)

// Options configure New.
type Options struct {
	// Upstream is the URL of the server to forward to, for example
	// "https://127.0.0.1:6443". Required.
	Upstream string
	// UpstreamCAData is the PEM CA bundle that verifies the upstream's
	// certificate. Empty means the system roots.
	UpstreamCAData []byte
	// Transport, when set, forwards the requests instead of the HTTP/1.1
	// transport built from UpstreamCAData (for example an httptest server's
	// client transport).
	Transport http.RoundTripper
	// Rewrite, when set, may change each outgoing request (its headers,
	// say) just before it is forwarded. It must not call the proxy.
	Rewrite func(out *http.Request)
}

// Proxy is a fault-injecting reverse proxy listening on 127.0.0.1. Create
// it with New; it is safe for concurrent use.
type Proxy struct {
	upstream  string // scheme://host[:port][/prefix], no trailing slash
	transport http.RoundTripper
	ownTr     *http.Transport // the transport New built, nil with Options.Transport
	rewrite   func(*http.Request)
	caPEM     []byte
	url       string
	ln        *listener
	srv       *http.Server
	serveDone chan struct{}
	ctx       context.Context // canceled by Close
	stop      context.CancelFunc
	handlers  sync.WaitGroup

	// mu guards everything below.
	mu        sync.Mutex
	closed    bool
	exchanges map[*exchange]struct{}
	rules     []*rule
	delay     time.Duration
	stalled   bool
	resume    chan struct{} // closed when the stall ends
	records   []Record
}

// New starts a proxy to opts.Upstream on a free port of 127.0.0.1.
func New(opts Options) (*Proxy, error) {
	u, err := url.Parse(opts.Upstream)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: Upstream %q is not an http(s) URL", opts.Upstream)
	}
	caPEM, cert, err := ServingCert()
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		upstream:  strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/"),
		transport: opts.Transport,
		rewrite:   opts.Rewrite,
		caPEM:     caPEM,
		serveDone: make(chan struct{}),
		exchanges: map[*exchange]struct{}{},
	}
	if p.transport == nil {
		tr, err := upstreamTransport(opts.UpstreamCAData)
		if err != nil {
			return nil, err
		}
		p.transport, p.ownTr = tr, tr
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p.ln = &listener{Listener: raw, conns: map[*conn]struct{}{}}
	p.url = "https://" + raw.Addr().String()
	p.ctx, p.stop = context.WithCancel(context.Background())
	p.srv = &http.Server{
		Handler: p,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			NextProtos:   []string{"http/1.1"},
			MinVersion:   tls.VersionTLS12,
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ReadHeaderTimeout: 10 * time.Second,
		// Cut connections make the server log TLS handshake and write
		// errors; they are the point, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.srv.Protocols = new(http.Protocols)
	p.srv.Protocols.SetHTTP1(true)
	go func() {
		defer close(p.serveDone)
		_ = p.srv.ServeTLS(p.ln, "", "")
	}()
	return p, nil
}

func upstreamTransport(caPEM []byte) (*http.Transport, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caPEM) > 0 {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("faultproxy: UpstreamCAData holds no PEM certificate")
		}
	}
	tr := &http.Transport{
		TLSClientConfig:     tc,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true, // pass the client's Accept-Encoding through as is
	}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(true)
	return tr, nil
}

// URL returns the proxy's URL, "https://127.0.0.1:PORT".
func (p *Proxy) URL() string { return p.url }

// CAData returns the PEM certificate of the CA that signed the proxy's
// serving certificate (valid for 127.0.0.1, ::1 and localhost).
func (p *Proxy) CAData() []byte { return bytes.Clone(p.caPEM) }

// RESTConfig returns a copy of base (a config for the upstream) that
// reaches the upstream through the proxy: the same credentials, the proxy's
// URL and CA.
func (p *Proxy) RESTConfig(base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.Host = p.url
	c.TLSClientConfig.CAData = p.CAData()
	c.TLSClientConfig.CAFile = ""
	c.TLSClientConfig.ServerName = ""
	c.TLSClientConfig.Insecure = false
	return c
}

// WriteKubeconfig writes a kubeconfig file (mode 0600) that reaches the
// upstream through the proxy with token, its context's namespace set to
// namespace ("" for none): for a child process or a CLI under test.
func (p *Proxy) WriteKubeconfig(path, token, namespace string) error {
	return WriteKubeconfig(path, p.URL(), p.caPEM, token, namespace)
}

// WriteKubeconfig writes a kubeconfig (0600) that reaches server, trusted
// by caPEM, with a bearer token, its context's namespace set to namespace
// ("" for none).
func WriteKubeconfig(path, server string, caPEM []byte, token, namespace string) error {
	ns := ""
	if namespace != "" {
		ns = fmt.Sprintf("    namespace: %q\n", namespace)
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: %q
    certificate-authority-data: %q
users:
- name: admin
  user:
    token: %q
contexts:
- name: proxy
  context:
    cluster: proxy
    user: admin
%scurrent-context: proxy
`, server, base64.StdEncoding.EncodeToString(caPEM), token, ns)
	return os.WriteFile(path, []byte(kc), 0o600)
}

// Close stops the proxy: it closes the listener and every connection,
// cancels every upstream request and waits (at most 10 s) for the
// exchanges in flight to end. Calls after the first return nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.stalled {
		p.stalled = false
		close(p.resume)
	}
	p.releaseHeldLocked()
	p.mu.Unlock()
	p.stop()
	err := p.srv.Close()
	p.ln.closeAll()
	<-p.serveDone
	done := make(chan struct{})
	go func() {
		p.handlers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeTimeout):
		err = errors.Join(err, fmt.Errorf("faultproxy: exchanges still running %s after Close", closeTimeout))
	}
	if p.ownTr != nil {
		p.ownTr.CloseIdleConnections()
	}
	return err
}

type connKey struct{}

// exchange is one request in flight.
type exchange struct {
	conn   net.Conn // the client's raw TCP connection
	watch  bool
	rec    int                // index in Proxy.records
	cancel context.CancelFunc // ends the exchange's context (and the upstream request)
	wake   chan struct{}      // a control action is pending (capacity 1)

	// Guarded by Proxy.mu.
	cut      bool          // the proxy cut the exchange
	release  chan struct{} // non-nil while StallOpen holds the exchange
	inject   int           // malformed frames to write
	midFrame bool          // cut inside the next frame
}

// cutConn closes the client's connection and ends the exchange.
func (p *Proxy) cutConn(ex *exchange, f Fault) {
	p.mu.Lock()
	ex.cut = true
	p.addFaultLocked(ex, f)
	p.mu.Unlock()
	if ex.conn != nil {
		ex.conn.Close()
	}
	ex.cancel()
}

// ServeHTTP forwards one request, applying the faults in force.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ex := &exchange{watch: IsWatch(r), cancel: cancel, wake: make(chan struct{}, 1)}
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		if tc, ok := c.(*tls.Conn); ok {
			c = tc.NetConn()
		}
		ex.conn = c
	}
	if !p.begin(ex, r) {
		if ex.conn != nil {
			ex.conn.Close()
		}
		return
	}
	defer p.handlers.Done()
	stopAfter := context.AfterFunc(p.ctx, cancel)
	defer stopAfter()
	defer func() { p.end(ex, ctx) }()

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		return
	}
	if len(body) > maxRequestBody {
		p.respond(ctx, w, ex, http.StatusRequestEntityTooLarge, 0, "faultproxy: request body too large")
		return
	}
	if !p.waitStall(ctx, ex) || !p.wait(ctx, p.currentDelay()) {
		return
	}
	rl := p.takeRule(r)
	switch rl.kind {
	case kindRespond:
		p.addFault(ex, FaultRespond)
		p.respond(ctx, w, ex, rl.code, rl.retryAfter, fmt.Sprintf("faultproxy: injected %d", rl.code))
		return
	case kindCutBefore:
		p.cutConn(ex, FaultCutBeforeForward)
		return
	case kindDelay:
		p.addFault(ex, FaultDelay)
		if !p.wait(ctx, rl.delay) {
			return
		}
	}
	resp, err := p.forward(ctx, r, body, ex.watch)
	if err != nil {
		if ctx.Err() == nil {
			p.addFault(ex, FaultUpstream)
			p.respond(ctx, w, ex, http.StatusBadGateway, 0, "faultproxy: upstream: "+err.Error())
		}
		return
	}
	defer resp.Body.Close()
	p.setRecord(ex, func(rec *Record) { rec.UpstreamStatus = resp.StatusCode })
	if rl.kind == kindCutAfter {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxRequestBody))
		p.cutConn(ex, FaultCutAfterForward)
		return
	}
	streamFrames := ex.watch && resp.StatusCode >= 200 && resp.StatusCode <= 299
	h := w.Header()
	for k, vs := range resp.Header {
		if hopByHop(k) || (streamFrames && strings.EqualFold(k, "Content-Length")) {
			continue
		}
		h[k] = vs
	}
	if !p.waitStall(ctx, ex) {
		return
	}
	w.WriteHeader(resp.StatusCode)
	p.setRecord(ex, func(rec *Record) { rec.Status = resp.StatusCode })
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	if streamFrames {
		next := readLine
		if strings.Contains(resp.Header.Get("Content-Type"), "protobuf") {
			next = readLengthPrefixed
		}
		p.copyFrames(ctx, w, rc, resp.Body, next, ex)
	} else {
		p.copyBody(ctx, w, rc, resp.Body, ex)
	}
}

// begin registers ex and its record; false when the proxy is closed.
func (p *Proxy) begin(ex *exchange, r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.handlers.Add(1)
	ex.rec = len(p.records)
	p.records = append(p.records, Record{
		Start: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, UserAgent: r.UserAgent(), Watch: ex.watch,
	})
	p.exchanges[ex] = struct{}{}
	return true
}

// end unregisters ex and completes its record.
func (p *Proxy) end(ex *exchange, ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.exchanges, ex)
	rec := &p.records[ex.rec]
	rec.End = time.Now()
	// Neither the proxy nor the upstream ended the exchange: the client did.
	rec.ClientClosed = ctx.Err() != nil && !ex.cut && !p.closed
}

func (p *Proxy) setRecord(ex *exchange, f func(*Record)) {
	p.mu.Lock()
	f(&p.records[ex.rec])
	p.mu.Unlock()
}

func (p *Proxy) addFault(ex *exchange, f Fault) {
	p.mu.Lock()
	p.addFaultLocked(ex, f)
	p.mu.Unlock()
}

func (p *Proxy) addFaultLocked(ex *exchange, f Fault) {
	rec := &p.records[ex.rec]
	rec.Faults = append(rec.Faults, f)
}

// forward sends the request upstream.
func (p *Proxy) forward(ctx context.Context, r *http.Request, body []byte, watch bool) (*http.Response, error) {
	uri := r.RequestURI
	if !strings.HasPrefix(uri, "/") {
		uri = r.URL.RequestURI()
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, p.upstream+uri, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if !hopByHop(k) {
			out.Header[k] = append([]string(nil), vs...)
		}
	}
	if watch {
		// Frames are split on newlines, so keep the stream uncompressed.
		out.Header.Del("Accept-Encoding")
	}
	if p.rewrite != nil {
		p.rewrite(out)
	}
	return p.transport.RoundTrip(out)
}

// hopByHop reports the headers that belong to one connection.
func hopByHop(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// wait sleeps d, or less when ctx ends; it reports whether ctx is still
// live.
func (p *Proxy) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// waitStall blocks while the proxy is stalled; it reports whether ctx is
// still live.
func (p *Proxy) waitStall(ctx context.Context, ex *exchange) bool {
	for {
		p.mu.Lock()
		var ch chan struct{}
		switch {
		case p.stalled:
			ch = p.resume
		case ex.release != nil:
			ch = ex.release
		default:
			p.mu.Unlock()
			return ctx.Err() == nil
		}
		p.records[ex.rec].Stalled = true
		p.mu.Unlock()
		select {
		case <-ch: // look again: the other kind of stall may hold it still
		case <-ctx.Done():
			return false
		}
	}
}

// listener closes new connections while the proxy is down, and tracks the
// connections it accepted so they can be cut.
type listener struct {
	net.Listener

	mu        sync.Mutex
	conns     map[*conn]struct{}
	downUntil time.Time
	refused   int
}

// Accept returns the next connection, closing those that arrive while the
// proxy is down.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if time.Now().Before(l.downUntil) {
			l.refused++
			l.mu.Unlock()
			c.Close()
			continue
		}
		tc := &conn{Conn: c, l: l}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

func (l *listener) closeAll() int {
	l.mu.Lock()
	cs := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
	return len(cs)
}

// conn is an accepted connection that leaves the listener's set on Close.
type conn struct {
	net.Conn
	l    *listener
	once sync.Once
	err  error
}

// Close closes the connection once.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.err = c.Conn.Close()
	})
	return c.err
}
