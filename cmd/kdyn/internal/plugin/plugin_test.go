package plugin

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// script is a plugin that prints its name and its arguments.
const script = "#!/bin/sh\necho \"$(basename \"$0\") $*\"\n"

// writePlugin writes an executable (mode 0o755) or plain file (0o644)
// named name in dir and returns its path.
func writePlugin(t *testing.T, dir, name string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// testRoot is a small kdyn: global flags -n (a value) and
// --insecure-skip-tls-verify (none), and get, version, and create with
// its subcommand cronjob.
func testRoot() *cobra.Command {
	root := &cobra.Command{Use: "kdyn"}
	root.PersistentFlags().StringP("namespace", "n", "", "")
	root.PersistentFlags().Bool("insecure-skip-tls-verify", false, "")
	run := func(*cobra.Command, []string) {}
	create := &cobra.Command{Use: "create", Run: run}
	create.Flags().StringP("filename", "f", "", "")
	create.AddCommand(&cobra.Command{Use: "cronjob", Aliases: []string{"cj"}, Run: run})
	root.AddCommand(&cobra.Command{Use: "get", Run: run}, &cobra.Command{Use: "version", Run: run}, create)
	return root
}

func skipWithoutSh(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("plugins here are shell scripts")
	}
}

func TestLookup(t *testing.T) {
	skipWithoutSh(t)
	dir := t.TempDir()
	hello := writePlugin(t, dir, "kubectl-hello", 0o755)
	writePlugin(t, dir, "kubectl-plain", 0o644)
	writePlugin(t, dir, "hello", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "kubectl-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got, ok := Lookup("hello"); !ok || got != hello {
		t.Errorf("Lookup(hello) = %q, %v; want %q", got, ok, hello)
	}
	for _, name := range []string{"plain", "dir", "nothing", ""} {
		if got, ok := Lookup(name); ok {
			t.Errorf("Lookup(%q) = %q; want none", name, got)
		}
	}
	// A relative directory on PATH counts, as for kubectl.
	t.Chdir(filepath.Dir(dir))
	t.Setenv("PATH", filepath.Base(dir))
	if got, ok := Lookup("hello"); !ok || got != filepath.Join(filepath.Base(dir), "kubectl-hello") {
		t.Errorf("Lookup(hello) through a relative PATH = %q, %v", got, ok)
	}
}

func TestResolve(t *testing.T) {
	skipWithoutSh(t)
	dir := t.TempDir()
	for _, name := range []string{
		"kubectl-foo", "kubectl-foo-bar", "kubectl-foo_baz", "kubectl-foo-bar-baz_qux",
		"kubectl-get", "kubectl-version", "kubectl-create", "kubectl-create-foo", "kubectl-create-cronjob",
		"kubectl-help", "kubectl-__complete",
	} {
		writePlugin(t, dir, name, 0o755)
	}
	writePlugin(t, dir, "kubectl-plain", 0o644)
	t.Setenv("PATH", dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args []string
		path string   // "" for none
		rest []string // the plugin's arguments
		err  string
	}{
		{args: []string{"foo"}, path: in("kubectl-foo"), rest: []string{}},
		{args: []string{"foo", "a", "b"}, path: in("kubectl-foo"), rest: []string{"a", "b"}},
		// The longest name wins; the words after it are arguments.
		{args: []string{"foo", "bar", "x"}, path: in("kubectl-foo-bar"), rest: []string{"x"}},
		{args: []string{"foo", "bar", "baz-qux", "-n", "x"}, path: in("kubectl-foo-bar-baz_qux"), rest: []string{"-n", "x"}},
		// A dash in a word is an underscore in the file name.
		{args: []string{"foo-baz", "1"}, path: in("kubectl-foo_baz"), rest: []string{"1"}},
		{args: []string{"foo_baz"}, path: in("kubectl-foo_baz"), rest: []string{}},
		// Words after a flag are the plugin's arguments, not its name.
		{args: []string{"foo", "--x", "bar"}, path: in("kubectl-foo"), rest: []string{"--x", "bar"}},
		{args: []string{"foo", "--", "bar"}, path: in("kubectl-foo"), rest: []string{"--", "bar"}},
		// kdyn's commands win.
		{args: []string{"get", "pods"}},
		{args: []string{"version", "--client"}},
		{args: []string{"create", "cronjob", "x"}},
		{args: []string{"create", "cj", "x"}},
		{args: []string{"create", "-f", "x"}},
		{args: []string{"-n", "x", "get"}},
		// Under create, a subcommand create has not: create-NAME only.
		{args: []string{"create", "foo", "-n", "x"}, path: in("kubectl-create-foo"), rest: []string{"-n", "x"}},
		{args: []string{"create", "bar"}},
		{args: []string{"-n", "x", "create", "foo"}},
		// No plugin: kdyn reports the unknown command.
		{args: []string{"nothing"}},
		{args: []string{"plain"}},
		{args: []string{"bar", "foo"}},
		{args: []string{"help", "foo"}},
		{args: []string{"__complete", "foo", ""}},
		{args: []string{}},
		{args: []string{"--", "foo"}},
		// Flags before a plugin's name.
		{args: []string{"-n", "x", "foo"}, err: "flags cannot be placed before plugin name: -n"},
		{args: []string{"--namespace", "x", "foo", "bar"}, err: "flags cannot be placed before plugin name: --namespace"},
		{args: []string{"--namespace=x", "foo-baz"}, err: "flags cannot be placed before plugin name: --namespace=x"},
		{args: []string{"--insecure-skip-tls-verify", "foo"}, err: "flags cannot be placed before plugin name: --insecure-skip-tls-verify"},
		{args: []string{"-n", "foo", "bar", "x"}},
		{args: []string{"-n", "x", "nothing"}},
	} {
		m, err := Resolve(testRoot(), tc.args)
		switch {
		case tc.err != "":
			var usage *cli.UsageError
			if !errors.As(err, &usage) || err.Error() != tc.err || m != nil {
				t.Errorf("Resolve(%q) = %+v, %v; want the usage error %q", tc.args, m, err, tc.err)
			}
		case err != nil:
			t.Errorf("Resolve(%q): %v", tc.args, err)
		case tc.path == "" && m != nil:
			t.Errorf("Resolve(%q) = %+v; want no plugin", tc.args, m)
		case tc.path != "" && (m == nil || m.Path != tc.path || !slices.Equal(m.Args, tc.rest)):
			t.Errorf("Resolve(%q) = %+v; want %s %q", tc.args, m, tc.path, tc.rest)
		}
	}
}

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=1", "KUBECTL_PATH=/elsewhere", "B=2", "KUBECTL_PATHS=x"}, "/bin/kdyn")
	want := []string{"A=1", "B=2", "KUBECTL_PATHS=x", "KUBECTL_PATH=/bin/kdyn"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
}

// runList runs "plugin list" with args on a test root with PATH set to
// path, and returns its exit code, standard output and standard error.
func runList(t *testing.T, path string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("PATH", path)
	var out, errOut strings.Builder
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	root := testRoot()
	root.SilenceErrors, root.SilenceUsage = true, true
	root.AddCommand(NewCommand(cli.NewFactory(&cli.GlobalFlags{}, streams)))
	root.SetArgs(append([]string{"plugin", "list"}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	var exit *cli.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit) && exit.Silent:
		return exit.Code, out.String(), errOut.String()
	}
	t.Fatalf("plugin list %q: %v", args, err)
	return 0, "", ""
}

func TestList(t *testing.T) {
	skipWithoutSh(t)
	a, b := t.TempDir(), t.TempDir()
	writePlugin(t, a, "kubectl-hello", 0o755)
	writePlugin(t, a, "kubectl-foo-bar", 0o755)
	writePlugin(t, a, "other", 0o755)
	if err := os.Mkdir(filepath.Join(a, "kubectl-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePlugin(t, b, "kubectl-hello", 0o755)
	writePlugin(t, b, "kubectl-plain", 0o644)
	writePlugin(t, b, "kubectl-version", 0o755)
	writePlugin(t, b, "kubectl-create-foo", 0o755)
	missing := filepath.Join(a, "missing")
	sep := string(os.PathListSeparator)

	// Only plugins without a warning: the paths, or the names.
	code, out, errOut := runList(t, a)
	if want := "The following compatible plugins are available:\n\n" + a + "/kubectl-foo-bar\n" + a + "/kubectl-hello\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("plugin list: exit %d\n%s\n%s\nwant\n%s", code, out, errOut, want)
	}
	code, out, _ = runList(t, a, "--name-only")
	if want := "The following compatible plugins are available:\n\nkubectl-foo-bar\nkubectl-hello\n"; code != 0 || out != want {
		t.Errorf("plugin list --name-only: exit %d\n%s\nwant\n%s", code, out, want)
	}

	// Every warning, each directory once, an empty entry and a missing
	// directory skipped.
	code, out, errOut = runList(t, strings.Join([]string{a, "", missing, b, a}, sep), "--name-only")
	wantOut := "The following compatible plugins are available:\n\n" +
		"kubectl-foo-bar\nkubectl-hello\nkubectl-create-foo\nkubectl-hello\nkubectl-plain\nkubectl-version\n"
	wantErr := `Unable to read directory "` + missing + `" from your PATH: open ` + missing + ": no such file or directory. Skipping...\n" +
		"  - warning: kubectl-create-foo overwrites existing command: \"kdyn create\"\n" +
		"  - warning: " + b + "/kubectl-hello is overshadowed by a similarly named plugin: " + a + "/kubectl-hello\n" +
		"  - warning: " + b + "/kubectl-plain identified as a kubectl plugin, but it is not executable\n" +
		"  - warning: kubectl-version overwrites existing command: \"kdyn version\"\n" +
		"error: 4 plugin warnings were found\n"
	if code != 1 || out != wantOut || errOut != wantErr {
		t.Errorf("plugin list with warnings: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stdout:\n%s\nstderr:\n%s", code, out, errOut, wantOut, wantErr)
	}

	// One warning.
	only := t.TempDir()
	writePlugin(t, only, "kubectl-get", 0o755)
	if code, out, errOut := runList(t, only); code != 1 || out != "The following compatible plugins are available:\n\n"+only+"/kubectl-get\n" ||
		errOut != "  - warning: kubectl-get overwrites existing command: \"kdyn get\"\nerror: one plugin warning was found\n" {
		t.Errorf("plugin list with one warning: exit %d\n%s\n%s", code, out, errOut)
	}

	// None at all.
	if code, out, errOut := runList(t, t.TempDir()); code != 1 || out != "" || errOut != "error: unable to find any kubectl plugins in your PATH\n" {
		t.Errorf("plugin list without plugins: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCheckUnreadable(t *testing.T) {
	skipWithoutSh(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "kubectl-gone")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Fatal(err)
	}
	got := check(testRoot(), link, map[string]string{})
	want := []string{"error: unable to identify " + link + " as an executable file: stat " + link + ": no such file or directory"}
	if !slices.Equal(got, want) {
		t.Errorf("check(dangling link) = %q, want %q", got, want)
	}
}

func TestPluginCommand(t *testing.T) {
	var out, errOut strings.Builder
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	cmd := NewCommand(cli.NewFactory(&cli.GlobalFlags{}, streams))
	if cmd.Short != "Provides utilities for interacting with plugins" || cmd.Commands()[0].Short != "List all visible plugin executables on a user's PATH" {
		t.Errorf("Short texts are not kubectl's: %q, %q", cmd.Short, cmd.Commands()[0].Short)
	}
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs([]string{"nonsense"})
	var usage *cli.UsageError
	if err := cmd.Execute(); !errors.As(err, &usage) || err.Error() != "unknown command \"nonsense\"\nSee 'plugin -h' for help and examples" {
		t.Errorf("plugin nonsense: %v", err)
	}
	cmd.SetArgs(nil)
	var exit *cli.ExitError
	if err := cmd.Execute(); !errors.As(err, &exit) || exit.Code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), "plugin list --name-only") {
		t.Errorf("plugin: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
}
