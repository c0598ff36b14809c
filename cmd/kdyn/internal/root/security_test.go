package root

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/internal/fileowner"
)

// Security properties of the kdyn command line, run in process against a
// local server answering the discovery documents captured from a real
// kube-apiserver (../../discovery/testdata/aggregated).

// discoveryServer serves aggregated discovery for /api and /apis, and 404
// for anything else.
func discoveryServer(t *testing.T) *httptest.Server {
	t.Helper()
	return clitest.APIServer(t, http.NotFound)
}

// listed reports whether api-resources printed the served resources: the
// captured documents mark metrics.k8s.io/v1beta1 stale, for which
// api-resources exits 1 after printing everything else.
func listed(r clitest.Result) bool {
	stale := r.Code == 1 && strings.Contains(r.Stderr, "metrics.k8s.io/v1beta1")
	return (r.Code == 0 || stale) && strings.Contains(r.Stdout, "deployments.apps")
}

// discoveryCacheDir is where kdyn keeps the discovery documents of server
// under the --cache-dir root.
func discoveryCacheDir(t *testing.T, root, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "discovery", discovery.HostDirName(u.Host))
}

// otherUID is a uid that is neither the current user's nor root's.
func otherUID() int {
	if os.Getuid() == 65534 {
		return 65533
	}
	return 65534
}

// giveAway makes dir, and everything below it, belong to otherUID() as
// kdyn's cache-directory check sees it, until the test ends. The owner is
// faked (fileowner.Fake) rather than changed with os.Chown, which only root
// may do, so that the tests that refuse another user's directory run as
// any user. Tests that call it must not run in parallel.
func giveAway(t *testing.T, dir string) {
	t.Cleanup(fileowner.Fake(map[string]int{dir: otherUID()}))
}

// TestCacheDirIsPrivate: kdyn creates its --cache-dir tree with mode 0700
// and its cache files with mode 0600.
func TestCacheDirIsPrivate(t *testing.T) {
	srv := discoveryServer(t)
	root := filepath.Join(t.TempDir(), "new", "kdyn-cache")
	r := clitest.Run(Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", root, "api-resources", "-o", "name")
	if !listed(r) {
		t.Fatalf("api-resources: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("kdyn wrote no cache file; the test proves nothing")
	}
}

// TestUnsafeCacheDirIsRefused: a discovery cache directory that is
// world-writable, group-writable or owned by another user, holding a
// poisoned /apis document, is not used: kdyn warns once on stderr, asks
// the server instead, succeeds, and neither reads nor writes the
// directory. A control run with a safe directory shows that the same
// poisoned document would otherwise be read. Every case runs as any user:
// the directory is given away with a fake owner (see giveAway).
func TestUnsafeCacheDirIsRefused(t *testing.T) {
	srv := discoveryServer(t)
	kc := clitest.WriteKubeconfig(t, srv.URL)
	poison, err := json.Marshal(map[string]any{
		"path": "/apis", "contentType": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
		"fetchedAt": time.Now().UTC().Format(time.RFC3339), "body": map[string]any{
			"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
			"items": []any{map[string]any{"metadata": map[string]any{"name": "poisoned.example"}, "versions": []any{map[string]any{
				"version": "v1", "resources": []any{map[string]any{"resource": "traps", "scope": "Cluster", "responseKind": map[string]any{"kind": "Trap"}, "verbs": []any{"get", "list"}}},
			}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// plant makes the discovery cache directory with the poisoned
	// document, applies unsafe, and returns the cache root.
	plant := func(t *testing.T, unsafe func(t *testing.T, dir string) error) (string, string) {
		root := t.TempDir()
		dir := discoveryCacheDir(t, root, srv.URL)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "apis.json"), poison, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := unsafe(t, dir); err != nil {
			t.Fatal(err)
		}
		return root, dir
	}

	t.Run("control: a safe directory is read", func(t *testing.T) {
		root, _ := plant(t, func(*testing.T, string) error { return nil })
		r := clitest.Run(Main, "--kubeconfig", kc, "--cache-dir", root, "api-resources", "--cached", "-o", "name")
		if !strings.Contains(r.Stdout, "traps.poisoned.example") {
			t.Fatalf("the planted document was not read, so the refusals below prove nothing: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	cases := []struct {
		name, why string
		unsafe    func(t *testing.T, dir string) error
	}{
		{"world-writable", "writable by group or others", func(_ *testing.T, dir string) error { return os.Chmod(dir, 0o777) }},
		{"group-writable", "writable by group or others", func(_ *testing.T, dir string) error { return os.Chmod(dir, 0o770) }},
		{"owned by another user", fmt.Sprintf("owned by uid %d", otherUID()), func(t *testing.T, dir string) error {
			giveAway(t, dir)
			return nil
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			root, dir := plant(t, tt.unsafe)
			before, _ := os.ReadDir(dir)
			r := clitest.Run(Main, "--kubeconfig", kc, "--cache-dir", root, "api-resources", "--cached", "-o", "name")
			if !listed(r) {
				t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if strings.Contains(r.Stdout, "poisoned") {
				t.Fatalf("kdyn used the poisoned cache in a directory %s:\n%s", tt.why, r.Stdout)
			}
			if n := strings.Count(r.Stderr, "discovery disk cache disabled"); n != 1 || !strings.Contains(r.Stderr, tt.why) {
				t.Fatalf("stderr has %d cache warnings, want one saying %q:\n%s", n, tt.why, r.Stderr)
			}
			after, _ := os.ReadDir(dir)
			if len(after) != len(before) {
				t.Errorf("kdyn wrote into the refused directory: %d entries before, %d after", len(before), len(after))
			}
		})
	}
}

// TestConfigViewRedactsCredentials: kdyn config view (yaml, json, minify)
// never prints a token, password or client key, and prints no certificate
// data; --raw prints them all.
func TestConfigViewRedactsCredentials(t *testing.T) {
	const (
		token    = "tok-SECRET-view-0123456789"
		password = "pw-SECRET-view-0123456789"
		keyPEM   = "-----BEGIN EC PRIVATE KEY-----\nS0VZLVNFQ1JFVC12aWV3LTAxMjM0NTY3ODk=\n-----END EC PRIVATE KEY-----\n"
		certPEM  = "-----BEGIN CERTIFICATE-----\nQ0VSVC1EQVRBLXZpZXctMDEyMzQ1Njc4OQ==\n-----END CERTIFICATE-----\n"
	)
	b64 := func(s string) string {
		b, _ := json.Marshal([]byte(s))
		return strings.Trim(string(b), `"`)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
current-context: tok
clusters:
- name: c
  cluster: {server: "https://k.example:6443", certificate-authority-data: ` + b64(certPEM) + `}
users:
- name: tok
  user: {token: ` + token + `}
- name: basic
  user: {username: bob, password: ` + password + `}
- name: cert
  user: {client-certificate-data: ` + b64(certPEM) + `, client-key-data: ` + b64(keyPEM) + `}
contexts:
- name: tok
  context: {cluster: c, user: tok}
- name: basic
  context: {cluster: c, user: basic}
- name: cert
  context: {cluster: c, user: cert}
`
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{token, password, b64(keyPEM), "S0VZLVNFQ1JFVC12aWV3LTAxMjM0NTY3ODk=", b64(certPEM)}
	for _, args := range [][]string{
		{"config", "view"}, {"config", "view", "-o", "json"},
		{"--context", "basic", "config", "view", "--minify"}, {"--context", "cert", "config", "view", "--minify", "-o", "json"},
	} {
		r := clitest.Run(Main, append([]string{"--kubeconfig", path}, args...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
		for _, s := range secrets {
			if strings.Contains(r.Stdout+r.Stderr, s) {
				t.Errorf("%v prints %q:\n%s", args, s, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, "REDACTED") || !strings.Contains(r.Stdout, "DATA+OMITTED") {
			t.Errorf("%v does not mark what it hid:\n%s", args, r.Stdout)
		}
	}
	r := clitest.Run(Main, "--kubeconfig", path, "config", "view", "--raw")
	for _, s := range []string{token, password, b64(keyPEM), b64(certPEM)} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("config view --raw hides %q:\n%s", s, r.Stdout)
		}
	}
}
