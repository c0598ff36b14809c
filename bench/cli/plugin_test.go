package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// pluginCase is one command line run by both tools with exactly args (no
// --kubeconfig before them: kubectl refuses flags before a plugin's name),
// PATH set to path and env added to their environment.
type pluginCase struct {
	path string
	env  []string
	args []string
	// names makes the two tools' names the same (kubectl's messages name
	// kubectl): used only where kubectl names itself.
	names bool
}

// kubectlNames writes kdyn's name in its messages as kubectl writes its
// own: "kdyn version" in plugin list's warnings, for "kdyn" in an unknown
// command's error, 'kdyn plugin -h' in a usage error's hint.
func kubectlNames(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(`existing command: "kdyn `), []byte(`existing command: "kubectl `))
	b = bytes.ReplaceAll(b, []byte(`for "kdyn"`), []byte(`for "kubectl"`))
	return bytes.ReplaceAll(b, []byte(`'kdyn `), []byte(`'kubectl `))
}

// checkPlugin runs c with both tools and fails unless they agree: exit
// code, standard output and standard error.
func (p *pair) checkPlugin(t *testing.T, c pluginCase) {
	t.Helper()
	saved := p.env
	p.env = append(append([]string{"PATH=" + c.path}, saved...), c.env...)
	defer func() { p.env = saved }()
	k := p.exec(t, p.bin.Kubectl, "", c.args...)
	d := p.exec(t, p.bin.Kdyn, "", c.args...)
	derr := d.stderr
	if c.names {
		derr = kubectlNames(derr)
	}
	diff := CompareBytes(d.stdout, k.stdout)
	switch {
	case k.code != d.code:
		t.Errorf("PATH=%s %q: exit code %d, kubectl's %d\nkdyn stdout:\n%s\nkdyn stderr:\n%s\nkubectl stdout:\n%s\nkubectl stderr:\n%s", c.path, c.args, d.code, k.code, d.stdout, d.stderr, k.stdout, k.stderr)
	case !diff.Identical:
		t.Errorf("PATH=%s %q: stdout %s\nkdyn:\n%s\nkubectl:\n%s", c.path, c.args, diff, d.stdout, k.stdout)
	case !bytes.Equal(derr, k.stderr):
		t.Errorf("PATH=%s %q: stderr differs\nkdyn:    %q\nkubectl: %q", c.path, c.args, d.stderr, k.stderr)
	default:
		t.Logf("%q: exit %d, %s", c.args, d.code, diff)
	}
}

// TestPluginMatchesKubectl: with the same plugins on PATH, kdyn lists them
// (plugin list, --name-only) with kubectl's warnings and errors, and runs
// them as kubectl does (arguments, environment, exit code, the longest
// name, create's subcommand plugins, the refusal of flags before a
// plugin's name), while its own commands and a kuberc alias win: the same
// exit codes and bytes, the tool's name aside where kubectl names itself.
func TestPluginMatchesKubectl(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugins are shell scripts")
	}
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	plugins := func(scripts map[string]string) string {
		dir := t.TempDir()
		for name, body := range scripts {
			mode := os.FileMode(0o755)
			if plain, ok := strings.CutSuffix(name, "!"); ok {
				name, mode = plain, 0o644
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	echo := func(s string) string { return "#!/bin/sh\necho \"" + s + "\"\n" }
	a := plugins(map[string]string{
		// $KUBECTL_PATH names the tool's own executable, whatever the
		// caller set: only that it runs is compared.
		"kubectl-hello": "#!/bin/sh\necho \"$0 [$*] CUSTOM=$CUSTOM\"\n" +
			"if [ -x \"$KUBECTL_PATH\" ] && [ \"$KUBECTL_PATH\" != /not/this ]; then echo KUBECTL_PATH runs; fi\n" +
			"echo to-stderr >&2\nexit 3\n",
		"kubectl-foo-bar":    echo("foo-bar [$*]"),
		"kubectl-foo_baz":    echo("foo_baz [$*]"),
		"kubectl-create-foo": echo("create-foo [$*]"),
		"kubectl-get":        echo("plugin get"),
		"other":              echo("other"),
	})
	if err := os.Mkdir(filepath.Join(a, "kubectl-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := plugins(map[string]string{
		"kubectl-hello":    echo("shadowed hello"),
		"kubectl-version":  echo("plugin version"),
		"kubectl-notexec!": echo("notexec"),
	})
	clean := plugins(map[string]string{"kubectl-foo-bar": echo("foo-bar"), "kubectl-x_y": echo("x_y")})
	sep := string(os.PathListSeparator)
	missing := filepath.Join(b, "missing")
	both := strings.Join([]string{a, "", missing, b, a}, sep)
	rc := filepath.Join(t.TempDir(), "kuberc")
	if err := os.WriteFile(rc, []byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\naliases:\n- name: hello\n  command: get\n  prependArgs: [namespace, default]\n  options:\n  - name: output\n    default: name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	custom := []string{"CUSTOM=abc", "KUBECTL_PATH=/not/this"}
	for _, c := range []pluginCase{
		// plugin list: no warning; every warning, PATH's odd entries; none
		// at all.
		{path: clean, args: []string{"plugin", "list"}},
		{path: clean, args: []string{"plugin", "list", "--name-only"}},
		{path: b + sep + a, args: []string{"plugin", "list"}, names: true},
		{path: b + sep + a, args: []string{"plugin", "list", "--name-only"}, names: true},
		{path: both, args: []string{"plugin", "list"}, names: true},
		{path: both, args: []string{"plugin", "list", "--name-only"}, names: true},
		{path: b, args: []string{"plugin", "list", "ignored", "args"}, names: true},
		{path: missing + sep + t.TempDir(), args: []string{"plugin", "list"}},
		{path: a, args: []string{"plugin", "nonsense"}, names: true},
		// Running plugins.
		{path: both, env: custom, args: []string{"hello", "a", "b", "--c=d", "--", "e"}},
		{path: both, env: custom, args: []string{"hello"}},
		{path: a, args: []string{"foo", "bar", "x", "-y"}},
		{path: a, args: []string{"foo", "bar"}},
		{path: a, args: []string{"foo-baz", "bar", "--x"}},
		{path: a, args: []string{"foo_baz"}},
		{path: a, args: []string{"create", "foo", "z", "-n", "x"}},
		// Flags before a plugin's name.
		{path: a, args: []string{"-n", "x", "hello"}},
		{path: a, args: []string{"--namespace=x", "foo", "bar"}},
		{path: a, args: []string{"--insecure-skip-tls-verify", "hello"}},
		// No plugin of that name; a file that does not execute is none.
		{path: a, args: []string{"nosuch"}, names: true},
		{path: b, args: []string{"notexec"}, names: true},
		{path: a, args: []string{"foo", "--bar"}, names: true},
		// The tools' own commands and a kuberc alias win.
		{path: a, args: []string{"--kubeconfig", p.kubecfg, "get", "namespace", "default", "-o", "name"}},
		{path: a, args: []string{"get", "namespace", "default", "-o", "name"}, env: []string{"KUBECONFIG=" + p.kubecfg}},
		{path: a, args: []string{"hello"}, env: []string{"KUBECONFIG=" + p.kubecfg, "KUBERC=" + rc}},
		{path: a, args: []string{"create", "configmap", "x", "--dry-run=client", "-o", "name"}, env: []string{"KUBECONFIG=" + p.kubecfg}},
	} {
		p.checkPlugin(t, c)
	}
}
