package rest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestRateLimiterWaits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := NewForConfig(&Config{Host: srv.URL, QPS: 2, Burst: 1, Logger: zapr.NewLogger(zap.New(core))})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 4; i++ {
		if err := c.Get().AbsPath("/x").Do(context.Background()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// 1 immediate + 3 at 2/s = at least 1.5 s.
	if d := time.Since(start); d < 1400*time.Millisecond {
		t.Fatalf("4 requests at QPS 2, burst 1 took %v; the limiter did not wait", d)
	}
	_ = logs // waits are 0.5 s each, below the 1 s logging threshold
	if n := logs.FilterMessage("request waited for client-side rate limit").Len(); n != 0 {
		t.Fatalf("%d throttle logs for waits under 1s", n)
	}
}

func TestRateLimiterLogsLongWait(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	core, logs := observer.New(zapcore.DebugLevel)
	c, err := NewForConfig(&Config{Host: srv.URL, QPS: 0.8, Burst: 1, Logger: zapr.NewLogger(zap.New(core))})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := c.Get().AbsPath("/x").Do(context.Background()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	entries := logs.FilterMessage("request waited for client-side rate limit").All()
	if len(entries) != 1 {
		t.Fatalf("throttle logs = %d, want 1", len(entries))
	}
	if w := entries[0].ContextMap()["wait"]; w == nil {
		t.Fatal("throttle log has no wait field")
	}
}

func TestRateLimiterDisabled(t *testing.T) {
	if newLimiter(-1, 0) != nil {
		t.Fatal("negative QPS must disable the limiter")
	}
	l := newLimiter(0, 0)
	if float32(l.Limit()) != DefaultQPS || l.Burst() != DefaultBurst {
		t.Fatalf("defaults: %v %d", l.Limit(), l.Burst())
	}
}

func TestWatchNotRateLimited(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
	}))
	defer srv.Close()
	c, err := NewForConfig(&Config{Host: srv.URL, QPS: 0.1, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < 3; i++ {
		w, err := c.Get().AbsPath("/w").Param("watch", "true").Watch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for range w.ResultChan() {
		}
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("watches waited for the rate limiter")
	}
}

func TestWarningsDeduplicated(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "v1beta1 is deprecated"`)
		w.Header().Add("Warning", `299 - "second"`)
	}))
	defer srv.Close()
	core, logs := observer.New(zapcore.Level(-127))
	c, err := NewForConfig(&Config{Host: srv.URL, Logger: zapr.NewLogger(zap.New(core))})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		_ = c.Get().AbsPath("/x").Do(context.Background())
	}
	got := logs.FilterMessage("server warning").All()
	if len(got) != 2 {
		t.Fatalf("warnings logged %d times, want 2 (once per distinct text)", len(got))
	}

	var mu sync.Mutex
	var seen []string
	c2, _ := NewForConfig(&Config{Host: srv.URL, WarningHandler: WarningHandlerFunc(func(code int, agent, text string) {
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
	})})
	_ = c2.Get().AbsPath("/x").Do(context.Background())
	if strings.Join(seen, "|") != "v1beta1 is deprecated|second" {
		t.Fatalf("custom handler saw %q", seen)
	}
}

func TestUserAgent(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("User-Agent"))
	}))
	defer srv.Close()
	_ = newTestClient(t, srv.URL).Get().AbsPath("/x").Do(context.Background())
	if ua := got.Load().(string); !strings.HasPrefix(ua, "kdyn/") || !strings.Contains(ua, "(") {
		t.Fatalf("User-Agent = %q", ua)
	}
	c, _ := NewForConfig(&Config{Host: srv.URL, UserAgent: "mine/1"})
	_ = c.Get().AbsPath("/x").Do(context.Background())
	if ua := got.Load().(string); ua != "mine/1" {
		t.Fatalf("User-Agent = %q", ua)
	}
}

func TestAuthHeaders(t *testing.T) {
	var hdr atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr.Store(r.Header.Clone())
	}))
	defer srv.Close()
	tokenPath := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenPath, []byte("file-token-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cfg   Config
		check func(h http.Header) string
	}{
		{"bearer", Config{BearerToken: "tok"}, func(h http.Header) string { return h.Get("Authorization") }},
		{"basic", Config{Username: "u", Password: "p"}, func(h http.Header) string { return h.Get("Authorization") }},
		{"token file", Config{BearerTokenFile: tokenPath}, func(h http.Header) string { return h.Get("Authorization") }},
		{"impersonation", Config{Impersonate: ImpersonationConfig{UserName: "jane", UID: "42", Groups: []string{"g1", "g2"}, Extra: map[string][]string{"scopes": {"a"}}}},
			func(h http.Header) string {
				return h.Get("Impersonate-User") + "," + h.Get("Impersonate-Uid") + "," + strings.Join(h.Values("Impersonate-Group"), "+") + "," + h.Get("Impersonate-Extra-Scopes")
			}},
	}
	want := map[string]string{
		"bearer":        "Bearer tok",
		"basic":         "Basic dTpw",
		"token file":    "Bearer file-token-1",
		"impersonation": "jane,42,g1+g2,a",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Host = srv.URL
			cfg.TLSClientConfig.Insecure = true // loopback http with credentials needs the explicit opt-in
			c, err := NewForConfig(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Get().AbsPath("/x").Do(context.Background()).Error(); err != nil {
				t.Fatal(err)
			}
			if got := tt.check(hdr.Load().(http.Header)); got != want[tt.name] {
				t.Errorf("got %q, want %q", got, want[tt.name])
			}
		})
	}
}

func TestTokenFileRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf := &tokenFile{path: path}
	if tok, err := tf.get(); err != nil || tok != "one" {
		t.Fatalf("got %q, %v", tok, err)
	}
	if err := os.WriteFile(path, []byte("two-rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf.checked = time.Time{} // pretend a second has passed
	if tok, err := tf.get(); err != nil || tok != "two-rotated" {
		t.Fatalf("after rotation got %q, %v", tok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	tf.checked = time.Time{}
	if tok, err := tf.get(); err != nil || tok != "two-rotated" {
		t.Fatalf("during a rotation gap got %q, %v", tok, err)
	}
	missing := &tokenFile{path: path + ".none"}
	if _, err := missing.get(); err == nil || !strings.Contains(err.Error(), path+".none") {
		t.Fatalf("missing token file error = %v", err)
	}
}

func TestPlainHTTPRefusesCredentials(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"remote http with token", Config{Host: "http://10.1.2.3:8080", BearerToken: "t"}, false},
		{"remote http with basic", Config{Host: "http://example.com", Username: "u", Password: "p"}, false},
		{"loopback http with token, no insecure", Config{Host: "http://127.0.0.1:8080", BearerToken: "t"}, false},
		{"loopback http with token and insecure", Config{Host: "http://127.0.0.1:8080", BearerToken: "t", TLSClientConfig: TLSClientConfig{Insecure: true}}, true},
		{"localhost http with insecure", Config{Host: "http://localhost:8080", BearerToken: "t", TLSClientConfig: TLSClientConfig{Insecure: true}}, true},
		{"remote http with insecure", Config{Host: "http://10.1.2.3:8080", BearerToken: "t", TLSClientConfig: TLSClientConfig{Insecure: true}}, false},
		{"remote http anonymous", Config{Host: "http://10.1.2.3:8080"}, true},
		{"https with token", Config{Host: "https://10.1.2.3", BearerToken: "t"}, true},
		// An empty Host is http://localhost (client-go's default), and
		// still no place for credentials without insecure.
		{"empty host with token", Config{BearerToken: "t"}, false},
		{"remote host without scheme, server name and token", Config{Host: "10.1.2.3:6443", BearerToken: "t", TLSClientConfig: TLSClientConfig{ServerName: "k"}}, false},
		{"empty host anonymous", Config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewForConfig(&tt.cfg)
			if tt.ok && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "refusing to send credentials over plain http") {
					t.Fatalf("error = %v, want a refusal", err)
				}
				if strings.Contains(err.Error(), "t\"") || strings.Contains(err.Error(), tt.cfg.Password+"\"") && tt.cfg.Password != "" {
					t.Fatalf("error leaks a credential: %v", err)
				}
			}
		})
	}
}

func TestRedirectToOtherHostDropsCredentials(t *testing.T) {
	var otherAuth atomic.Value
	otherAuth.Store("unset")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherAuth.Store(r.Header.Get("Authorization") + "|" + r.Header.Get("Impersonate-User"))
	}))
	defer other.Close()
	var sameAuth atomic.Value
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/landing":
			sameAuth.Store(r.Header.Get("Authorization"))
		default:
			// other.URL is 127.0.0.1 on another port: a different host.
			http.Redirect(w, r, other.URL+"/stolen", http.StatusFound)
		}
	}))
	defer origin.Close()
	c, err := NewForConfig(&Config{Host: origin.URL, BearerToken: "secret-token", Impersonate: ImpersonationConfig{UserName: "x"},
		TLSClientConfig: TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get().AbsPath("/elsewhere").Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	if got := otherAuth.Load().(string); got != "|" {
		t.Fatalf("credentials forwarded to another host: %q", got)
	}
	if err := c.Get().AbsPath("/same").Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	if got, _ := sameAuth.Load().(string); got != "Bearer secret-token" {
		t.Fatalf("same-host redirect lost its credentials: %q", got)
	}
}

func TestLogsNeverContainCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"password":"c2VjcmV0LWRhdGE="}}`))
	}))
	defer srv.Close()
	for _, v := range []int{0, 1, 5, 6, 7, 8, 9, 10} {
		t.Run("v"+string(rune('0'+v%10))+map[bool]string{true: "+", false: ""}[v >= 10], func(t *testing.T) {
			var buf bytes.Buffer
			enc := zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig())
			log := zapr.NewLogger(zap.New(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.Level(-127))))
			c, err := NewForConfig(&Config{Host: srv.URL, BearerToken: "tok-SUPERSECRET", Username: "", LogVerbosity: v, Logger: log,
				TLSClientConfig: TLSClientConfig{Insecure: true}})
			if err != nil {
				t.Fatal(err)
			}
			body := []byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"stringData":{"k":"plain-SUPERSECRET"},"data":{"x":"c2VjcmV0LWRhdGE="}}`)
			if err := c.Post().Version("v1").Namespace("d").Resource("secrets").Body(body).Do(context.Background()).Error(); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, secret := range []string{"SUPERSECRET", "c2VjcmV0LWRhdGE="} {
				if strings.Contains(out, secret) {
					t.Fatalf("log at -v %d contains %q:\n%s", v, secret, out)
				}
			}
			if v >= 6 && !strings.Contains(out, "/api/v1/namespaces/d/secrets") {
				t.Errorf("-v %d did not log the URL:\n%s", v, out)
			}
			if v >= 8 && !strings.Contains(out, "REDACTED") {
				t.Errorf("-v %d did not log a redacted body:\n%s", v, out)
			}
			if v >= 9 && !strings.Contains(out, "Bearer <masked>") {
				t.Errorf("-v %d did not log a masked curl line:\n%s", v, out)
			}
			if v < 6 && out != "" {
				t.Errorf("-v %d logged:\n%s", v, out)
			}
		})
	}
}

func TestConfigStringRedacts(t *testing.T) {
	cfg := &Config{Host: "https://h", BearerToken: "tok-SECRET", Password: "pw-SECRET",
		TLSClientConfig: TLSClientConfig{KeyData: []byte("key-SECRET"), CertData: []byte("cert")}}
	s := cfg.String()
	if strings.Contains(s, "SECRET") {
		t.Fatalf("String() leaks: %s", s)
	}
	if !strings.Contains(s, "https://h") {
		t.Fatalf("String() lost the host: %s", s)
	}
}

func TestStreamReturnsBodyOrError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			w.WriteHeader(404)
			return
		}
		_, _ = w.Write([]byte("streamed"))
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	rc, err := c.Get().AbsPath("/ok").Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "streamed" {
		t.Fatalf("got %q", b)
	}
	if _, err := c.Get().AbsPath("/missing").Stream(context.Background()); err == nil {
		t.Fatal("404 stream returned no error")
	}
}
