package cli_test

import (
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// discCompletions runs cobra's hidden __complete command and returns the
// candidates, checking the directive (4: no file completion).
func discCompletions(t *testing.T, env *testenv.Env, args ...string) []string {
	t.Helper()
	r := kdyn(t, env, append([]string{"__complete"}, args...)...).must(t)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) == 0 || lines[len(lines)-1] != ":4" {
		t.Fatalf("__complete %v: no :4 directive:\n%s", args, r.stdout)
	}
	return lines[:len(lines)-1]
}

func TestCompletionScripts(t *testing.T) {
	env := testenv.Shared(t)
	for shell, marker := range map[string]string{
		"bash": "__start_kdyn", "zsh": "#compdef kdyn", "fish": "complete -c kdyn",
	} {
		r := kdyn(t, env, "completion", shell).must(t)
		if !strings.Contains(r.stdout, marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	if r := kdyn(t, env, "completion", "tcsh"); r.code == 0 {
		t.Errorf("completion tcsh succeeded")
	}
}

func TestCompletionDynamic(t *testing.T) {
	env := testenv.Shared(t)
	ns := treeFixture(t, discoveryTestClient(t, env))

	types := discCompletions(t, env, "get", "")
	for _, want := range []string{"pods", "pod", "po", "configmaps", "cm", "deployments.apps", "deploy", "customresourcedefinitions.apiextensions.k8s.io"} {
		if !discContains(types, want) {
			t.Errorf("__complete get '' lacks %q", want)
		}
	}
	if got := discCompletions(t, env, "get", "deploym"); strings.Join(got, " ") != "deployment deployments deployments.apps" {
		t.Errorf("__complete get deploym = %v", got)
	}
	if got := discCompletions(t, env, "get", "pods,secr"); strings.Join(got, " ") != "pods,secret pods,secrets" {
		t.Errorf("__complete get pods,secr = %v", got)
	}

	if got := discCompletions(t, env, "-n", ns, "get", "configmaps", ""); strings.Join(got, " ") != "cm-a cm-aa cm-b root" {
		t.Errorf("__complete get configmaps '' = %v", got)
	}
	if got := discCompletions(t, env, "-n", ns, "get", "cm", "cm-a", "cm-"); strings.Join(got, " ") != "cm-aa cm-b" {
		t.Errorf("__complete get cm cm-a cm- = %v", got)
	}
	if got := discCompletions(t, env, "-n", ns, "get", "cm/cm-a"); strings.Join(got, " ") != "cm/cm-a cm/cm-aa" {
		t.Errorf("__complete get cm/cm-a = %v", got)
	}
	if got := discCompletions(t, env, "-n", ns, "tree", "secret", ""); strings.Join(got, " ") != "sec-s" {
		t.Errorf("__complete tree secret '' = %v", got)
	}
	if got := discCompletions(t, env, "-n", ns, "tree", "secret", "sec-s", ""); len(got) != 0 {
		t.Errorf("tree takes one name, got %v", got)
	}
	if got := discCompletions(t, env, "explain", "deploym"); strings.Join(got, " ") != "deployment deployments deployments.apps" {
		t.Errorf("__complete explain deploym = %v", got)
	}
	if got := discCompletions(t, env, "-n", ns[:len(ns)-1]); !discContains(got, ns) {
		t.Errorf("__complete -n %s = %v", ns[:len(ns)-1], got)
	}
	if got := discCompletions(t, env, "--context", ""); strings.Join(got, " ") != "admin cert-admin nobody" {
		t.Errorf("__complete --context '' = %v", got)
	}
	// Silent on errors: a type that does not exist, a user who may not list.
	if got := discCompletions(t, env, "get", "nosuchtype", ""); len(got) != 0 {
		t.Errorf("names of an unknown type: %v", got)
	}
	r := kdynAs(t, env, testenv.Nobody, "", "__complete", "-n", ns, "get", "secrets", "")
	if r.code != 0 || strings.TrimSpace(r.stdout) != ":4" {
		t.Errorf("forbidden list: %d %q", r.code, r.stdout)
	}
}
