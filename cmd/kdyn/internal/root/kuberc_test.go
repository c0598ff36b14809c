package root

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

func TestVerbosityArg(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"get", "pods"}, 0},
		{[]string{"get", "-v=5", "pods"}, 5},
		{[]string{"-v", "6", "get"}, 6},
		{[]string{"get", "--v=7"}, 7},
		{[]string{"get", "--v", "8", "pods"}, 8},
		{[]string{"get", "-v9"}, 9},
		{[]string{"get", "-v", "x"}, 0},
		{[]string{"run", "x", "--", "-v=5"}, 0},
		{[]string{"get", "--version=5"}, 0},
	} {
		if got := verbosityArg(c.args); got != c.want {
			t.Errorf("verbosityArg(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}

// TestKubercGates: KUBECTL_KUBERC=false turns kuberc off (no aliases, no
// kuberc command), as kubectl's feature gate does; a file without any
// document is noted from -v 5 on, as kubectl notes it.
func TestKubercGates(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "kuberc")
	if err := os.WriteFile(rc, []byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\naliases:\n- name: vv\n  command: version\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	if r := clitest.Run(Main, "kuberc", "view", "--kuberc", rc, "-o", "jsonpath={.aliases[0].name}"); r.Code != 0 || r.Stdout != "vv" {
		t.Errorf("kuberc view: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	t.Setenv("KUBECTL_KUBERC", "false")
	for _, args := range [][]string{{"kuberc", "view"}, {"vv", "--kuberc", rc}} {
		if r := clitest.Run(Main, args...); r.Code == 0 || !strings.Contains(r.Stderr, `unknown command "`+args[0]+`"`) {
			t.Errorf("KUBECTL_KUBERC=false kdyn %v: exit %d, stderr %q", args, r.Code, r.Stderr)
		}
	}
	t.Setenv("KUBECTL_KUBERC", "")
	note := "kuberc: no preferences found in " + empty
	if r := clitest.Run(Main, "kuberc", "--kuberc", empty); strings.Contains(r.Stderr, note) {
		t.Errorf("noted without -v: %q", r.Stderr)
	}
	if r := clitest.Run(Main, "kuberc", "-v", "5", "--kuberc", empty); !strings.Contains(r.Stderr, note) {
		t.Errorf("not noted at -v 5: %q", r.Stderr)
	}
}
