// Package lib is the library benchmark harness: kdyn against client-go,
// side by side, on one real control plane (integration/testenv).
package lib

import (
	"net/http"
	"sync/atomic"

	cgrest "k8s.io/client-go/rest"

	krest "github.com/kdyn/kdyn/rest"
)

// Conn is what a process needs to reach the control plane. The parent
// passes it to children as JSON in an environment variable.
type Conn struct {
	Host  string `json:"host"`
	Token string `json:"token"`
	CA    []byte `json:"ca"`
}

// Limits are the client-side rate limits given to both contenders. QPS < 0
// disables the limiter in both libraries.
type Limits struct {
	QPS   float32
	Burst int
}

// Unlimited disables client-side rate limiting in both libraries.
var Unlimited = Limits{QPS: -1, Burst: 0}

func (l Limits) String() string {
	if l.QPS < 0 {
		return "client-side rate limit off (QPS<0) for both"
	}
	return "QPS " + ftoa(float64(l.QPS), 0) + " / Burst " + itoa(l.Burst) + " for both"
}

// Counter counts HTTP round trips through a wrapped transport.
type Counter struct{ n atomic.Int64 }

// N returns the number of requests seen.
func (c *Counter) N() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

// Wrap returns a WrapTransport function counting into c.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper { return &countingRT{rt: rt, c: c} }

type countingRT struct {
	rt http.RoundTripper
	c  *Counter
}

func (t *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	t.c.n.Add(1)
	return t.rt.RoundTrip(r)
}

func (t *countingRT) CloseIdleConnections() {
	if ci, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// Kdyn returns a kdyn config. c may be nil (no counting).
func (cn Conn) Kdyn(l Limits, c *Counter) *krest.Config {
	cfg := &krest.Config{Host: cn.Host, BearerToken: cn.Token, QPS: l.QPS, Burst: l.Burst}
	cfg.TLSClientConfig.CAData = cn.CA
	cfg.WarningHandler = krest.NoWarnings{}
	if c != nil {
		cfg.WrapTransport = c.Wrap
	}
	return cfg
}

// ClientGo returns a client-go config for the same server and user. Proxy is
// set (to the default, ProxyFromEnvironment) so that client-go does not
// share one cached TLS transport between clients: each client gets its own
// connection pool, as each kdyn client does.
func (cn Conn) ClientGo(l Limits, c *Counter) *cgrest.Config {
	cfg := &cgrest.Config{Host: cn.Host, BearerToken: cn.Token, QPS: l.QPS, Burst: l.Burst}
	cfg.TLSClientConfig.CAData = cn.CA
	cfg.Proxy = http.ProxyFromEnvironment
	cfg.WarningHandler = cgrest.NoWarnings{}
	if c != nil {
		cfg.WrapTransport = c.Wrap
	}
	return cfg
}
