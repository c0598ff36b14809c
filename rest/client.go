package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"

	"github.com/kdyn/kdyn/internal/ctxsleep"
)

// Client sends requests to one API server. It is safe for concurrent use
// and meant to be shared: it holds the connection pool, the rate limiter and
// the warning de-duplication state.
type Client struct {
	base     *url.URL
	http     *http.Client
	bulk     *http.Client // HTTP/1.1 only, for bulk transfers (wire.WithBulk); nil: http serves those too
	limiter  *rate.Limiter
	timeout  time.Duration
	warnings WarningHandler
	log      logr.Logger
	verbose  int
	sleep    func(ctx context.Context, d time.Duration) error
	metrics  Metrics
	// compressWatches: every watch may come gzip-compressed
	// (Config.CompressWatches).
	compressWatches bool
}

// NewForConfig returns a Client for cfg, building its HTTP client with
// HTTPClientFor, and, unless Config.Transport is set, a second one over
// HTTP/1.1 alone for requests marked Bulk.
func NewForConfig(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("rest: nil Config")
	}
	rt, bulk, err := transportsFor(cfg, true)
	if err != nil {
		return nil, err
	}
	hc, err := newHTTPClient(cfg, rt)
	if err != nil {
		return nil, err
	}
	c, err := NewForConfigAndClient(cfg, hc)
	if err != nil || bulk == nil {
		return c, err
	}
	if c.bulk, err = newHTTPClient(cfg, bulk); err != nil {
		return nil, err
	}
	return c, nil
}

// NewForConfigAndClient returns a Client for cfg that sends its requests
// through hc, so several clients can share one connection pool. hc should
// come from HTTPClientFor(cfg) (or carry equivalent authentication). Bulk
// requests go through hc too.
func NewForConfigAndClient(cfg *Config, hc *http.Client) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("rest: nil Config")
	}
	if hc == nil {
		return nil, errors.New("rest: nil http.Client")
	}
	base, err := serverURL(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkPlainHTTP(cfg, base); err != nil {
		return nil, err
	}
	log := cfg.Logger
	c := &Client{
		base:    base,
		http:    hc,
		timeout: cfg.Timeout,
		log:     log,
		verbose: cfg.LogVerbosity,
		sleep:   ctxsleep.Sleep,

		compressWatches: cfg.CompressWatches,
	}
	c.metrics = cfg.Metrics
	if c.metrics == nil {
		c.metrics = noMetrics{}
	}
	c.limiter = newLimiter(cfg.QPS, cfg.Burst)
	c.warnings = cfg.WarningHandler
	if c.warnings == nil {
		c.warnings = NewWarningLogger(log)
	}
	return c, nil
}

// HTTPClient returns the underlying *http.Client.
func (c *Client) HTTPClient() *http.Client { return c.http }

// UpgradeClient returns the *http.Client for requests that upgrade their
// connection (the WebSocket and SPDY streams of pods' exec, attach and
// portforward subresources), which HTTP/2 cannot carry: the client's
// HTTP/1.1 transport, with the same authentication, exec credential
// plugin state, impersonation and redirect rules as HTTPClient. A 101
// Switching Protocols response's Body is the upgraded connection, an
// io.ReadWriteCloser. A Client built with NewForConfigAndClient, or over
// Config.Transport, has no HTTP/1.1 transport of its own and returns
// HTTPClient.
func (c *Client) UpgradeClient() *http.Client {
	if c.bulk != nil {
		return c.bulk
	}
	return c.http
}

// Base returns the server URL that request paths are appended to.
func (c *Client) Base() *url.URL {
	u := *c.base
	return &u
}

// Verb starts a request with the given HTTP method.
func (c *Client) Verb(method string) *Request {
	return &Request{c: c, verb: method, params: url.Values{}}
}

// Get starts a GET request.
func (c *Client) Get() *Request { return c.Verb(http.MethodGet) }

// Post starts a POST request.
func (c *Client) Post() *Request { return c.Verb(http.MethodPost) }

// Put starts a PUT request.
func (c *Client) Put() *Request { return c.Verb(http.MethodPut) }

// Patch starts a PATCH request whose body has content type pt.
func (c *Client) Patch(pt string) *Request {
	return c.Verb(http.MethodPatch).ContentType(pt)
}

// Delete starts a DELETE request.
func (c *Client) Delete() *Request { return c.Verb(http.MethodDelete) }

func newLimiter(qps float32, burst int) *rate.Limiter {
	if qps < 0 {
		return nil
	}
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return rate.NewLimiter(rate.Limit(qps), burst)
}

// throttleLogThreshold is how long a request may wait for the client-side
// rate limiter before the wait is logged at info level.
const throttleLogThreshold = time.Second

func (c *Client) wait(ctx context.Context, r *Request) error {
	if c.limiter == nil {
		return nil
	}
	start := time.Now()
	if err := c.limiter.Wait(ctx); err != nil {
		return err
	}
	d := time.Since(start)
	c.metrics.RateLimited(r.verb, c.base.Host, d)
	if d > throttleLogThreshold {
		c.log.V(1).Info("request waited for client-side rate limit", "wait", d, "verb", r.verb, "path", r.path())
	}
	return nil
}
