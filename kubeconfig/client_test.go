package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdyn/kdyn/rest"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// authFixture is a directory with certificate and token files and a
// kubeconfig that refers to them by relative paths.
type authFixture struct {
	dir, path string
	cfg       *Config
}

func newAuthFixture(t *testing.T, users string) authFixture {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"pki/ca.crt", "pki/client.crt", "pki/client.key", "token"} {
		writeTestFile(t, dir, f, "contents of "+f)
	}
	path := writeTestFile(t, dir, "config", `apiVersion: v1
kind: Config
current-context: main
clusters:
- name: main
  cluster:
    server: https://main.example:6443
    certificate-authority: pki/ca.crt
    tls-server-name: api.internal
- name: data
  cluster:
    server: https://data.example
    certificate-authority-data: `+b64("CA PEM")+`
- name: insecure
  cluster:
    server: https://insecure.example
    insecure-skip-tls-verify: true
- name: proxied
  cluster:
    server: https://proxied.example
    proxy-url: socks5://proxy.example:1080
- name: bad-proxy-scheme
  cluster:
    server: https://x.example
    proxy-url: ftp://proxy.example
- name: bad-proxy-url
  cluster:
    server: https://x.example
    proxy-url: "http://[::1"
- name: exec-cluster
  cluster:
    server: https://exec.example
    extensions:
    - name: client.authentication.k8s.io/exec
      extension:
        audience: kdyn
- name: no-server
  cluster:
    insecure-skip-tls-verify: true
- name: missing-ca
  cluster:
    server: https://x.example
    certificate-authority: pki/nope.crt
- name: ca-and-insecure
  cluster:
    server: https://x.example
    certificate-authority-data: `+b64("CA")+`
    insecure-skip-tls-verify: true
contexts:
- name: main
  context: {cluster: main, user: token, namespace: team-a}
users:
`+users)
	cfg, err := Load(&LoadingRules{ExplicitPath: path})
	if err != nil {
		t.Fatal(err)
	}
	return authFixture{dir: dir, path: path, cfg: cfg}
}

const fixtureUsers = `- name: token
  user:
    token: static-token
- name: token-file
  user:
    tokenFile: token
- name: cert-files
  user:
    client-certificate: pki/client.crt
    client-key: pki/client.key
- name: cert-data
  user:
    client-certificate-data: ` + "Q0VSVA==" + `
    client-key-data: ` + "S0VZ" + `
- name: basic
  user:
    username: admin
    password: hunter2
- name: impersonating
  user:
    token: t
    as: jane
    as-uid: "1234"
    as-groups: [devs, ops]
    as-user-extra:
      scopes: [view, edit]
- name: exec
  user:
    exec:
      command: ./bin/get-token
      args: [--cluster, main]
      env:
      - name: REGION
        value: eu-west-1
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: IfAvailable
      provideClusterInfo: true
      installHint: install get-token
- name: exec-beta
  user:
    exec:
      command: aws
      apiVersion: client.authentication.k8s.io/v1beta1
- name: exec-v1-no-mode
  user:
    exec:
      command: aws
      apiVersion: client.authentication.k8s.io/v1
- name: exec-alpha
  user:
    exec:
      command: aws
      apiVersion: client.authentication.k8s.io/v1alpha1
- name: oidc
  user:
    auth-provider:
      name: oidc
      config:
        id-token: secret-id-token
- name: missing-cert
  user:
    client-certificate: pki/nope.crt
    client-key: pki/client.key
- name: missing-token-file
  user:
    tokenFile: nope
- name: cert-without-key
  user:
    client-certificate-data: Q0VSVA==
- name: groups-without-user
  user:
    as-groups: [devs]
- name: token-and-basic
  user:
    token: t
    username: u
`

// comparableConfig strips what cmp cannot compare (funcs) after checking them.
func comparableConfig(t *testing.T, cfg *rest.Config) (*rest.Config, string) {
	t.Helper()
	c := rest.CopyConfig(cfg)
	proxy := ""
	if c.Proxy != nil {
		u, err := c.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "h"}})
		if err != nil {
			t.Fatal(err)
		}
		proxy = u.String()
		c.Proxy = nil
	}
	if c.ExecProvider != nil {
		if c.ExecProvider.StdinIsTerminal == nil {
			t.Error("ExecProvider.StdinIsTerminal is nil")
		}
		c.ExecProvider.StdinIsTerminal = nil
	}
	return c, proxy
}

// equateLoggers compares the logr.Logger in a rest.Config, whose fields
// are unexported, as a comparable value.
var equateLoggers = cmpopts.EquateComparable(logr.Logger{})

func TestClientConfigAuthForms(t *testing.T) {
	t.Parallel()
	fx := newAuthFixture(t, fixtureUsers)
	p := func(rel string) string { return filepath.Join(fx.dir, rel) }
	mainTLS := rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}

	tests := []struct {
		name      string
		o         Overrides
		want      *rest.Config
		wantProxy string
	}{
		{
			name: "token",
			o:    Overrides{},
			want: &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token", TLSClientConfig: mainTLS},
		},
		{
			name: "token file",
			o:    Overrides{User: "token-file"},
			want: &rest.Config{Host: "https://main.example:6443", BearerTokenFile: p("token"), TLSClientConfig: mainTLS},
		},
		{
			name: "client certificate files",
			o:    Overrides{User: "cert-files"},
			want: &rest.Config{Host: "https://main.example:6443", TLSClientConfig: rest.TLSClientConfig{
				CAFile: p("pki/ca.crt"), ServerName: "api.internal", CertFile: p("pki/client.crt"), KeyFile: p("pki/client.key"),
			}},
		},
		{
			name: "client certificate data and CA data",
			o:    Overrides{User: "cert-data", Cluster: "data"},
			want: &rest.Config{Host: "https://data.example", TLSClientConfig: rest.TLSClientConfig{
				CAData: []byte("CA PEM"), CertData: []byte("CERT"), KeyData: []byte("KEY"),
			}},
		},
		{
			name: "basic auth and insecure",
			o:    Overrides{User: "basic", Cluster: "insecure"},
			want: &rest.Config{Host: "https://insecure.example", Username: "admin", Password: "hunter2",
				TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
		},
		{
			name: "impersonation",
			o:    Overrides{User: "impersonating", Cluster: "data"},
			want: &rest.Config{Host: "https://data.example", BearerToken: "t",
				TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA PEM")},
				Impersonate: rest.ImpersonationConfig{UserName: "jane", UID: "1234", Groups: []string{"devs", "ops"},
					Extra: map[string][]string{"scopes": {"view", "edit"}}}},
		},
		{
			name:      "proxy",
			o:         Overrides{User: "token", Cluster: "proxied"},
			want:      &rest.Config{Host: "https://proxied.example", BearerToken: "static-token"},
			wantProxy: "socks5://proxy.example:1080",
		},
		{
			name: "exec with cluster extension",
			o:    Overrides{User: "exec", Cluster: "exec-cluster"},
			want: &rest.Config{Host: "https://exec.example", ExecProvider: &rest.ExecConfig{
				Command:            p("bin/get-token"),
				Args:               []string{"--cluster", "main"},
				Env:                []rest.ExecEnvVar{{Name: "REGION", Value: "eu-west-1"}},
				APIVersion:         "client.authentication.k8s.io/v1",
				InstallHint:        "install get-token",
				ProvideClusterInfo: true,
				InteractiveMode:    "IfAvailable",
				Config:             json.RawMessage(`{"audience":"kdyn"}`),
			}},
		},
		{
			name: "exec v1beta1 without interactiveMode",
			o:    Overrides{User: "exec-beta", Cluster: "data"},
			want: &rest.Config{Host: "https://data.example", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA PEM")},
				ExecProvider: &rest.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1beta1"}},
		},
		{
			name: "cluster override keeps the context's user",
			o:    Overrides{Context: "main", Cluster: "insecure", Timeout: 5 * time.Second},
			want: &rest.Config{Host: "https://insecure.example", BearerToken: "static-token",
				TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 5 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := fx.cfg.ClientConfig(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			got, proxy := comparableConfig(t, res.Config)
			if d := cmp.Diff(tt.want, got, equateLoggers); d != "" {
				t.Errorf("rest.Config (-want +got):\n%s", d)
			}
			if proxy != tt.wantProxy {
				t.Errorf("proxy %q, want %q", proxy, tt.wantProxy)
			}
		})
	}
}

func TestClientConfigOverrides(t *testing.T) {
	t.Parallel()
	fx := newAuthFixture(t, fixtureUsers)
	p := func(rel string) string { return filepath.Join(fx.dir, rel) }
	yes, no := true, false

	tests := []struct {
		name   string
		o      Overrides
		want   *rest.Config
		wantNS string
		wantOv bool
	}{
		{
			name:   "none: context namespace",
			want:   &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}},
			wantNS: "team-a",
		},
		{
			name:   "namespace",
			o:      Overrides{Namespace: "other"},
			want:   &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}},
			wantNS: "other", wantOv: true,
		},
		{
			name:   "server drops tls-server-name",
			o:      Overrides{Server: "https://elsewhere:6443"},
			want:   &rest.Config{Host: "https://elsewhere:6443", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt")}},
			wantNS: "team-a",
		},
		{
			name:   "server and tls-server-name",
			o:      Overrides{Server: "https://elsewhere:6443", TLSServerName: "kubernetes"},
			want:   &rest.Config{Host: "https://elsewhere:6443", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "kubernetes"}},
			wantNS: "team-a",
		},
		{
			name:   "insecure clears CA",
			o:      Overrides{InsecureSkipTLSVerify: &yes},
			want:   &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true, ServerName: "api.internal"}},
			wantNS: "team-a",
		},
		{
			name:   "CA replaces insecure",
			o:      Overrides{Cluster: "insecure", CertificateAuthority: p("pki/ca.crt")},
			want:   &rest.Config{Host: "https://insecure.example", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt")}},
			wantNS: "team-a",
		},
		{
			name:   "insecure false keeps CA data",
			o:      Overrides{Cluster: "data", InsecureSkipTLSVerify: &no},
			want:   &rest.Config{Host: "https://data.example", BearerToken: "static-token", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("CA PEM")}},
			wantNS: "team-a",
		},
		{
			name: "token wins over exec, cert and basic",
			o:    Overrides{User: "exec", Token: "override-token"},
			want: &rest.Config{Host: "https://main.example:6443", BearerToken: "override-token",
				TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}},
			wantNS: "team-a",
		},
		{
			name: "token wins over auth-provider",
			o:    Overrides{User: "oidc", Token: "override-token"},
			want: &rest.Config{Host: "https://main.example:6443", BearerToken: "override-token",
				TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}},
			wantNS: "team-a",
		},
		{
			name: "token override keeps impersonation",
			o:    Overrides{User: "impersonating", Token: "override-token", Impersonate: "joe"},
			want: &rest.Config{Host: "https://main.example:6443", BearerToken: "override-token",
				TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"},
				Impersonate: rest.ImpersonationConfig{UserName: "joe", UID: "1234", Groups: []string{"devs", "ops"},
					Extra: map[string][]string{"scopes": {"view", "edit"}}}},
			wantNS: "team-a",
		},
		{
			name: "client certificate files replace data",
			o:    Overrides{User: "cert-data", ClientCertificate: p("pki/client.crt"), ClientKey: p("pki/client.key")},
			want: &rest.Config{Host: "https://main.example:6443", TLSClientConfig: rest.TLSClientConfig{
				CAFile: p("pki/ca.crt"), ServerName: "api.internal", CertFile: p("pki/client.crt"), KeyFile: p("pki/client.key")}},
			wantNS: "team-a",
		},
		{
			name: "impersonation flags",
			o:    Overrides{Impersonate: "system:serviceaccount:ns:sa", ImpersonateUID: "u-1", ImpersonateGroups: []string{"g1"}},
			want: &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token",
				TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"},
				Impersonate:     rest.ImpersonationConfig{UserName: "system:serviceaccount:ns:sa", UID: "u-1", Groups: []string{"g1"}}},
			wantNS: "team-a",
		},
		{
			name:   "request timeout",
			o:      Overrides{Timeout: 30 * time.Second},
			want:   &rest.Config{Host: "https://main.example:6443", BearerToken: "static-token", Timeout: 30 * time.Second, TLSClientConfig: rest.TLSClientConfig{CAFile: p("pki/ca.crt"), ServerName: "api.internal"}},
			wantNS: "team-a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := fx.cfg.ClientConfig(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := comparableConfig(t, res.Config)
			if d := cmp.Diff(tt.want, got, equateLoggers); d != "" {
				t.Errorf("rest.Config (-want +got):\n%s", d)
			}
			if res.Namespace != tt.wantNS || res.NamespaceOverridden != tt.wantOv {
				t.Errorf("namespace %q (overridden %v), want %q (%v)", res.Namespace, res.NamespaceOverridden, tt.wantNS, tt.wantOv)
			}
		})
	}

	t.Run("server with an empty config", func(t *testing.T) {
		t.Parallel()
		res, err := (&Config{}).ClientConfig(Overrides{Server: "https://bare:6443", Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(&rest.Config{Host: "https://bare:6443", BearerToken: "t"}, res.Config, equateLoggers); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		if res.Namespace != "default" || res.Context != "" {
			t.Errorf("namespace %q context %q", res.Namespace, res.Context)
		}
	})
}

func TestClientConfigErrors(t *testing.T) {
	t.Parallel()
	fx := newAuthFixture(t, fixtureUsers)
	cfgFile := fx.path
	tests := []struct {
		name    string
		cfg     *Config
		o       Overrides
		want    []string
		notWant []string
	}{
		{
			name: "unknown context lists the defined ones",
			o:    Overrides{Context: "prod"},
			want: []string{`kubeconfig: context was not found for specified context: prod; defined contexts: main`},
		},
		{
			name: "unknown cluster",
			o:    Overrides{Cluster: "nope"},
			want: []string{`no server found for cluster "nope"; defined clusters: bad-proxy-scheme, bad-proxy-url, ca-and-insecure, data,`},
		},
		{
			name: "unknown user",
			o:    Overrides{User: "nobody"},
			want: []string{`auth info "nobody" does not exist; defined users: basic,`},
		},
		{
			name: "context naming a missing cluster",
			cfg: &Config{Contexts: map[string]*Context{"dev": {Cluster: "gone", Source: "/k/config"}},
				Clusters: map[string]*Cluster{"kind": {Server: "https://k"}}, CurrentContext: "dev"},
			want: []string{`kubeconfig: context "dev" in /k/config refers to cluster "gone", which is not defined; defined clusters: kind`},
		},
		{
			name: "current-context naming a missing context",
			cfg:  &Config{CurrentContext: "old", CurrentContextSource: "/k/config"},
			want: []string{`current-context in /k/config refers to context "old", which is not defined; no contexts are defined`},
		},
		{
			name: "no current context",
			cfg:  &Config{Contexts: map[string]*Context{"b": {}, "a": {}}, Sources: []string{"/k/config"}},
			want: []string{"no context is selected: current-context is not set in /k/config; pick one of a, b with --context"},
		},
		{
			name:    "auth-provider",
			o:       Overrides{User: "oidc"},
			want:    []string{`user "oidc" uses auth-provider "oidc", which kdyn does not support; use an exec credential plugin instead (e.g. kubelogin, gke-gcloud-auth-plugin)`},
			notWant: []string{"secret-id-token"},
		},
		{
			name: "missing client certificate file",
			o:    Overrides{User: "missing-cert"},
			want: []string{fmt.Sprintf(`user "missing-cert" in %s: client-certificate file %q`, cfgFile, filepath.Join(fx.dir, "pki/nope.crt")), "no such file"},
		},
		{
			name: "missing CA file",
			o:    Overrides{Cluster: "missing-ca"},
			want: []string{fmt.Sprintf(`cluster "missing-ca" in %s: certificate-authority file %q`, cfgFile, filepath.Join(fx.dir, "pki/nope.crt"))},
		},
		{
			name: "missing token file",
			o:    Overrides{User: "missing-token-file"},
			want: []string{`user "missing-token-file"`, "tokenFile file"},
		},
		{
			name: "certificate without key",
			o:    Overrides{User: "cert-without-key"},
			want: []string{`user "cert-without-key" in ` + cfgFile + ` has a client-certificate but no client-key`},
		},
		{
			name: "groups without a user to impersonate",
			o:    Overrides{User: "groups-without-user"},
			want: []string{"needs a user to impersonate"},
		},
		{
			name: "token and basic auth",
			o:    Overrides{User: "token-and-basic"},
			want: []string{"has both a token and a username/password"},
		},
		{
			name: "exec v1 without interactiveMode",
			o:    Overrides{User: "exec-v1-no-mode"},
			want: []string{"interactiveMode must be specified for exec-v1-no-mode to use exec authentication plugin", `user "exec-v1-no-mode" in ` + cfgFile + `: exec.interactiveMode must be set for client.authentication.k8s.io/v1`},
		},
		{
			name: "exec unsupported apiVersion",
			o:    Overrides{User: "exec-alpha"},
			want: []string{`exec.apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		},
		{
			name: "proxy scheme",
			o:    Overrides{Cluster: "bad-proxy-scheme"},
			want: []string{`cluster "bad-proxy-scheme" in ` + cfgFile + `: proxy-url "ftp://proxy.example" has scheme "ftp"`},
		},
		{
			name: "proxy URL",
			o:    Overrides{Cluster: "bad-proxy-url"},
			want: []string{`cluster "bad-proxy-url" in ` + cfgFile + `: proxy-url "http://[::1" is not a valid URL`},
		},
		{
			name: "cluster without server",
			o:    Overrides{Cluster: "no-server"},
			want: []string{`cluster "no-server" in ` + cfgFile + ` has no server`},
		},
		{
			name: "CA and insecure in the file",
			o:    Overrides{Cluster: "ca-and-insecure"},
			want: []string{`cluster "ca-and-insecure" in ` + cfgFile + ` sets insecure-skip-tls-verify together with a certificate-authority`},
		},
		{
			name: "missing CA override file",
			o:    Overrides{CertificateAuthority: "/nonexistent/ca.pem"},
			want: []string{`kubeconfig: --certificate-authority: certificate-authority file "/nonexistent/ca.pem"`},
		},
		{
			name: "CA and insecure overrides",
			o:    Overrides{CertificateAuthority: "/ca", InsecureSkipTLSVerify: new(true)},
			want: []string{"--certificate-authority and --insecure-skip-tls-verify are both set"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			if cfg == nil {
				cfg = fx.cfg
			}
			_, err := cfg.ClientConfig(tt.o)
			if err == nil {
				t.Fatal("ClientConfig succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			for _, nw := range tt.notWant {
				if strings.Contains(err.Error(), nw) {
					t.Errorf("error %q leaks %q", err, nw)
				}
			}
		})
	}

	t.Run("NotFoundError is typed", func(t *testing.T) {
		t.Parallel()
		_, err := fx.cfg.ClientConfig(Overrides{Context: "prod"})
		var nf *NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("err %T is not a *NotFoundError", err)
		}
		if d := cmp.Diff(&NotFoundError{Kind: "context", Name: "prod", ReferencedBy: "--context", Available: []string{"main"}}, nf); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
}

// The rest.Config built from a kubeconfig is accepted by rest's transport.
func TestClientConfigBuildsTransport(t *testing.T) {
	t.Parallel()
	fx := newAuthFixture(t, fixtureUsers)
	for _, o := range []Overrides{
		{User: "token", Cluster: "insecure"},
		{User: "exec-beta", Cluster: "insecure"},
		{User: "basic", Cluster: "proxied"},
	} {
		res, err := fx.cfg.ClientConfig(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rest.TransportFor(res.Config); err != nil {
			t.Errorf("TransportFor(%+v): %v", o, err)
		}
	}
}
