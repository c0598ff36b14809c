package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/rest"
)

func getVersion(t *testing.T, cfg *rest.Config) *version.Info {
	t.Helper()
	c, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return getVersionWith(t, c)
}

func getVersionWith(t *testing.T, c *rest.Client) *version.Info {
	t.Helper()
	if body, err := c.Get().AbsPath("/readyz").DoRaw(t.Context()); err != nil || string(body) != "ok" {
		t.Fatalf("/readyz = %q, %v", body, err)
	}
	body, err := c.Get().AbsPath("/version").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var v version.Info
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func TestVersionAndReadyzForEveryUserKind(t *testing.T) {
	env := testenv.Shared(t)
	for _, u := range []testenv.User{testenv.Admin, testenv.CertAdmin, testenv.Nobody} {
		t.Run(u.String(), func(t *testing.T) {
			if v := getVersion(t, env.RESTConfig(u)); v.GitVersion != "v1.37.2" {
				t.Fatalf("gitVersion = %q", v.GitVersion)
			}
		})
	}
	t.Run("kubeconfig", func(t *testing.T) {
		res, err := kubeconfig.Resolve(&kubeconfig.LoadingRules{ExplicitPath: env.KubeconfigPath(testenv.CertAdmin)}, kubeconfig.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if v := getVersion(t, res.Config); v.GitVersion != "v1.37.2" {
			t.Fatalf("gitVersion = %q", v.GitVersion)
		}
	})
}

func TestHTTP2IsNegotiated(t *testing.T) {
	env := testenv.Shared(t)
	var proto atomic.Value
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				proto.Store(resp.Proto)
			}
			return resp, err
		})
	}
	getVersion(t, cfg)
	if p := proto.Load(); p != "HTTP/2.0" {
		t.Fatalf("protocol = %v, want HTTP/2.0 (health pings need HTTP/2)", p)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// buildExecPlugin builds a tiny exec credential plugin that prints the admin
// token, counting its runs in a file.
func buildExecPlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(`package main

import (
	"fmt"
	"os"
)

func main() {
	f, _ := os.OpenFile(os.Getenv("COUNT_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	fmt.Fprintln(f, "run")
	f.Close()
	fmt.Printf(`+"`"+`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`+"`"+`, os.Getenv("TOKEN"))
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kdyn-test-plugin")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build plugin: %v\n%s", err, out)
	}
	return bin
}

func TestExecPluginUser(t *testing.T) {
	env := testenv.Shared(t)
	plugin := buildExecPlugin(t)
	count := filepath.Join(t.TempDir(), "count")
	cfg := env.RESTConfig(testenv.Admin)
	cfg.BearerToken = ""
	cfg.ExecProvider = &rest.ExecConfig{
		Command: plugin, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: "Never",
		Env: []rest.ExecEnvVar{{Name: "TOKEN", Value: env.AdminToken()}, {Name: "COUNT_FILE", Value: count}},
	}
	c, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if v := getVersionWith(t, c); v.GitVersion != "v1.37.2" {
			t.Fatalf("gitVersion = %q", v.GitVersion)
		}
	}
	// The plugin's credential has no expiry: one client runs it once for all
	// its requests.
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "run"); n != 1 {
		t.Fatalf("plugin ran %d times, want 1", n)
	}
	// The same user through a kubeconfig exec stanza.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, env.CAData(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: `+env.Host()+`, certificate-authority: `+ca+`}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: `+plugin+`
      interactiveMode: Never
      env: [{name: TOKEN, value: `+env.AdminToken()+`}, {name: COUNT_FILE, value: `+count+`}]
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := kubeconfig.Resolve(&kubeconfig.LoadingRules{ExplicitPath: kc}, kubeconfig.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if v := getVersion(t, res.Config); v.GitVersion != "v1.37.2" {
		t.Fatalf("gitVersion = %q", v.GitVersion)
	}
}

func TestImpersonationAndAuthErrors(t *testing.T) {
	env := testenv.Shared(t)
	ctx := context.Background()
	list := func(cfg *rest.Config) error {
		c, err := rest.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c.Get().Version("v1").Resource("secrets").Do(ctx).Error()
	}
	admin := env.RESTConfig(testenv.Admin)
	if err := list(admin); err != nil {
		t.Fatalf("admin list secrets: %v", err)
	}
	imp := env.RESTConfig(testenv.Admin)
	imp.Impersonate = rest.ImpersonationConfig{UserName: testenv.NobodyUserName}
	if err := list(imp); !apierrors.IsForbidden(err) {
		t.Fatalf("impersonating %s: %v, want Forbidden", testenv.NobodyUserName, err)
	} else {
		var se *apierrors.StatusError
		if !errors.As(err, &se) || !strings.Contains(se.Error(), testenv.NobodyUserName) {
			t.Fatalf("the Forbidden error does not name the user: %v", err)
		}
	}
	if err := list(env.RESTConfig(testenv.Nobody)); !apierrors.IsForbidden(err) {
		t.Fatalf("nobody: %v, want Forbidden", err)
	}
	wrong := env.RESTConfig(testenv.Admin)
	wrong.BearerToken = "not-a-real-token"
	if err := list(wrong); !apierrors.IsUnauthorized(err) {
		t.Fatalf("wrong token: %v, want Unauthorized", err)
	}
	if strings.Contains(list(wrong).Error(), "not-a-real-token") {
		t.Fatal("the error quotes the token")
	}
}

func TestTLSVerification(t *testing.T) {
	env := testenv.Shared(t)
	cfg := env.RESTConfig(testenv.Admin)
	cfg.TLSClientConfig.CAData = nil
	c, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Get().AbsPath("/version").Do(t.Context()).Error()
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without the CA: %v, want a certificate verification error", err)
	}
	cfg.TLSClientConfig.Insecure = true
	getVersion(t, cfg)
	named := env.RESTConfig(testenv.Admin)
	named.TLSClientConfig.ServerName = "wrong.example.com"
	c, _ = rest.NewForConfig(named)
	if err := c.Get().AbsPath("/version").Do(t.Context()).Error(); err == nil || !strings.Contains(err.Error(), "wrong.example.com") {
		t.Fatalf("wrong server name: %v", err)
	}
	named.TLSClientConfig.ServerName = "localhost"
	getVersion(t, named)
}

func TestInClusterConfigReachesServer(t *testing.T) {
	env := testenv.Shared(t)
	dir := t.TempDir()
	for name, data := range map[string][]byte{"token": []byte(env.AdminToken()), "ca.crt": env.CAData(), "namespace": []byte("kube-system")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	host := strings.TrimPrefix(env.Host(), "https://")
	h, p, _ := strings.Cut(host, ":")
	vars := map[string]string{"KUBERNETES_SERVICE_HOST": h, "KUBERNETES_SERVICE_PORT": p}
	cfg, ns, err := kubeconfig.InClusterOptions{
		ServiceAccountDir: dir,
		LookupEnv:         func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
	}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if ns != "kube-system" {
		t.Fatalf("namespace = %q", ns)
	}
	if v := getVersion(t, cfg); v.GitVersion != "v1.37.2" {
		t.Fatalf("gitVersion = %q", v.GitVersion)
	}
}
