package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// writePlugins writes each script in dir as an executable (a name ending
// in "!" as a plain file, without the "!") and returns dir.
func writePlugins(t *testing.T, dir string, scripts map[string]string) string {
	t.Helper()
	for name, body := range scripts {
		mode := os.FileMode(0o755)
		if plain, ok := strings.CutSuffix(name, "!"); ok {
			name, mode = plain, 0o644
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runWithPath runs bin (kdyn, or a link to it) with exactly args, PATH set
// to path and extra added to the environment.
func runWithPath(t *testing.T, bin, path string, extra []string, args ...string) result {
	t.Helper()
	return runNamed(t, bin, bin, path, extra, args...)
}

// runNamed is runWithPath with the program's name (argv[0]) name, as a
// shell gives it when it finds the program on PATH.
func runNamed(t *testing.T, bin, name, path string, extra []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Args[0] = name
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(append(os.Environ(), "PATH="+path), extra...)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s %v: %v", bin, args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// exactly fails the test unless r is code, stdout and stderr exactly.
func (r result) exactly(t *testing.T, what string, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || r.stdout != stdout || r.stderr != stderr {
		t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q", what, r.code, r.stdout, r.stderr, code, stdout, stderr)
	}
}

// TestPluginRun: kdyn runs kubectl's plugins as kubectl does: the longest
// kubectl-NAME on PATH that the first words name, with the rest of the
// command line, the environment (and $KUBECTL_PATH), its exit code;
// under create, kubectl-create-NAME; never in place of a command of kdyn
// or a kuberc alias, and not after flags.
func TestPluginRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugins are shell scripts")
	}
	env := testenv.Shared(t)
	dir := writePlugins(t, t.TempDir(), map[string]string{
		"kubectl-hello":      "#!/bin/sh\necho \"$0 [$*] KUBECTL_PATH=$KUBECTL_PATH CUSTOM=$CUSTOM\"\necho to-stderr >&2\nexit 3\n",
		"kubectl-foo-bar":    "#!/bin/sh\necho \"foo-bar [$*]\"\n",
		"kubectl-foo_baz":    "#!/bin/sh\necho \"foo_baz [$*]\"\n",
		"kubectl-get":        "#!/bin/sh\necho plugin get\n",
		"kubectl-create-foo": "#!/bin/sh\necho \"create-foo [$*]\"\n",
		"kubectl-create":     "#!/bin/sh\necho plugin create\n",
		"kubectl-notexec!":   "#!/bin/sh\necho notexec\n",
	})
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	kdynPath := func(args ...string) result {
		return runWithPath(t, kdynBin, path, []string{"CUSTOM=abc", "KUBECTL_PATH=/not/kdyn"}, args...)
	}

	hello := filepath.Join(dir, "kubectl-hello")
	kdynPath("hello", "a", "b", "--c=d").exactly(t, "hello a b --c=d", 3, hello+" [a b --c=d] KUBECTL_PATH="+kdynBin+" CUSTOM=abc\n", "to-stderr\n")
	kdynPath("foo", "bar", "x", "-y").exactly(t, "foo bar x -y", 0, "foo-bar [x -y]\n", "")
	kdynPath("foo-baz", "bar").exactly(t, "foo-baz bar", 0, "foo_baz [bar]\n", "")
	kdynPath("create", "foo", "x").exactly(t, "create foo x", 0, "create-foo [x]\n", "")

	// kdyn's commands win: get, create's own subcommands and flags.
	if r := runWithPath(t, kdynBin, path, nil, kdynArgs(env, testenv.Admin, "get", "namespace", "default", "-o", "name")...).must(t); r.stdout != "namespace/default\n" {
		t.Errorf("get with kubectl-get on PATH: %q", r.stdout)
	}
	if r := runWithPath(t, kdynBin, path, nil, kdynArgs(env, testenv.Admin, "create", "configmap", "x", "--dry-run=client", "-o", "name")...).must(t); r.stdout != "configmap/x\n" {
		t.Errorf("create configmap with kubectl-create on PATH: %q", r.stdout)
	}
	// A kuberc alias wins too.
	rc := filepath.Join(t.TempDir(), "kuberc")
	if err := os.WriteFile(rc, []byte("apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\naliases:\n- name: hello\n  command: get\n  prependArgs: [namespace, default]\n  options:\n  - name: output\n    default: name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runWithPath(t, kdynBin, path, []string{"KUBERC=" + rc}, kdynArgs(env, testenv.Admin, "hello")...).must(t); r.stdout != "namespace/default\n" {
		t.Errorf("alias hello with kubectl-hello on PATH: %q", r.stdout)
	}

	// Flags before a plugin's name: kubectl's refusal (exit code 1, 2
	// with --exit-codes).
	kdynPath("-n", "x", "hello").exactly(t, "-n x hello", 1, "", "Error: flags cannot be placed before plugin name: -n\n")
	kdynPath("--exit-codes", "foo", "bar").exactly(t, "--exit-codes foo bar", 2, "", "Error: flags cannot be placed before plugin name: --exit-codes\n")

	// No plugin: kdyn's error, as before (a file that is not executable
	// is no plugin).
	kdynPath("notexec").exactly(t, "notexec", 1, "", "error: unknown command \"notexec\" for \"kdyn\"\n")
	kdynPath("nosuch", "x").exactly(t, "nosuch x", 1, "", "error: unknown command \"nosuch\" for \"kdyn\"\n")
	runWithPath(t, kdynBin, path, nil, kdynArgs(env, testenv.Admin, "nosuch")...).exactly(t, "--kubeconfig ... nosuch", 1, "", "error: unknown command \"nosuch\" for \"kdyn\"\n")
	runWithPath(t, kdynBin, path, nil, kdynArgs(env, testenv.Admin, "--exit-codes", "nosuch")...).exactly(t, "--exit-codes nosuch", 2, "", "error: unknown command \"nosuch\" for \"kdyn\"\n")
	kdynPath("create", "nosuch").exactly(t, "create nosuch", 1, "", "error: unknown command \"nosuch\" for \"kdyn create\"\n")

	// Run as kubectl: the same, and $KUBECTL_PATH is the link, which runs
	// kdyn as kubectl again.
	link := filepath.Join(t.TempDir(), "kubectl")
	if err := os.Symlink(kdynBin, link); err != nil {
		t.Fatal(err)
	}
	runWithPath(t, link, path, []string{"CUSTOM="}, "hello", "x").exactly(t, "kubectl hello x", 3, hello+" [x] KUBECTL_PATH="+link+" CUSTOM=\n", "to-stderr\n")
	linkDir := filepath.Dir(link) + string(os.PathListSeparator) + path
	runNamed(t, link, "kubectl", linkDir, nil, "hello").exactly(t, "kubectl hello (found on PATH)", 3, hello+" [] KUBECTL_PATH="+link+" CUSTOM=\n", "to-stderr\n")
	runWithPath(t, link, path, nil, "nosuch").exactly(t, "kubectl nosuch", 1, "", "error: unknown command \"nosuch\" for \"kubectl\"\n")
}

// TestPluginList: plugin list prints the plugins on PATH (--name-only:
// their file names) and kubectl's warnings, and fails on a warning or
// when there is no plugin.
func TestPluginList(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugins are shell scripts")
	}
	testenv.Shared(t)
	script := "#!/bin/sh\necho plugin\n"
	a := writePlugins(t, t.TempDir(), map[string]string{"kubectl-hello": script, "kubectl-foo-bar": script, "other": script})
	b := writePlugins(t, t.TempDir(), map[string]string{"kubectl-hello": script, "kubectl-version": script, "kubectl-plain!": script})
	sep := string(os.PathListSeparator)
	header := "The following compatible plugins are available:\n\n"

	runWithPath(t, kdynBin, a, nil, "plugin", "list").exactly(t, "plugin list", 0, header+a+"/kubectl-foo-bar\n"+a+"/kubectl-hello\n", "")
	runWithPath(t, kdynBin, a, nil, "plugin", "list", "--name-only").exactly(t, "plugin list --name-only", 0, header+"kubectl-foo-bar\nkubectl-hello\n", "")

	warnings := "  - warning: " + b + "/kubectl-hello is overshadowed by a similarly named plugin: " + a + "/kubectl-hello\n" +
		"  - warning: " + b + "/kubectl-plain identified as a kubectl plugin, but it is not executable\n" +
		"  - warning: kubectl-version overwrites existing command: \"kdyn version\"\n" +
		"error: 3 plugin warnings were found\n"
	runWithPath(t, kdynBin, a+sep+b, nil, "plugin", "list").exactly(t, "plugin list (warnings)", 1,
		header+a+"/kubectl-foo-bar\n"+a+"/kubectl-hello\n"+b+"/kubectl-hello\n"+b+"/kubectl-plain\n"+b+"/kubectl-version\n", warnings)
	runWithPath(t, kdynBin, a+sep+b, nil, "plugin", "list", "--name-only").exactly(t, "plugin list --name-only (warnings)", 1,
		header+"kubectl-foo-bar\nkubectl-hello\nkubectl-hello\nkubectl-plain\nkubectl-version\n", warnings)

	empty := t.TempDir()
	missing := filepath.Join(empty, "missing")
	runWithPath(t, kdynBin, empty+sep+missing, nil, "plugin", "list").exactly(t, "plugin list (none)", 1, "",
		"Unable to read directory \""+missing+"\" from your PATH: open "+missing+": no such file or directory. Skipping...\n"+
			"error: unable to find any kubectl plugins in your PATH\n")

	// Run as kubectl, the warning names kubectl's command.
	link := filepath.Join(t.TempDir(), "kubectl")
	if err := os.Symlink(kdynBin, link); err != nil {
		t.Fatal(err)
	}
	r := runWithPath(t, link, b, nil, "plugin", "list", "--name-only")
	if r.code != 1 || !strings.Contains(r.stderr, "  - warning: kubectl-version overwrites existing command: \"kubectl version\"\n") {
		t.Errorf("kubectl plugin list: exit %d, stderr %q", r.code, r.stderr)
	}
	runWithPath(t, kdynBin, empty, nil, "plugin").exactly(t, "plugin", 1, "", runWithPath(t, kdynBin, empty, nil, "plugin", "--help").stdout)
}
