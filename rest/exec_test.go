package rest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The exec tests run a real plugin binary, built once from
// testdata/execplugin into the parent test's temporary directory.
func TestExecPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a plugin binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found; cannot build the test plugin")
	}
	plugin := filepath.Join(t.TempDir(), "execplugin")
	build := exec.Command(goBin, "build", "-o", plugin, "./testdata/execplugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build test plugin: %v\n%s", err, out)
	}
	p := &pluginEnv{path: plugin}

	t.Run("TokenIsSentAndCached", p.testTokenIsSentAndCached)
	t.Run("ConcurrentFirstRequestsShareOneRun", p.testConcurrentFirstRequests)
	t.Run("RunsAgainAfterExpiry", p.testRunsAgainAfterExpiry)
	t.Run("CacheHonoursExpiryAndSkew", p.testCacheExpiryFakeClock)
	t.Run("RetryAfter401", p.testRetryAfter401)
	t.Run("APIVersions", p.testAPIVersions)
	t.Run("KindOptional", p.testKindOptional)
	t.Run("ClientCertificate", p.testClientCertificate)
	t.Run("ExecInfo", p.testExecInfo)
	t.Run("Errors", p.testErrors)
	t.Run("ConfigErrors", p.testConfigErrors)
	t.Run("StderrIsBounded", p.testStderrBounded)
}

type pluginEnv struct{ path string }

// config returns a Config for srv that runs the plugin with env.
func (p *pluginEnv) config(srv *httptest.Server, apiVersion string, env map[string]string) *Config {
	e := &ExecConfig{
		Command:         p.path,
		APIVersion:      apiVersion,
		InteractiveMode: "Never",
	}
	for k, v := range env {
		e.Env = append(e.Env, ExecEnvVar{Name: k, Value: v})
	}
	return &Config{
		Host:            srv.URL,
		TLSClientConfig: TLSClientConfig{CAData: serverCA(srv)},
		ExecProvider:    e,
	}
}

func serverCA(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// authServer records the Authorization header of every request and answers
// 401 for the tokens in reject.
type authServer struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []string
	bodies []string
	reject map[string]bool
}

func newAuthServer(t *testing.T, reject ...string) *authServer {
	s := &authServer{reject: map[string]bool{}}
	for _, r := range reject {
		s.reject["Bearer "+r] = true
	}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		s.mu.Lock()
		s.seen = append(s.seen, auth)
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if s.reject[auth] || auth == "" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) requests() ([]string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...), append([]string(nil), s.bodies...)
}

func runs(t *testing.T, countFile string) int {
	t.Helper()
	b, err := os.ReadFile(countFile)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func httpClient(t *testing.T, cfg *Config) *http.Client {
	t.Helper()
	c, err := HTTPClientFor(cfg)
	if err != nil {
		t.Fatalf("HTTPClientFor: %v", err)
	}
	return c
}

func get(t *testing.T, c *http.Client, u string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (p *pluginEnv) testTokenIsSentAndCached(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	count := filepath.Join(t.TempDir(), "count")
	c := httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{
		"PLUGIN_TOKEN":      "tok-%d",
		"PLUGIN_EXPIRES_IN": "1h",
		"PLUGIN_COUNT_FILE": count,
	}))
	for range 5 {
		if code, err := get(t, c, srv.URL+"/api"); err != nil || code != http.StatusOK {
			t.Fatalf("GET = %d, %v; want 200", code, err)
		}
	}
	seen, _ := srv.requests()
	want := []string{"Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-1"}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", d)
	}
	if n := runs(t, count); n != 1 {
		t.Errorf("plugin ran %d times, want 1", n)
	}

	// A request that brings its own Authorization is left alone.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api", nil)
	req.Header.Set("Authorization", "Bearer mine")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen, _ := srv.requests(); seen[len(seen)-1] != "Bearer mine" {
		t.Errorf("caller's Authorization replaced: got %q", seen[len(seen)-1])
	}
}

func (p *pluginEnv) testConcurrentFirstRequests(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	count := filepath.Join(t.TempDir(), "count")
	c := httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{
		"PLUGIN_TOKEN":      "tok-%d",
		"PLUGIN_COUNT_FILE": count,
		"PLUGIN_SLEEP":      "200ms",
	}))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api", nil)
			resp, err := c.Do(req)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := runs(t, count); n != 1 {
		t.Errorf("plugin ran %d times for 20 concurrent requests, want 1", n)
	}
}

func (p *pluginEnv) testRunsAgainAfterExpiry(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	count := filepath.Join(t.TempDir(), "count")
	// Valid for 10.3 s: inside the 10 s refresh window 0.3 s after the run.
	c := httpClient(t, p.config(srv.Server, execAPIv1beta1, map[string]string{
		"PLUGIN_TOKEN":      "tok-%d",
		"PLUGIN_EXPIRES_IN": "10.3s",
		"PLUGIN_COUNT_FILE": count,
	}))
	if code, err := get(t, c, srv.URL); err != nil || code != 200 {
		t.Fatalf("first GET = %d, %v", code, err)
	}
	time.Sleep(500 * time.Millisecond)
	if code, err := get(t, c, srv.URL); err != nil || code != 200 {
		t.Fatalf("second GET = %d, %v", code, err)
	}
	seen, _ := srv.requests()
	if d := cmp.Diff([]string{"Bearer tok-1", "Bearer tok-2"}, seen); d != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", d)
	}
	if n := runs(t, count); n != 2 {
		t.Errorf("plugin ran %d times, want 2", n)
	}
}

// testCacheExpiryFakeClock drives the cache with a fake clock.
func (p *pluginEnv) testCacheExpiryFakeClock(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	count := filepath.Join(t.TempDir(), "count")
	expiry := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := p.config(srv.Server, execAPIv1, map[string]string{
		"PLUGIN_TOKEN":      "tok-%d",
		"PLUGIN_EXPIRES_AT": expiry.Format(time.RFC3339),
		"PLUGIN_COUNT_FILE": count,
	})
	u, _ := url.Parse(srv.URL)
	a, err := newExecAuthenticator(cfg, u)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	a.now = func() time.Time { return now }

	steps := []struct {
		at        time.Time
		wantToken string
	}{
		{now, "tok-1"},
		{now.Add(time.Hour), "tok-1"},
		{expiry.Add(-execExpirySkew - time.Second), "tok-1"},
		{expiry.Add(-execExpirySkew), "tok-2"}, // inside the refresh window
		{expiry.Add(-execExpirySkew + time.Second), "tok-3"},
	}
	for i, s := range steps {
		now = s.at
		c, err := a.credential(t.Context())
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if c.token != s.wantToken {
			t.Errorf("step %d at %s: token %q, want %q", i, s.at, c.token, s.wantToken)
		}
		if !c.expiry.Equal(expiry) {
			t.Errorf("step %d: expiry %s, want %s", i, c.expiry, expiry)
		}
	}
	if n := runs(t, count); n != 3 {
		t.Errorf("plugin ran %d times, want 3", n)
	}

	// Past the expiry the plugin's answer is itself expired: a clear error.
	now = expiry.Add(time.Minute)
	_, err = a.credential(t.Context())
	if err == nil || !strings.Contains(err.Error(), "returned a credential that expired at 2099-01-01T00:00:00Z") {
		t.Errorf("expired credential: err = %v", err)
	}
}

func (p *pluginEnv) testRetryAfter401(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		body      func() io.Reader
		wantCode  int
		wantSeen  []string
		wantBody  []string
		thenCodes []int // further plain GETs
		thenSeen  []string
	}{
		{
			name:     "no body",
			body:     func() io.Reader { return nil },
			wantCode: 200,
			wantSeen: []string{"Bearer tok-1", "Bearer tok-2"},
			wantBody: []string{"", ""},
		},
		{
			name:     "replayable body",
			body:     func() io.Reader { return strings.NewReader(`{"a":1}`) },
			wantCode: 200,
			wantSeen: []string{"Bearer tok-1", "Bearer tok-2"},
			wantBody: []string{`{"a":1}`, `{"a":1}`},
		},
		{
			// No GetBody: the 401 is returned, and the next request gets
			// the fresh credential.
			name:      "one-shot body",
			body:      func() io.Reader { return io.NopCloser(strings.NewReader(`{"a":1}`)) },
			wantCode:  401,
			wantSeen:  []string{"Bearer tok-1"},
			wantBody:  []string{`{"a":1}`},
			thenCodes: []int{200},
			thenSeen:  []string{"Bearer tok-1", "Bearer tok-2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t, "tok-1")
			count := filepath.Join(t.TempDir(), "count")
			c := httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{
				"PLUGIN_TOKEN":      "tok-%d",
				"PLUGIN_COUNT_FILE": count,
			}))
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v1/namespaces", tt.body())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantCode)
			}
			seen, bodies := srv.requests()
			if d := cmp.Diff(tt.wantSeen, seen); d != "" {
				t.Errorf("Authorization headers (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantBody, bodies); d != "" {
				t.Errorf("bodies (-want +got):\n%s", d)
			}
			for _, want := range tt.thenCodes {
				if code, err := get(t, c, srv.URL); err != nil || code != want {
					t.Errorf("next GET = %d, %v; want %d", code, err, want)
				}
			}
			if tt.thenSeen != nil {
				seen, _ := srv.requests()
				if d := cmp.Diff(tt.thenSeen, seen); d != "" {
					t.Errorf("Authorization headers after (-want +got):\n%s", d)
				}
			}
			if n := runs(t, count); n != 2 {
				t.Errorf("plugin ran %d times, want 2", n)
			}
		})
	}

	t.Run("same token is not retried", func(t *testing.T) {
		t.Parallel()
		srv := newAuthServer(t, "always-bad")
		count := filepath.Join(t.TempDir(), "count")
		c := httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{
			"PLUGIN_TOKEN":      "always-bad",
			"PLUGIN_COUNT_FILE": count,
		}))
		if code, err := get(t, c, srv.URL); err != nil || code != 401 {
			t.Fatalf("GET = %d, %v; want 401", code, err)
		}
		if seen, _ := srv.requests(); len(seen) != 1 {
			t.Errorf("server saw %d requests, want 1 (no retry with an unchanged token)", len(seen))
		}
		if n := runs(t, count); n != 2 {
			t.Errorf("plugin ran %d times, want 2", n)
		}
	})
}

func (p *pluginEnv) testAPIVersions(t *testing.T) {
	t.Parallel()
	for _, v := range []string{execAPIv1, execAPIv1beta1} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t)
			info := filepath.Join(t.TempDir(), "info")
			cfg := p.config(srv.Server, v, map[string]string{"PLUGIN_TOKEN": "tok", "PLUGIN_INFO_FILE": info})
			if v == execAPIv1beta1 {
				cfg.ExecProvider.InteractiveMode = "" // optional before v1
			}
			if code, err := get(t, httpClient(t, cfg), srv.URL); err != nil || code != 200 {
				t.Fatalf("GET = %d, %v; want 200", code, err)
			}
			var got map[string]any
			b, _ := os.ReadFile(info)
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got["apiVersion"] != v {
				t.Errorf("KUBERNETES_EXEC_INFO apiVersion %v, want %s", got["apiVersion"], v)
			}
		})
	}
}

func (p *pluginEnv) testClientCertificate(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM, certDER := selfSignedClientCert(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var peers [][]byte
	var auths []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		auths = append(auths, r.Header.Get("Authorization"))
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			peers = append(peers, nil)
			return
		}
		peers = append(peers, r.TLS.PeerCertificates[0].Raw)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	count := filepath.Join(dir, "count")
	c := httpClient(t, p.config(srv, execAPIv1, map[string]string{
		"PLUGIN_CERT_FILE":  certFile,
		"PLUGIN_KEY_FILE":   keyFile,
		"PLUGIN_COUNT_FILE": count,
	}))
	for range 2 {
		if code, err := get(t, c, srv.URL); err != nil || code != 200 {
			t.Fatalf("GET = %d, %v; want 200", code, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([][]byte{certDER, certDER}, peers); d != "" {
		t.Errorf("peer certificates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"", ""}, auths); d != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", d)
	}
	if n := runs(t, count); n != 1 {
		t.Errorf("plugin ran %d times, want 1", n)
	}
}

func selfSignedClientCert(t *testing.T) (certPEM, keyPEM, der []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(42),
		Subject:      pkix.Name{CommonName: "exec-user", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), der
}

func (p *pluginEnv) testExecInfo(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	ca := serverCA(srv.Server)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*Config)
		want map[string]any
	}{
		{
			name: "without cluster info",
			edit: func(*Config) {},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{"interactive": false},
			},
		},
		{
			name: "cluster info from CA data",
			edit: func(c *Config) {
				c.ExecProvider.ProvideClusterInfo = true
				c.ExecProvider.Config = map[string]any{"audience": "kdyn-test"}
				c.TLSClientConfig.ServerName = "example.com"
			},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{
					"interactive": false,
					"cluster": map[string]any{
						"server":                     srv.URL,
						"tls-server-name":            "example.com",
						"certificate-authority-data": ca,
						"config":                     map[string]any{"audience": "kdyn-test"},
					},
				},
			},
		},
		{
			name: "cluster info from CA file",
			edit: func(c *Config) {
				c.ExecProvider.ProvideClusterInfo = true
				c.TLSClientConfig.CAData = nil
				c.TLSClientConfig.CAFile = caFile
			},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{
					"interactive": false,
					"cluster":     map[string]any{"server": srv.URL, "certificate-authority-data": ca},
				},
			},
		},
		{
			name: "interactive when stdin is a terminal",
			edit: func(c *Config) {
				c.ExecProvider.InteractiveMode = "IfAvailable"
				c.ExecProvider.StdinIsTerminal = func() bool { return true }
			},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{"interactive": true},
			},
		},
		{
			name: "IfAvailable on a terminal whose stdin the program uses",
			edit: func(c *Config) {
				c.ExecProvider.InteractiveMode = "IfAvailable"
				c.ExecProvider.StdinIsTerminal = func() bool { return true }
				c.ExecProvider.StdinUnavailable = true
			},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{"interactive": false},
			},
		},
		{
			name: "Never ignores the terminal",
			edit: func(c *Config) {
				c.ExecProvider.StdinIsTerminal = func() bool { return true }
			},
			want: map[string]any{
				"apiVersion": execAPIv1, "kind": "ExecCredential",
				"spec": map[string]any{"interactive": false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			info := filepath.Join(t.TempDir(), "info")
			cfg := p.config(srv.Server, execAPIv1, map[string]string{"PLUGIN_TOKEN": "tok", "PLUGIN_INFO_FILE": info})
			tt.edit(cfg)
			if code, err := get(t, httpClient(t, cfg), srv.URL); err != nil || code != 200 {
				t.Fatalf("GET = %d, %v; want 200", code, err)
			}
			b, err := os.ReadFile(info)
			if err != nil {
				t.Fatal(err)
			}
			// Round-trip the expectation through JSON so []byte becomes
			// base64 as it does on the wire.
			wantJSON, _ := json.Marshal(tt.want)
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("KUBERNETES_EXEC_INFO is not JSON: %v", err)
			}
			_ = json.Unmarshal(wantJSON, &want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("KUBERNETES_EXEC_INFO (-want +got):\n%s", d)
			}
		})
	}
}

// A plugin's output may leave kind out, as client-go's decoder allows
// (kubectl's own suite has such a plugin); a kind that is not
// ExecCredential is an error.
func (p *pluginEnv) testKindOptional(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	ok := p.config(srv.Server, execAPIv1, map[string]string{"PLUGIN_GARBAGE": `{"apiVersion":"` + execAPIv1 + `","status":{"token":"tok"}}`})
	if code, err := get(t, httpClient(t, ok), srv.URL); err != nil || code != 200 {
		t.Fatalf("without kind: GET = %d, %v; want 200", code, err)
	}
	wrong := p.config(srv.Server, execAPIv1, map[string]string{"PLUGIN_GARBAGE": `{"apiVersion":"` + execAPIv1 + `","kind":"Token","status":{"token":"tok"}}`})
	if _, err := get(t, httpClient(t, wrong), srv.URL); err == nil || !strings.Contains(err.Error(), `output has kind "Token", want "ExecCredential"`) {
		t.Fatalf("kind Token: %v", err)
	}
}

func (p *pluginEnv) testErrors(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-token-value"
	tests := []struct {
		name    string
		edit    func(*Config)
		env     map[string]string
		want    []string
		notWant []string
	}{
		{
			name: "binary not in PATH",
			edit: func(c *Config) {
				c.ExecProvider.Command = "kdyn-no-such-plugin"
				c.ExecProvider.InstallHint = "Install it with: brew install kdyn-no-such-plugin"
			},
			want: []string{`exec plugin "kdyn-no-such-plugin": executable not found in PATH`, "brew install kdyn-no-such-plugin"},
		},
		{
			name: "missing path",
			edit: func(c *Config) { c.ExecProvider.Command = "/nonexistent/kdyn-plugin" },
			want: []string{`exec plugin "/nonexistent/kdyn-plugin": executable not found at that path`},
		},
		{
			name: "non-zero exit",
			env:  map[string]string{"PLUGIN_STDERR": "  error: refresh token revoked, run 'login'\n", "PLUGIN_EXIT": "3"},
			want: []string{"failed with exit code 3", "its stderr:\nerror: refresh token revoked, run 'login'"},
		},
		{
			name:    "garbage output",
			env:     map[string]string{"PLUGIN_GARBAGE": "token=" + secret},
			want:    []string{"output is not a JSON ExecCredential object"},
			notWant: []string{secret},
		},
		{
			name:    "wrong apiVersion",
			env:     map[string]string{"PLUGIN_TOKEN": secret, "PLUGIN_API_VERSION": execAPIv1beta1},
			want:    []string{`output has apiVersion "client.authentication.k8s.io/v1beta1", but the exec config asks for "client.authentication.k8s.io/v1"`},
			notWant: []string{secret},
		},
		{
			name:    "expired credential",
			env:     map[string]string{"PLUGIN_TOKEN": secret, "PLUGIN_EXPIRES_AT": "2001-02-03T04:05:06Z"},
			want:    []string{"returned a credential that expired at 2001-02-03T04:05:06Z"},
			notWant: []string{secret},
		},
		{
			name:    "bad expiry",
			env:     map[string]string{"PLUGIN_TOKEN": secret, "PLUGIN_EXPIRES_AT": "tomorrow"},
			want:    []string{`status.expirationTimestamp "tomorrow" is not an RFC 3339 time`},
			notWant: []string{secret},
		},
		{
			name: "no credential",
			env:  map[string]string{},
			want: []string{"status has neither a token nor a client certificate and key"},
		},
		{
			name: "Always without a terminal",
			edit: func(c *Config) { c.ExecProvider.InteractiveMode = "Always" },
			env:  map[string]string{"PLUGIN_TOKEN": secret},
			want: []string{`interactiveMode is "Always" but standard input is not a terminal`},
		},
		{
			name: "Always on a terminal whose stdin the program uses",
			edit: func(c *Config) {
				c.ExecProvider.InteractiveMode = "Always"
				c.ExecProvider.StdinIsTerminal = func() bool { return true }
				c.ExecProvider.StdinUnavailable = true
				c.ExecProvider.StdinUnavailableMessage = "used by the manifest reader"
			},
			env:  map[string]string{"PLUGIN_TOKEN": secret},
			want: []string{`interactiveMode is "Always" but standard input is unavailable: used by the manifest reader`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t)
			cfg := p.config(srv.Server, execAPIv1, tt.env)
			if tt.edit != nil {
				tt.edit(cfg)
			}
			_, err := get(t, httpClient(t, cfg), srv.URL)
			if err == nil {
				t.Fatal("GET succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, nw := range tt.notWant {
				if strings.Contains(err.Error(), nw) {
					t.Errorf("error %q\nleaks %q", err, nw)
				}
			}
			if seen, _ := srv.requests(); len(seen) != 0 {
				t.Errorf("server got %d requests, want none", len(seen))
			}
		})
	}

	t.Run("half a certificate", func(t *testing.T) {
		t.Parallel()
		certPEM, _, _ := selfSignedClientCert(t)
		f := filepath.Join(t.TempDir(), "tls.crt")
		if err := os.WriteFile(f, certPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		srv := newAuthServer(t)
		_, err := get(t, httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{"PLUGIN_CERT_FILE": f})), srv.URL)
		if err == nil || !strings.Contains(err.Error(), "status.clientCertificateData is set without status.clientKeyData") {
			t.Errorf("err = %v", err)
		}
	})
}

func (p *pluginEnv) testConfigErrors(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	tests := []struct {
		name string
		edit func(*ExecConfig)
		want string
	}{
		{"empty command", func(e *ExecConfig) { e.Command = " " }, "command is empty"},
		{"unsupported apiVersion", func(e *ExecConfig) { e.APIVersion = "client.authentication.k8s.io/v1alpha1" },
			`apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		{"missing apiVersion", func(e *ExecConfig) { e.APIVersion = "" }, "apiVersion is empty"},
		{"v1 without interactiveMode", func(e *ExecConfig) { e.InteractiveMode = "" },
			"interactiveMode must be set for client.authentication.k8s.io/v1"},
		{"bad interactiveMode", func(e *ExecConfig) { e.InteractiveMode = "Sometimes" }, `interactiveMode "Sometimes" is not valid`},
		{"bad env name", func(e *ExecConfig) { e.Env = []ExecEnvVar{{Name: "A=B"}} }, `environment variable name "A=B" is not valid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := p.config(srv.Server, execAPIv1, nil)
			tt.edit(cfg.ExecProvider)
			_, err := TransportFor(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("TransportFor error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func (p *pluginEnv) testStderrBounded(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t)
	long := strings.Repeat("x", 20<<10) + "THE-END"
	_, err := get(t, httpClient(t, p.config(srv.Server, execAPIv1, map[string]string{
		"PLUGIN_STDERR": long, "PLUGIN_EXIT": "1",
	})), srv.URL)
	if err == nil {
		t.Fatal("want an error")
	}
	if len(err.Error()) > execStderrLimit+1024 {
		t.Errorf("error is %d bytes long; stderr should be bounded to about %d", len(err.Error()), execStderrLimit)
	}
	if !strings.Contains(err.Error(), "THE-END") || !strings.Contains(err.Error(), "[…]") {
		t.Errorf("error should keep the end of stderr and mark the cut: %.200q…", err)
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{limit: 5}
	for _, s := range []string{"ab", "cd", "efg"} {
		_, _ = b.Write([]byte(s))
	}
	if got := b.String(); got != "[…] cdefg" {
		t.Errorf("String() = %q", got)
	}
	var lb limitedBuffer
	lb.limit = 3
	_, _ = lb.Write([]byte("abcdef"))
	if lb.String() != "abc" || !lb.overflow {
		t.Errorf("limitedBuffer = %q, overflow %v", lb.String(), lb.overflow)
	}
}
