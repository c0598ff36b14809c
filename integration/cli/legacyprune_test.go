package cli_test

import (
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestApplyLegacyPrune: --prune without --applyset, as kubectl's older
// pruning: by label (or --all) among the allowlisted kinds, only objects
// client-side apply made, never those the manifests declare; diff --prune
// shows the same deletions; --prune-allowlist narrows the kinds.
func TestApplyLegacyPrune(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	cm := func(name, group string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  labels:\n    group: " + group + "\n"
	}
	both := mfWrite(t, "ab.yaml", cm("a", "g")+"---\n"+cm("b", "g")+"---\n"+cm("other", "h"))
	kdyn(t, env, "apply", "-n", ns, "-f", both).must(t)
	// An object with the label that client-side apply did not make.
	mfStdin(t, env, cm("created", "g"), "create", "-n", ns, "-f", "-").must(t)

	onlyB := mfWrite(t, "b.yaml", cm("b", "g"))
	d := kdyn(t, env, "diff", "-n", ns, "--prune", "-l", "group=g", "-f", onlyB)
	if d.code != 1 || !strings.Contains(d.stdout, "-  name: a\n") || strings.Contains(d.stdout, "name: other") || strings.Contains(d.stdout, "name: created") {
		t.Fatalf("diff --prune (exit %d):\n%s\n%s", d.code, d.stdout, d.stderr)
	}
	// The allowlist leaves ConfigMaps out: nothing is pruned.
	kdyn(t, env, "apply", "-n", ns, "--prune", "-l", "group=g", "--prune-allowlist=core/v1/Secret", "-f", onlyB).must(t).mfStdout(t, "configmap/b unchanged\n")
	if mfGet(t, env, ns, "a") == nil {
		t.Fatal("a was pruned although ConfigMaps are not allowlisted")
	}
	r := kdyn(t, env, "apply", "-n", ns, "--prune", "-l", "group=g", "-f", onlyB).must(t)
	if r.stdout != "configmap/b unchanged\nconfigmap/a pruned\n" {
		t.Fatalf("apply --prune printed:\n%s", r.stdout)
	}
	for name, want := range map[string]bool{"a": false, "b": true, "other": true, "created": true} {
		if got := mfGet(t, env, ns, name) != nil; got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
	// --all ignores labels; a dry run deletes nothing.
	r = kdyn(t, env, "apply", "-n", ns, "--prune", "--all", "--prune-allowlist=core/v1/ConfigMap", "-f", onlyB, "--dry-run=server").must(t)
	if r.stdout != "configmap/b unchanged (server dry run)\nconfigmap/other pruned (server dry run)\n" {
		t.Fatalf("apply --prune --all --dry-run=server printed:\n%s", r.stdout)
	}
	if mfGet(t, env, ns, "other") == nil {
		t.Fatal("a dry run pruned other")
	}
}
