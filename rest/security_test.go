package rest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Security properties of package rest, each proved against a local TLS or
// plain test server (the real API server is in integration/security_test.go).

// secLogger returns a logger that keeps everything, at every level, as JSON.
func secLogger() (logr.Logger, *bytes.Buffer) {
	var buf syncBuffer
	enc := zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig())
	return zapr.NewLogger(zap.New(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.Level(-127)))), &buf.Buffer
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func secServerCA(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// secClientCert returns a self-signed client certificate and its key.
func secClientCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7),
		Subject:      pkix.Name{CommonName: "security-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// keySecrets are the strings of a PEM key that must never be shown: its
// base64 lines, and the whole key in base64 as kubeconfig's
// client-key-data holds it.
func keySecrets(keyPEM []byte) []string {
	var out []string
	for _, line := range strings.Split(string(keyPEM), "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	b, _ := json.Marshal(keyPEM) // []byte encodes as base64
	return append(out, strings.Trim(string(b), `"`))
}

// buildSecurityPlugin builds an exec credential plugin that prints the
// token in $KDYN_PLUGIN_TOKEN and, when $KDYN_PLUGIN_ENV_FILE is set,
// writes its whole environment there as a JSON array.
func buildSecurityPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a plugin binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found; cannot build the test plugin")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(`package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if f := os.Getenv("KDYN_PLUGIN_ENV_FILE"); f != "" {
		b, _ := json.Marshal(os.Environ())
		if err := os.WriteFile(f, b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf(`+"`"+`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`+"`"+`, os.Getenv("KDYN_PLUGIN_TOKEN"))
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kdyn-security-plugin")
	cmd := exec.Command(goBin, "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	return bin
}

// TestCredentialsNeverInLogsOrErrors sends a request with each kind of
// credential — bearer token, basic auth password, client key, exec plugin
// token, and a password in the server URL — to a TLS server answering 200,
// 401 or 403, and to one whose certificate does not verify, at every -v
// level from 0 to 10. The credential reaches the server (or the TLS
// handshake fails before anything is sent), and neither the logs nor the
// error ever contain it; logged URLs hide a URL password.
func TestCredentialsNeverInLogsOrErrors(t *testing.T) {
	plugin := buildSecurityPlugin(t)
	const (
		bearer   = "tok-SECRET-bearer-0123456789"
		password = "pw-SECRET-basic-0123456789"
		execTok  = "tok-SECRET-exec-0123456789"
		urlPass  = "pw-SECRET-in-url-0123456789"
	)
	certPEM, keyPEM := secClientCert(t)

	type seen struct {
		auth     string
		peerCert bool
	}
	var mu sync.Mutex
	var last seen
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = seen{auth: r.Header.Get("Authorization"), peerCert: r.TLS != nil && len(r.TLS.PeerCertificates) > 0}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("answer") {
		case "401":
			w.Header().Set("WWW-Authenticate", `Basic realm="kdyn"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
		case "403":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"secrets \"x\" is forbidden: User \"alice\" cannot get resource \"secrets\"","reason":"Forbidden","code":403}`))
		default:
			_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"x"},"data":{"k":"dmFsdWU="}}`))
		}
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	ca := secServerCA(srv)
	otherCA, _ := secClientCert(t) // a certificate that did not sign the server's

	kinds := []struct {
		name    string
		secrets []string
		edit    func(*Config)
		check   func(seen) bool
	}{
		{"bearer token", []string{bearer}, func(c *Config) { c.BearerToken = bearer },
			func(s seen) bool { return s.auth == "Bearer "+bearer }},
		{"basic auth", []string{password}, func(c *Config) { c.Username, c.Password = "alice", password },
			func(s seen) bool { return strings.HasPrefix(s.auth, "Basic ") }},
		{"client key", keySecrets(keyPEM), func(c *Config) {
			c.TLSClientConfig.CertData, c.TLSClientConfig.KeyData = certPEM, keyPEM
		}, func(s seen) bool { return s.peerCert }},
		{"exec token", []string{execTok}, func(c *Config) {
			c.ExecProvider = &ExecConfig{Command: plugin, APIVersion: execAPIv1, InteractiveMode: "Never",
				Env: []ExecEnvVar{{Name: "KDYN_PLUGIN_TOKEN", Value: execTok}}}
		}, func(s seen) bool { return s.auth == "Bearer "+execTok }},
		{"password in the server URL", []string{urlPass}, func(c *Config) {
			c.Host = strings.Replace(c.Host, "https://", "https://alice:"+urlPass+"@", 1)
		}, func(s seen) bool { return strings.HasPrefix(s.auth, "Basic ") }},
	}
	for _, kind := range kinds {
		for _, answer := range []string{"200", "401", "403", "tls-failure"} {
			t.Run(kind.name+"/"+answer, func(t *testing.T) {
				for v := 0; v <= 10; v++ {
					log, buf := secLogger()
					cfg := &Config{Host: srv.URL, Logger: log, LogVerbosity: v, QPS: -1,
						TLSClientConfig: TLSClientConfig{CAData: ca}}
					if answer == "tls-failure" {
						cfg.TLSClientConfig.CAData = otherCA
					}
					kind.edit(cfg)
					c, err := NewForConfig(cfg)
					if kind.name == "password in the server URL" {
						// Refused outright: credentials belong in Username and
						// Password, and the refusal must not quote them.
						if err == nil || strings.Contains(err.Error(), urlPass) {
							t.Fatalf("-v %d: NewForConfig = %v, want a refusal that hides the password", v, err)
						}
						return
					}
					if err != nil {
						t.Fatalf("-v %d: NewForConfig: %v", v, err)
					}
					mu.Lock()
					last = seen{}
					mu.Unlock()
					err = c.Get().Version("v1").Namespace("d").Resource("secrets").Name("x").Param("answer", answer).Do(context.Background()).Error()
					switch {
					case answer == "200" && err != nil:
						t.Fatalf("-v %d: %v", v, err)
					case answer != "200" && err == nil:
						t.Fatalf("-v %d: no error for answer %s", v, answer)
					}
					mu.Lock()
					got := last
					mu.Unlock()
					if answer != "tls-failure" && !kind.check(got) {
						t.Fatalf("-v %d: the server did not receive the credential (saw %+v); the test proves nothing", v, got)
					}
					if answer == "tls-failure" && (err == nil || !strings.Contains(err.Error(), "certificate")) {
						t.Fatalf("-v %d: TLS failure error %v does not say it is about the certificate", v, err)
					}
					out := buf.String()
					if err != nil {
						out += "\n" + err.Error()
					}
					for _, s := range kind.secrets {
						if strings.Contains(out, s) {
							t.Fatalf("-v %d, answer %s: the logs or the error contain the credential %q:\n%s", v, answer, s, out)
						}
					}
					if v >= 9 && answer != "tls-failure" && kind.name != "client key" && !strings.Contains(out, "<masked>") {
						t.Fatalf("-v %d: no masked curl line:\n%s", v, out)
					}
				}
			})
		}
	}
}

// TestExecPluginEnvironment checks what an exec plugin sees: exactly the
// parent's environment, then the exec stanza's env entries (which win over
// a parent variable of the same name), then KUBERNETES_EXEC_INFO — and
// that KUBERNETES_EXEC_INFO carries no credential of the config.
func TestExecPluginEnvironment(t *testing.T) {
	plugin := buildSecurityPlugin(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	t.Setenv("KDYN_SECURITY_PARENT", "from-parent")
	t.Setenv("KDYN_SECURITY_OVERRIDDEN", "parent-value")
	envFile := filepath.Join(t.TempDir(), "env.json")
	certPEM, keyPEM := secClientCert(t)
	cfg := &Config{
		Host:            srv.URL,
		Impersonate:     ImpersonationConfig{UserName: "jane"},
		TLSClientConfig: TLSClientConfig{CAData: secServerCA(srv), ServerName: "example.com"},
		ExecProvider: &ExecConfig{
			Command: plugin, APIVersion: execAPIv1, InteractiveMode: "Never", ProvideClusterInfo: true,
			Config: map[string]any{"audience": "kdyn"},
			Env: []ExecEnvVar{
				{Name: "KDYN_PLUGIN_TOKEN", Value: "tok-from-plugin"},
				{Name: "KDYN_PLUGIN_ENV_FILE", Value: envFile},
				{Name: "KDYN_SECURITY_OVERRIDDEN", Value: "exec-value"},
			},
		},
	}
	c, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get().AbsPath("/version").Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the plugin did not run: %v", err)
	}
	var got []string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}

	// Build what the documentation promises, with os/exec's rule that the
	// last of duplicate names wins.
	want := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	for _, e := range cfg.ExecProvider.Env {
		want[e.Name] = e.Value
	}
	gotMap := map[string]string{}
	for _, kv := range got {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := gotMap[k]; dup {
			t.Errorf("the plugin sees %s twice", k)
		}
		gotMap[k] = v
	}
	info := gotMap["KUBERNETES_EXEC_INFO"]
	delete(gotMap, "KUBERNETES_EXEC_INFO")
	if d := cmp.Diff(want, gotMap); d != "" {
		t.Errorf("the plugin's environment, less KUBERNETES_EXEC_INFO (-want +got):\n%s", d)
	}
	if gotMap["KDYN_SECURITY_OVERRIDDEN"] != "exec-value" {
		t.Errorf("an exec env entry did not win over the parent's variable: %q", gotMap["KDYN_SECURITY_OVERRIDDEN"])
	}
	if i := slices.IndexFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "KUBERNETES_EXEC_INFO=") }); i != len(got)-1 {
		t.Errorf("KUBERNETES_EXEC_INFO is entry %d of %d, want the last", i, len(got))
	}
	var ec struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Cluster     map[string]any `json:"cluster"`
			Interactive bool           `json:"interactive"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(info), &ec); err != nil || ec.Kind != "ExecCredential" || ec.Spec.Cluster["server"] != srv.URL {
		t.Fatalf("KUBERNETES_EXEC_INFO = %s (%v)", info, err)
	}
	for _, s := range append([]string{"tok-from-plugin", string(certPEM)}, keySecrets(keyPEM)...) {
		if strings.Contains(info, s) {
			t.Errorf("KUBERNETES_EXEC_INFO contains a credential: %s", info)
		}
	}
}

// TestCredentialsOnlyOverTLSOrLoopback extends TestPlainHTTPRefusesCredentials
// to every credential form: an exec plugin, a client certificate and a token
// file are refused over http:// to a host that is not loopback, with or
// without insecure-skip-tls-verify; impersonation alone (no credential) is
// not refused.
func TestCredentialsOnlyOverTLSOrLoopback(t *testing.T) {
	certPEM, keyPEM := secClientCert(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	exec := &ExecConfig{Command: "kdyn-never-run", APIVersion: execAPIv1, InteractiveMode: "Never"}
	for _, host := range []string{"http://10.1.2.3:8080", "http://kube.example.com", "http://[2001:db8::1]:80", "http://127.0.0.1.example.com"} {
		for _, insecure := range []bool{false, true} {
			for name, cfg := range map[string]Config{
				"exec":        {ExecProvider: exec},
				"client cert": {TLSClientConfig: TLSClientConfig{CertData: certPEM, KeyData: keyPEM}},
				"token file":  {BearerTokenFile: tokenFile},
				"password":    {Username: "u", Password: "p"},
			} {
				cfg.Host = host
				cfg.TLSClientConfig.Insecure = insecure
				if _, err := NewForConfig(&cfg); err == nil || !strings.Contains(err.Error(), "refusing to send credentials over plain http") {
					t.Errorf("%s to %s (insecure %v): %v, want a refusal", name, host, insecure, err)
				}
			}
		}
		if _, err := NewForConfig(&Config{Host: host, Impersonate: ImpersonationConfig{UserName: "jane"}}); err != nil {
			t.Errorf("impersonation without credentials to %s: %v", host, err)
		}
	}
}

// TestCrossHostRedirectDropsEveryCredential extends
// TestRedirectToOtherHostDropsCredentials: a redirect to another host
// carries no Authorization (static token or exec plugin token) and none of
// the Impersonate-* headers (user, uid, groups, extra), while a redirect on
// the same host keeps them.
func TestCrossHostRedirectDropsEveryCredential(t *testing.T) {
	plugin := buildSecurityPlugin(t)
	var mu sync.Mutex
	var otherHeaders, sameHeaders http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherHeaders = r.Header.Clone()
		mu.Unlock()
	}))
	defer other.Close()
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/landing", http.StatusTemporaryRedirect)
		case "/landing":
			mu.Lock()
			sameHeaders = r.Header.Clone()
			mu.Unlock()
		default:
			http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
		}
	}))
	defer origin.Close()
	imp := ImpersonationConfig{UserName: "jane", UID: "42", Groups: []string{"admins"}, Extra: map[string][]string{"scopes": {"all"}}}
	for name, edit := range map[string]func(*Config){
		"token": func(c *Config) { c.BearerToken = "tok-SECRET" },
		"exec": func(c *Config) {
			c.ExecProvider = &ExecConfig{Command: plugin, APIVersion: execAPIv1, InteractiveMode: "Never",
				Env: []ExecEnvVar{{Name: "KDYN_PLUGIN_TOKEN", Value: "tok-SECRET"}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := &Config{Host: origin.URL, Impersonate: imp, TLSClientConfig: TLSClientConfig{CAData: secServerCA(origin)}}
			edit(cfg)
			c, err := NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			otherHeaders, sameHeaders = nil, nil
			mu.Unlock()
			if err := c.Get().AbsPath("/elsewhere").Do(context.Background()).Error(); err != nil {
				t.Fatal(err)
			}
			if err := c.Get().AbsPath("/same").Do(context.Background()).Error(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if otherHeaders == nil || sameHeaders == nil {
				t.Fatal("a redirect was not followed")
			}
			for k, v := range otherHeaders {
				if k == "Authorization" || strings.HasPrefix(k, "Impersonate-") || strings.Contains(strings.Join(v, ","), "tok-SECRET") {
					t.Errorf("the other host received %s: %q", k, v)
				}
			}
			want := map[string]string{"Authorization": "Bearer tok-SECRET", "Impersonate-User": "jane", "Impersonate-Uid": "42",
				"Impersonate-Group": "admins", "Impersonate-Extra-Scopes": "all"}
			for k, v := range want {
				if got := sameHeaders.Get(k); got != v {
					t.Errorf("same-host redirect: %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestTLSPolicy checks the TLS floor and verification: a server that only
// speaks TLS 1.1 is refused; without a CA the system roots do not trust a
// private certificate; a wrong tls-server-name fails naming the name; the
// right one, or insecure-skip-tls-verify, succeeds.
func TestTLSPolicy(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS11}
	srv.StartTLS()
	defer srv.Close()
	c, err := NewForConfig(&Config{Host: srv.URL, TLSClientConfig: TLSClientConfig{CAData: secServerCA(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get().AbsPath("/version").Do(context.Background()).Error(); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("a TLS 1.1 server: %v, want a protocol version error", err)
	}

	good := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer good.Close()
	tests := []struct {
		name    string
		tls     TLSClientConfig
		wantErr string
	}{
		{"no CA", TLSClientConfig{}, "certificate signed by unknown authority"},
		{"CA", TLSClientConfig{CAData: secServerCA(good)}, ""},
		{"wrong server name", TLSClientConfig{CAData: secServerCA(good), ServerName: "wrong.kdyn.test"}, "wrong.kdyn.test"},
		{"server name in the certificate", TLSClientConfig{CAData: secServerCA(good), ServerName: "example.com"}, ""},
		{"insecure", TLSClientConfig{Insecure: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewForConfig(&Config{Host: good.URL, TLSClientConfig: tt.tls})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Get().AbsPath("/version").Do(context.Background()).Error()
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// Patches of a Secret carry its data without kind: Secret, so the
// verbosity-8 request body log used to show a merge patch's data and
// stringData and a JSON patch's values in clear.
func TestSecretPatchBodiesNotLogged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"x"},"data":{"k":"dmFsdWU="}}`))
	}))
	defer srv.Close()
	log, buf := secLogger()
	c, err := NewForConfig(&Config{Host: srv.URL, Logger: log, LogVerbosity: 8, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	patches := []struct{ pt, body string }{
		{ContentTypeMergePatch, `{"data":{"k":"U0VDUkVUVkFMVUU="}}`},
		{ContentTypeStrategicPatch, `{"stringData":{"k":"SECRETVALUE"}}`},
		{ContentTypeMergePatch, `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"stringData\":{\"k\":\"SECRETVALUE\"}}"}}}`},
		{ContentTypeJSONPatch, `[{"op":"replace","path":"/data/k","value":"U0VDUkVUVkFMVUU="}]`},
	}
	for _, p := range patches {
		if err := c.Patch(p.pt).Version("v1").Namespace("d").Resource("secrets").Name("x").Body([]byte(p.body)).Do(context.Background()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	out := buf.String()
	if !strings.Contains(out, `"M":"Request"`) || !strings.Contains(out, `"body"`) {
		t.Fatalf("no request body was logged; the test proves nothing:\n%s", out)
	}
	for _, s := range []string{"SECRETVALUE", "U0VDUkVUVkFMVUU"} {
		if strings.Contains(out, s) {
			t.Errorf("the logs contain the Secret value %q:\n%s", s, out)
		}
	}
}

// Impersonate-Extra keys were escaped with url.PathEscape, which leaves
// ':', '=', '@', ',' and ';' as they are (not valid in a header field
// name: every request failed with "invalid header field name") and '%'
// too (which the server's url.PathUnescape then rejects or misreads).
// client-go %-encodes every byte that is not a header token byte, and '%'.
func TestImpersonateExtraKeysEscapedAsClientGo(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	extra := map[string][]string{"acme.com/scope:read": {"x"}, "a%b": {"y"}, "scopes": {"z"}}
	c, err := NewForConfig(&Config{Host: srv.URL, QPS: -1, Impersonate: ImpersonationConfig{UserName: "u", Extra: extra}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get().AbsPath("/version").Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]string{}
	for k, vs := range got {
		if rest, ok := strings.CutPrefix(k, "Impersonate-Extra-"); ok {
			key, err := url.PathUnescape(rest)
			if err != nil {
				t.Fatalf("header %q does not unescape: %v", k, err)
			}
			seen[strings.ToLower(key)] = strings.Join(vs, ",")
		}
	}
	for k, vs := range extra {
		if seen[strings.ToLower(k)] != vs[0] {
			t.Errorf("extra %q: the server read %q, want %q (headers %v)", k, seen[strings.ToLower(k)], vs[0], got)
		}
	}
}

// The verbosity-8 response log of a request for secrets showed the
// last-applied annotation (which holds the Secret's data) of every row of a
// Table and every item of a metadata-only list: those objects are not
// kind: Secret, so their annotations were not redacted.
func TestSecretTableAndMetadataResponsesNotLogged(t *testing.T) {
	const annotations = `"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"stringData\":{\"k\":\"SECRETVALUE\"}}"}`
	bodies := []string{
		`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{},"columnDefinitions":[],"rows":[{"cells":["x","Opaque",1,"1d"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x",` + annotations + `}}}]}`,
		`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":[{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x",` + annotations + `}}]}`,
		`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x",` + annotations + `}}`,
	}
	for _, body := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		log, buf := secLogger()
		c, err := NewForConfig(&Config{Host: srv.URL, Logger: log, LogVerbosity: 8, QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Get().Version("v1").Namespace("d").Resource("secrets").Do(context.Background()).Error()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, `\"name\":\"x\"`) {
			t.Fatalf("the response body was not logged; the test proves nothing:\n%s", out)
		}
		if strings.Contains(out, "SECRETVALUE") {
			t.Errorf("the logs contain the Secret's data:\n%s", out)
		}
	}
}
