package root

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/discovery"
)

func TestTypeCandidates(t *testing.T) {
	snap := clitest.FixtureSnapshot()
	var resources []*discovery.Resource
	for gi := range snap.Groups {
		g := &snap.Groups[gi]
		for _, v := range g.OrderedVersions()[:1] {
			for i := range v.Resources {
				resources = append(resources, &v.Resources[i])
			}
		}
	}
	cases := []struct {
		prefix, last string
		want         []string
	}{
		{"", "dep", []string{"deploy", "deployment", "deployments", "deployments.apps"}},
		{"", "wi", []string{"widget", "widgets", "widgets.example.com"}},
		{"", "c", []string{"cm", "configmap", "configmaps"}},
		{"pods,", "rs", []string{"pods,rs"}},
		{"", "nope", nil},
	}
	for _, tc := range cases {
		got := typeCandidates(resources, tc.prefix, tc.last)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("typeCandidates(%q, %q) (-want +got):\n%s", tc.prefix, tc.last, diff)
		}
	}
	all := typeCandidates(resources, "", "")
	for _, want := range []string{"pods", "pod", "po", "ns", "replicasets.apps", "gadgets.example.com"} {
		found := false
		for _, c := range all {
			found = found || c == want
		}
		if !found {
			t.Errorf("no candidate %q in %v", want, all)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "# bash completion V2 for kdyn",
		"zsh":        "#compdef kdyn",
		"fish":       "# fish completion for kdyn",
		"powershell": "Register-ArgumentCompleter",
	} {
		var out, errb bytes.Buffer
		if code := Main([]string{"completion", shell}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errb.String())
		}
		if !strings.Contains(out.String(), marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"completion", "tcsh"}, strings.NewReader(""), &out, &errb); code == 0 {
		t.Errorf("completion tcsh succeeded")
	}
}

func TestRegisterCompletions(t *testing.T) {
	root, _ := NewRootCommand(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	for _, name := range []string{"get", "explain", "tree"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name {
			t.Fatalf("no %s command", name)
		}
		if c.ValidArgsFunction == nil {
			t.Errorf("%s has no dynamic completion", name)
		}
	}
	if c, _, err := root.Find([]string{"config", "use-context"}); err == nil && c.Name() == "use-context" && c.ValidArgsFunction == nil {
		t.Errorf("config use-context has no completion")
	}

	// A command that brings its own completion keeps it.
	own := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"mine"}, cobra.ShellCompDirectiveNoFileComp
	}
	r := &cobra.Command{Use: "kdyn"}
	d := &cobra.Command{Use: "describe", ValidArgsFunction: own}
	g := &cobra.Command{Use: "get"}
	r.AddCommand(d, g)
	registerCompletions(r, cli.NewFactory(&cli.GlobalFlags{}, cli.IOStreams{}))
	if got, _ := d.ValidArgsFunction(d, nil, ""); len(got) != 1 || got[0] != "mine" {
		t.Errorf("describe's own completion was replaced")
	}
	if g.ValidArgsFunction == nil {
		t.Errorf("get got no completion")
	}
}

// TestResourceCompletionArgs checks which argument positions complete
// names, with an unreachable server: completion stays silent.
func TestResourceCompletionArgs(t *testing.T) {
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 300 * time.Millisecond
	f := cli.NewFactory(&cli.GlobalFlags{Server: "https://127.0.0.1:1", CacheDir: t.TempDir()}, cli.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	cmd := &cobra.Command{Use: "get"}
	for _, tc := range []struct {
		max        int
		args       []string
		toComplete string
	}{
		{-1, nil, ""},
		{-1, []string{"pods"}, ""},
		{-1, nil, "pods/"},
		{1, []string{"pods", "a"}, ""},
		{0, []string{"pods"}, ""},
	} {
		got, dir := resourceCompletion(f, tc.max)(cmd, tc.args, tc.toComplete)
		if len(got) != 0 || dir != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("max %d args %v %q: %v %v", tc.max, tc.args, tc.toComplete, got, dir)
		}
	}
}

// TestNewCommandsComplete: rollout's subcommands complete their three
// types, wait's --for its kinds, -k and kustomize directories, and
// kustomize's --load-restrictor its values (cobra's __complete, as a shell
// calls it; no server is asked).
func TestNewCommandsComplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"rollout", "status", ""}, []string{"deployment", "daemonset", "statefulset"}},
		{[]string{"rollout", "undo", "st"}, []string{"statefulset"}},
		{[]string{"rollout", "history", "d"}, []string{"deployment", "daemonset"}},
		{[]string{"wait", "--for", ""}, []string{"create", "delete", "ready", "condition=", "jsonpath="}},
		{[]string{"kustomize", "--load-restrictor", ""}, []string{"LoadRestrictionsNone", "LoadRestrictionsRootOnly"}},
		{[]string{"apply", "-k", ""}, nil}, // directories: the shell lists them
		{[]string{"kustomize", ""}, nil},
		{[]string{"apply", "--w"}, []string{"--warnings-as-errors", "--wait"}},
		{[]string{"rollout", "undo", "--to-"}, []string{"--to-revision"}},
	} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"__complete", "--server", "https://127.0.0.1:1", "--cache-dir", t.TempDir()}, tc.args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var got []string
		for _, l := range lines[:len(lines)-1] { // the last line is the directive
			name, _, _ := strings.Cut(l, "\t")
			got = append(got, name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
		if tc.want == nil && !strings.HasPrefix(lines[len(lines)-1], ":") {
			t.Errorf("%v: no directive line: %q", tc.args, out.String())
		}
	}
}

// apply and diff complete --applyset and --validate; with an unreachable
// server --applyset offers the built-in parent types.
func TestApplySetFlagCompletion(t *testing.T) {
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 300 * time.Millisecond
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "--server", "https://127.0.0.1:1", "apply", "--applyset", ""}, []string{"configmaps/", "secrets/"}},
		{[]string{"__complete", "--server", "https://127.0.0.1:1", "diff", "--applyset", "s"}, []string{"secrets/"}},
		{[]string{"__complete", "apply", "--validate="}, []string{"strict", "warn", "ignore", "true", "false"}},
		{[]string{"__complete", "edit", "--validate=w"}, []string{"warn"}},
		{[]string{"__complete", "patch", "--validate=i"}, []string{"ignore"}},
	} {
		var out, errb bytes.Buffer
		args := append([]string{tc.args[0], "--cache-dir", t.TempDir()}, tc.args[1:]...)
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		got := strings.Split(strings.TrimSpace(out.String()), "\n")
		got = got[:len(got)-1] // the directive line
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
	}
}
