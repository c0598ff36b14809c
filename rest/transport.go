package rest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Version is kdyn's version, reported in the default user agent. Builds set
// it with -ldflags "-X github.com/kdyn/kdyn/rest.Version=v1.2.3".
var Version = "v0.0.0-dev"

// DefaultUserAgent returns "kdyn/VERSION (OS/ARCH)".
func DefaultUserAgent() string {
	return fmt.Sprintf("kdyn/%s (%s/%s)", Version, runtime.GOOS, runtime.GOARCH)
}

// HTTP/2 health checking: a connection that has read nothing for
// readIdleTimeout is pinged, and closed when the ping is not answered within
// pingTimeout (net/http's native HTTP/2 health checks), so a watch on a dead connection ends instead of hanging.
const (
	readIdleTimeout = 30 * time.Second
	pingTimeout     = 15 * time.Second
)

// HTTPClientFor returns an *http.Client for cfg: TLS, HTTP/2 with health
// pings, authentication, impersonation and the user agent. Its requests are
// not rate limited and not retried; Client adds those. The client has no
// overall timeout (Config.Timeout is applied per request by Client).
func HTTPClientFor(cfg *Config) (*http.Client, error) {
	rt, _, err := transportsFor(cfg, false)
	if err != nil {
		return nil, err
	}
	return newHTTPClient(cfg, rt)
}

// newHTTPClient is the *http.Client over rt for cfg's server.
func newHTTPClient(cfg *Config, rt http.RoundTripper) (*http.Client, error) {
	base, err := serverURL(cfg)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport:     rt,
		CheckRedirect: checkRedirect(base.Host),
	}, nil
}

// checkRedirect follows at most 10 redirects and drops credentials when a
// redirect leaves the configured host.
func checkRedirect(host string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("rest: stopped after 10 redirects")
		}
		if !strings.EqualFold(req.URL.Host, host) || (req.URL.Scheme == "http" && len(via) > 0 && via[0].URL.Scheme == "https") {
			stripCredentials(req.Header)
		}
		return nil
	}
}

func stripCredentials(h http.Header) {
	h.Del("Authorization")
	for k := range h {
		if strings.HasPrefix(k, "Impersonate-") {
			h.Del(k)
		}
	}
}

// TransportFor returns the http.RoundTripper that HTTPClientFor uses.
func TransportFor(cfg *Config) (http.RoundTripper, error) {
	rt, _, err := transportsFor(cfg, false)
	return rt, err
}

// transportsFor returns TransportFor(cfg) and, if withBulk and kdyn builds
// the transport (Config.Transport is nil), the same stack over an
// HTTP/1.1-only transport for bulk transfers (wire.WithBulk); the two share the exec
// credential plugin's state.
func transportsFor(cfg *Config, withBulk bool) (rt, bulk http.RoundTripper, err error) {
	if cfg == nil {
		return nil, nil, errors.New("rest: nil Config")
	}
	base, err := serverURL(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := checkPlainHTTP(cfg, base); err != nil {
		return nil, nil, err
	}
	var exec *execAuthenticator
	if cfg.ExecProvider != nil {
		exec, err = newExecAuthenticator(cfg, base)
		if err != nil {
			return nil, nil, err
		}
	}
	if cfg.Transport != nil {
		if hasTLSSettings(cfg) {
			return nil, nil, errors.New("rest: Config.Transport and Config.TLSClientConfig are both set; set TLS options on the custom transport instead")
		}
		rt = cfg.Transport
	} else {
		tlsConfig, err := tlsConfigFor(cfg, exec)
		if err != nil {
			return nil, nil, err
		}
		rt = newHTTPTransport(cfg, tlsConfig, false)
		if withBulk {
			bulk = newHTTPTransport(cfg, tlsConfig.Clone(), true)
		}
	}
	auth := authWrapper(cfg, base, exec)
	wrap := func(rt http.RoundTripper) http.RoundTripper {
		if cfg.Logger.GetSink() != nil && cfg.LogVerbosity >= verbosityCurl {
			rt = &debugRoundTripper{next: rt, log: cfg.Logger}
		}
		rt = auth(rt)
		if cfg.WrapTransport != nil {
			rt = cfg.WrapTransport(rt)
		}
		return rt
	}
	rt = wrap(rt)
	if bulk != nil {
		bulk = wrap(bulk)
	}
	return rt, bulk, nil
}

// newHTTPTransport is kdyn's own transport for cfg: HTTP/2 when the server
// offers it, or, if http1Only, HTTP/1.1 alone (for bulk transfers).
func newHTTPTransport(cfg *Config, tlsConfig *tls.Config, http1Only bool) *http.Transport {
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	proxy := cfg.Proxy
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	dialWrapped := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrapConn(c), nil
	}
	t := &http.Transport{
		Proxy:                 proxy,
		DialContext:           dialWrapped,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   25,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     !http1Only,
		DisableCompression:    cfg.DisableCompression,
	}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	if http1Only {
		return t
	}
	t.Protocols.SetHTTP2(true)
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: readIdleTimeout, PingTimeout: pingTimeout}
	return t
}

func hasTLSSettings(cfg *Config) bool {
	t := cfg.TLSClientConfig
	return t.Insecure || t.ServerName != "" || t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" ||
		len(t.CertData) > 0 || len(t.KeyData) > 0 || len(t.CAData) > 0
}

// defaultsToTLS reports whether a Host without a scheme means https: when
// a certificate authority, a client certificate or Insecure is set, exactly
// as client-go's rest.DefaultServerUrlFor decides.
func defaultsToTLS(cfg *Config) bool {
	t := cfg.TLSClientConfig
	return t.CAFile != "" || len(t.CAData) > 0 || t.CertFile != "" || len(t.CertData) > 0 || t.Insecure
}

// serverURL parses cfg.Host (adding a scheme when it has none; an empty
// Host is "localhost", as in client-go) and appends cfg.APIPath to its path.
func serverURL(cfg *Config) (*url.URL, error) {
	host := strings.TrimSpace(cfg.Host)
	switch {
	case cfg.Host == "":
		host = "localhost"
	case host == "":
		return nil, errors.New("rest: Config.Host is blank; set it to the API server URL, e.g. https://127.0.0.1:6443, or leave it empty for localhost")
	}
	if !strings.Contains(host, "://") {
		scheme := "http://"
		if defaultsToTLS(cfg) {
			scheme = "https://"
		}
		host = scheme + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("rest: Config.Host %q is not a valid URL: %w", cfg.Host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("rest: Config.Host %q has scheme %q; use https:// (or http:// for a loopback test server)", cfg.Host, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("rest: Config.Host %q has no host", cfg.Host)
	}
	if u.User != nil {
		return nil, fmt.Errorf("rest: Config.Host %q carries credentials in the URL; set Config.Username and Config.Password instead", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("rest: Config.Host %q must not have a query or fragment", cfg.Host)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + strings.TrimSuffix(cfg.APIPath, "/")
	if u.Path != "" && !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	return u, nil
}

func hasCredentials(cfg *Config) bool {
	t := cfg.TLSClientConfig
	return cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		cfg.ExecProvider != nil || t.CertFile != "" || t.KeyFile != "" || len(t.CertData) > 0 || len(t.KeyData) > 0
}

// checkPlainHTTP refuses to send credentials over http:// unless the host is
// loopback and the user explicitly asked for an insecure connection.
func checkPlainHTTP(cfg *Config, u *url.URL) error {
	if u.Scheme != "http" || !hasCredentials(cfg) {
		return nil
	}
	if isLoopback(u.Hostname()) && cfg.TLSClientConfig.Insecure {
		return nil
	}
	return fmt.Errorf("rest: refusing to send credentials over plain http to %s; use an https:// server URL (for a loopback test server, also set insecure-skip-tls-verify)", u.Host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func tlsConfigFor(cfg *Config, exec *execAuthenticator) (*tls.Config, error) {
	t := cfg.TLSClientConfig
	tc := &tls.Config{
		MinVersion: tls.VersionTLS12,
		ServerName: t.ServerName,
		// #nosec G402 -- only when the user asked for it.
		InsecureSkipVerify: t.Insecure,
	}
	caData := t.CAData
	if len(caData) == 0 && t.CAFile != "" {
		b, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("rest: read certificate-authority %q: %w", t.CAFile, err)
		}
		caData = b
	}
	if len(caData) > 0 {
		if t.Insecure {
			return nil, errors.New("rest: a certificate authority and insecure-skip-tls-verify are both set; use one of them")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caData) {
			src := "certificate-authority-data"
			if t.CAFile != "" && len(t.CAData) == 0 {
				src = fmt.Sprintf("certificate-authority %q", t.CAFile)
			}
			return nil, fmt.Errorf("rest: %s holds no PEM certificates", src)
		}
		tc.RootCAs = pool
	}
	certData, keyData := t.CertData, t.KeyData
	if len(certData) == 0 && t.CertFile != "" {
		b, err := os.ReadFile(t.CertFile)
		if err != nil {
			return nil, fmt.Errorf("rest: read client-certificate %q: %w", t.CertFile, err)
		}
		certData = b
	}
	if len(keyData) == 0 && t.KeyFile != "" {
		b, err := os.ReadFile(t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("rest: read client-key %q: %w", t.KeyFile, err)
		}
		keyData = b
	}
	switch {
	case len(certData) > 0 && len(keyData) > 0:
		cert, err := tls.X509KeyPair(certData, keyData)
		if err != nil {
			return nil, fmt.Errorf("rest: load client certificate and key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case len(certData) > 0:
		return nil, errors.New("rest: a client certificate is set without its client key")
	case len(keyData) > 0:
		return nil, errors.New("rest: a client key is set without its client certificate")
	}
	if exec != nil && len(tc.Certificates) == 0 {
		tc.GetClientCertificate = exec.getClientCertificate
	}
	return tc, nil
}

// authWrapper returns what wraps a transport with cfg's authentication,
// impersonation and user agent headers. Credentials are only attached to
// requests for the configured host, so a redirect elsewhere never carries
// them. Every transport it wraps shares one
// bearer-token file reader (and exec's credential), so a Client's HTTP/2
// and bulk transports read the file, or run the plugin, once between them.
func authWrapper(cfg *Config, base *url.URL, exec *execAuthenticator) func(http.RoundTripper) http.RoundTripper {
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent()
	}
	proto := authRoundTripper{
		host:        base.Host,
		scheme:      base.Scheme,
		userAgent:   ua,
		impersonate: cfg.Impersonate,
		username:    cfg.Username,
		password:    cfg.Password,
		token:       cfg.BearerToken,
	}
	if cfg.BearerTokenFile != "" {
		proto.tokenFile = &tokenFile{path: cfg.BearerTokenFile, fallback: cfg.BearerToken}
	}
	return func(rt http.RoundTripper) http.RoundTripper {
		a := proto
		a.next = rt
		if exec != nil {
			return exec.wrap(&a)
		}
		return &a
	}
}

type authRoundTripper struct {
	next        http.RoundTripper
	host        string
	scheme      string
	userAgent   string
	impersonate ImpersonationConfig
	username    string
	password    string
	token       string
	tokenFile   *tokenFile
}

func (a *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", a.userAgent)
	}
	if !strings.EqualFold(req.URL.Host, a.host) || req.URL.Scheme != a.scheme {
		// Another host, or the configured host over another scheme (an
		// https→http redirect): never attach credentials.
		stripCredentials(req.Header)
		return a.next.RoundTrip(req)
	}
	if im := a.impersonate; im.UserName != "" {
		req.Header.Set("Impersonate-User", im.UserName)
		if im.UID != "" {
			req.Header.Set("Impersonate-Uid", im.UID)
		}
		for _, g := range im.Groups {
			req.Header.Add("Impersonate-Group", g)
		}
		for k, vs := range im.Extra {
			for _, v := range vs {
				req.Header.Add("Impersonate-Extra-"+headerKeyEscape(k), v)
			}
		}
	}
	if req.Header.Get("Authorization") == "" {
		switch {
		case a.tokenFile != nil:
			tok, err := a.tokenFile.get()
			if err != nil {
				return nil, err
			}
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
		case a.token != "":
			req.Header.Set("Authorization", "Bearer "+a.token)
		case a.username != "" || a.password != "":
			req.SetBasicAuth(a.username, a.password)
		}
	}
	return a.next.RoundTrip(req)
}

// headerKeyEscape escapes an Impersonate-Extra key as client-go does (and
// as the API server unescapes it, with url.PathUnescape): every byte that
// may not appear in a header field name, and '%', is %-encoded.
func headerKeyEscape(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '%' || !isHeaderTokenByte(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isHeaderTokenByte reports whether c may appear in a header field name
// (an RFC 7230 token character).
func isHeaderTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// tokenFile re-reads a bearer token file when its modification time or size
// changes, checking at most once per second.
type tokenFile struct {
	path     string
	fallback string

	mu      sync.Mutex
	checked time.Time
	modTime time.Time
	size    int64
	token   string
}

func (t *tokenFile) get() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.token != "" && now.Sub(t.checked) < time.Second {
		return t.token, nil
	}
	t.checked = now
	fi, err := os.Stat(t.path)
	if err != nil {
		if t.token != "" {
			return t.token, nil // keep the last good token through a rotation gap
		}
		if t.fallback != "" {
			return t.fallback, nil
		}
		return "", fmt.Errorf("rest: read bearer token file %q: %w", t.path, err)
	}
	if t.token != "" && fi.ModTime().Equal(t.modTime) && fi.Size() == t.size {
		return t.token, nil
	}
	b, err := os.ReadFile(t.path)
	if err != nil {
		if t.token != "" {
			return t.token, nil
		}
		return "", fmt.Errorf("rest: read bearer token file %q: %w", t.path, err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		if t.token != "" {
			return t.token, nil
		}
		return "", fmt.Errorf("rest: bearer token file %q is empty", t.path)
	}
	t.token, t.modTime, t.size = tok, fi.ModTime(), fi.Size()
	return tok, nil
}

// CloseIdleConnections passes through to the wrapped transport, so that
// http.Client.CloseIdleConnections (and a refreshed exec client
// certificate) reaches the connection pool.
func (a *authRoundTripper) CloseIdleConnections() {
	if c, ok := a.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
