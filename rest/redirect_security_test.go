package rest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Regression tests for two bugs found while writing security_test.go and
// fixed in transport.go (commit 01de0cf).

// dialTo returns a Config.Dial that connects every address to the listener
// named for it in to (by "host:port"), so that tests can use host names and
// default ports without a network.
func dialTo(to map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		target, ok := to[addr]
		if !ok {
			return nil, fmt.Errorf("dialTo: no listener for %s", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, "tcp", target)
	}
}

// recorder is a plain-http server that records the Authorization and
// Impersonate-User headers it receives.
func recorder(t *testing.T) (*httptest.Server, func() http.Header) {
	var mu sync.Mutex
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = r.Header.Clone()
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// A password in the server URL ("http://user:pass@host") was a credential
// that checkPlainHTTP did not count, so NewForConfig accepted it for a
// remote plain http host and net/http sent it as "Authorization: Basic" in
// clear. Now a server URL with credentials is refused.
func TestURLPasswordNeverSentOverPlainHTTP(t *testing.T) {
	if _, err := NewForConfig(&Config{Host: "http://alice:pw-SECRET@10.1.2.3:8080"}); err == nil {
		t.Error("NewForConfig accepted a password in an http:// URL to a host that is not loopback")
	}
	// What goes on the wire: 10.1.2.3:8080 is dialled to a local recorder.
	rec, headers := recorder(t)
	c, err := NewForConfig(&Config{Host: "http://alice:pw-SECRET@10.1.2.3:8080", Dial: dialTo(map[string]string{"10.1.2.3:8080": rec.Listener.Addr().String()})})
	if err != nil {
		return
	}
	_ = c.Get().AbsPath("/version").Do(context.Background()).Error()
	if h := headers(); h != nil && h.Get("Authorization") != "" {
		t.Errorf("sent over plain http to 10.1.2.3: Authorization: %s", h.Get("Authorization"))
	}
}

// Credentials were attached to every request whose URL.Host equaled the
// configured host, whatever its scheme, so a redirect from
// https://api.kdyn.test/ to http://api.kdyn.test/ (same host, default
// ports 443 and 80) sent the bearer token, the exec plugin's token and the
// Impersonate-* headers in clear. Now they are attached only over the
// configured scheme.
func TestHTTPSToHTTPRedirectSendsNoCredentials(t *testing.T) {
	plugin := buildSecurityPlugin(t)
	rec, headers := recorder(t)
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://api.kdyn.test/stolen", http.StatusFound)
	}))
	defer origin.Close()
	dial := dialTo(map[string]string{"api.kdyn.test:443": origin.Listener.Addr().String(), "api.kdyn.test:80": rec.Listener.Addr().String()})
	for name, edit := range map[string]func(*Config){
		"token": func(c *Config) { c.BearerToken = "tok-SECRET" },
		"exec": func(c *Config) {
			c.ExecProvider = &ExecConfig{Command: plugin, APIVersion: execAPIv1, InteractiveMode: "Never",
				Env: []ExecEnvVar{{Name: "KDYN_PLUGIN_TOKEN", Value: "tok-SECRET"}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &Config{Host: "https://api.kdyn.test", Dial: dial, Impersonate: ImpersonationConfig{UserName: "jane"},
				// httptest's certificate is for example.com.
				TLSClientConfig: TLSClientConfig{CAData: secServerCA(origin), ServerName: "example.com"}}
			edit(cfg)
			c, err := NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Get().AbsPath("/version").Do(context.Background()).Error()
			h := headers()
			if h == nil {
				return // the downgrade was refused
			}
			if a := h.Get("Authorization"); a != "" {
				t.Errorf("after an https→http redirect the token went out in clear: Authorization: %s", a)
			}
			if u := h.Get("Impersonate-User"); u != "" {
				t.Errorf("after an https→http redirect: Impersonate-User: %s", u)
			}
		})
	}
}
