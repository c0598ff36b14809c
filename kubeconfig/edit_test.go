package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditorKeepsWhatItDoesNotChange: set and unset touch one field, keep
// unknown fields and extensions, and a saved file loads back with the
// change.
func TestEditorKeepsWhatItDoesNotChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	in := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://a.example
    extensions:
    - name: x
      extension: {k: v}
users:
- name: u
  user:
    token: secret
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := NewEditor(&LoadingRules{ExplicitPath: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Set("clusters.c.server", "https://b.example", false); err != nil {
		t.Fatal(err)
	}
	if err := e.Set("clusters.c.insecure-skip-tls-verify", "true", false); err != nil {
		t.Fatal(err)
	}
	if err := e.Set("clusters.c.insecure-skip-tls-verify", "maybe", false); err == nil {
		t.Fatal("a bool field took maybe")
	}
	if err := e.Unset("users.u.token"); err != nil {
		t.Fatal(err)
	}
	if err := e.Unset("users.u.token"); err == nil || !strings.Contains(err.Error(), "unable to locate path users.u.token") {
		t.Fatalf("unset twice: %v", err)
	}
	body, created := e.Entry(ContextsList, "ctx")
	if created || body["cluster"] != "c" {
		t.Fatalf("Entry(ctx) = %v, created %v", body, created)
	}
	if err := e.Save(); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cl := c.Clusters["c"]; cl.Server != "https://b.example" || !cl.InsecureSkipTLSVerify || string(cl.Extensions["x"]) != `{"k":"v"}` {
		t.Fatalf("cluster c: %+v", cl)
	}
	if c.AuthInfos["u"].Token != "" || c.CurrentContext != "ctx" {
		t.Fatalf("user u %+v, current %q", c.AuthInfos["u"], c.CurrentContext)
	}
}

// TestEditorDefaultFile follows kubectl's choice of the file new entries
// go to among several.
func TestEditorDefaultFile(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	e, err := NewEditor(&LoadingRules{Precedence: []string{a, b, c}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.DefaultFile(); got != c {
		t.Fatalf("none exists: %s, want the last", got)
	}
	if err := os.WriteFile(b, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := e.DefaultFile(); got != b {
		t.Fatalf("b exists: %s", got)
	}
	if _, err := NewEditor(&LoadingRules{}); err == nil {
		t.Fatal("no file at all: no error")
	}
}
