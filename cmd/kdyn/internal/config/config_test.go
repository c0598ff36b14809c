package config_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// An unknown config subcommand is an error naming it, exit 1; config
// alone prints its help on stderr and fails, as kubectl's does.
func TestConfigUnknownSubcommand(t *testing.T) {
	r := clitest.Run(root.Main, "config", "nonsense")
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: unknown command "nonsense"`) || !strings.Contains(r.Stderr, "See 'kdyn config -h' for help and examples") || r.Stdout != "" {
		t.Errorf("config nonsense: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.Run(root.Main, "config")
	if r.Code != 1 || !strings.Contains(r.Stderr, "Available Commands:") || r.Stdout != "" {
		t.Errorf("config: exit %d, stdout %q, stderr %.80q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestConfigEdits builds a kubeconfig with the set-* commands, as kubectl's
// test suite does, and checks the file: fields set, embedded certificates,
// the current context's namespace, renames, unsets and deletes, and the
// second of two KUBECONFIG files changed only where it defines an entry.
func TestConfigEdits(t *testing.T) {
	dir := t.TempDir()
	main, other := filepath.Join(dir, "config"), filepath.Join(dir, "other")
	otherYAML := "apiVersion: v1\nkind: Config\n# kept as it is\nclusters:\n- name: far\n  cluster:\n    server: https://far.example\n"
	if err := os.WriteFile(other, []byte(otherYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	// New entries go to the first listed file that exists (kubectl's rule).
	if err := os.WriteFile(main, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("PEM DATA\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", main+string(os.PathListSeparator)+other)
	t.Setenv("KUBERC", "off")
	run := func(want string, args ...string) {
		t.Helper()
		r := clitest.Run(root.Main, append([]string{"config"}, args...)...)
		if r.Code != 0 || r.Stdout != want {
			t.Fatalf("config %v: exit %d, stdout %q (want %q), stderr %q", args, r.Code, r.Stdout, want, r.Stderr)
		}
	}
	run("User \"admin\" set.\n", "set-credentials", "admin", "--token", "t0k")
	run("Cluster \"local\" set.\n", "set-cluster", "local", "--server", "https://127.0.0.1:6443", "--insecure-skip-tls-verify")
	run("Cluster \"embedded\" set.\n", "set-cluster", "embedded", "--certificate-authority", ca, "--embed-certs")
	run("Context \"test\" created.\n", "set-context", "test", "--user", "admin", "--cluster", "local")
	run("Switched to context \"test\".\n", "use-context", "test")
	run("Context \"test\" modified.\n", "set-context", "--current", "--namespace", "ns1")
	run("Cluster \"far\" set.\n", "set-cluster", "far", "--tls-server-name", "far.internal")
	run("ns1", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}")
	run("Context \"test\" modified.\n", "set-context", "test", "-n", "ns2")
	run("ns2", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}")
	// --template alone is a go template; with -o jsonpath, a JSONPath.
	run("Config:ns2", "view", "--minify", "--template={{.kind}}:{{(index .contexts 0).context.namespace}}")
	run("ns2", "view", "--minify", "-o", "jsonpath", "--template={.contexts[0].context.namespace}")
	run("Context \"test\" modified.\n", "set-context", "--current", "--namespace", "ns1")
	run(base64.StdEncoding.EncodeToString([]byte("PEM DATA\n")), "view", "--raw", "-o", `jsonpath={.clusters[?(@.name == "embedded")].cluster.certificate-authority-data}`)
	run("Property \"users.admin.token\" set.\n", "set", "users.admin.token", "other")
	run("other", "view", "--raw", "-o", `jsonpath={.users[?(@.name == "admin")].user.token}`)
	run("Property \"contexts.test.namespace\" unset.\n", "unset", "contexts.test.namespace")
	run("Context \"test\" renamed to \"t2\".\n", "rename-context", "test", "t2")
	run("t2\n", "current-context")
	run("deleted cluster embedded from "+main+"\n", "delete-cluster", "embedded")
	run("NAME\nlocal\nfar\n", "get-clusters")

	// far was changed in the file that defines it; the new entries went to
	// the first file.
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "tls-server-name: far.internal") || strings.Contains(string(b), "admin") {
		t.Fatalf("other file:\n%s", b)
	}
	st, err := os.Stat(main)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("new kubeconfig file: %v %v", st, err)
	}
	for _, bad := range [][]string{
		{"set", "clusters.local.nonsense", "x"},
		{"set", "clusters.local.certificate-authority-data", "not base64!"},
		{"unset", "users.nobody.token"},
		{"delete-context", "missing"},
		{"rename-context", "missing", "x"},
		{"set-context"},
	} {
		if r := clitest.Run(root.Main, append([]string{"config"}, bad...)...); r.Code == 0 || !strings.HasPrefix(r.Stderr, "error: ") {
			t.Errorf("config %v: exit %d, stderr %q", bad, r.Code, r.Stderr)
		}
	}
}
