package cli_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestLabel(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", map[string]string{"keep": "1"}, nil)
	labels := func() map[string]string { return ocGet(t, c, ocConfigMapGVR, ns, "x").GetLabels() }

	// Add: the patch carries only the new key.
	r := kdyn(t, env, "-n", ns, "label", "cm", "x", "app=web", "-v", "8").must(t)
	ocStdout(t, r, "configmap/x labeled\n")
	if !strings.Contains(r.stderr, `{\"metadata\":{\"labels\":{\"app\":\"web\"}}}`) {
		t.Errorf("the request body is not the minimal merge patch:\n%s", r.stderr)
	}
	if diff := cmp.Diff(map[string]string{"keep": "1", "app": "web"}, labels()); diff != "" {
		t.Fatalf("labels (-want +got):\n%s", diff)
	}

	// Changing a value needs --overwrite; the same value does not.
	kdyn(t, env, "-n", ns, "label", "cm/x", "app=api").ocExpect(t, 1, "error: 'app' already has a value (web), and --overwrite is false")
	r = kdyn(t, env, "-n", ns, "label", "cm/x", "app=web").must(t)
	ocStdout(t, r, "configmap/x not labeled\n")
	r = kdyn(t, env, "-n", ns, "label", "cm/x", "app=api", "--overwrite").must(t)
	ocStdout(t, r, "configmap/x labeled\n")
	if labels()["app"] != "api" {
		t.Fatalf("labels after --overwrite: %v", labels())
	}

	// Remove; removing a missing key says so.
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "app-", "nope-", "-v", "8").must(t)
	ocStdout(t, r, "label \"nope\" not found.\nconfigmap/x unlabeled\n")
	if !strings.Contains(r.stderr, `{\"metadata\":{\"labels\":{\"app\":null}}}`) {
		t.Errorf("the removal is not a null in a minimal merge patch:\n%s", r.stderr)
	}
	if diff := cmp.Diff(map[string]string{"keep": "1"}, labels()); diff != "" {
		t.Fatalf("labels after removal (-want +got):\n%s", diff)
	}
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "a=1", "keep-").must(t)
	ocStdout(t, r, "configmap/x label(s) changed\n")

	// --list.
	kdyn(t, env, "-n", ns, "label", "cm", "x", "b=2").must(t)
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "--list").must(t)
	ocStdout(t, r, "a=1\nb=2\n")

	// Invalid keys and values are refused before anything is sent.
	kdyn(t, env, "-n", ns, "label", "cm", "x", "bad key=v", "--exit-codes").ocExpect(t, 2, `invalid label key "bad key"`)
	kdyn(t, env, "-n", ns, "label", "cm", "x", "ok=-bad").ocExpect(t, 1, `invalid label value: "ok=-bad"`)
	kdyn(t, env, "-n", ns, "label", "cm", "x").ocExpect(t, 1, "at least one label update is required")
	kdyn(t, env, "-n", ns, "label", "cm", "a=1").ocExpect(t, 1, "resource(s) were provided, but no name, label selector, or --all flag specified")

	// --resource-version is a precondition.
	rv := ocGet(t, c, ocConfigMapGVR, ns, "x").GetResourceVersion()
	kdyn(t, env, "-n", ns, "label", "cm", "x", "c=3", "--resource-version", "1", "--exit-codes").ocExpect(t, 4, "Conflict")
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "c=3", "--resource-version", rv).must(t)
	ocStdout(t, r, "configmap/x labeled\n")

	// Server dry run.
	r = kdyn(t, env, "-n", ns, "label", "cm", "x", "d=4", "--dry-run=server").must(t)
	ocStdout(t, r, "configmap/x labeled (server dry run)\n")
	if _, ok := labels()["d"]; ok {
		t.Fatal("a dry run persisted the label")
	}
}

func TestLabelSelectorAndAll(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ns2 := ocNamespace(t, c)
	// Values unique to this run: -A sees every namespace of the shared server.
	teamA, teamB := "a-"+ocSuffix(), "b-"+ocSuffix()
	ocConfigMap(t, c, ns, "a1", map[string]string{"team": teamA}, nil)
	ocConfigMap(t, c, ns, "a2", map[string]string{"team": teamA}, nil)
	ocConfigMap(t, c, ns, "b1", map[string]string{"team": teamB}, nil)
	ocConfigMap(t, c, ns2, "a3", map[string]string{"team": teamA}, nil)

	r := kdyn(t, env, "-n", ns, "label", "cm", "-l", "team="+teamA, "audited=yes").must(t)
	ocStdout(t, r, "configmap/a1 labeled\nconfigmap/a2 labeled\n")
	if _, ok := ocGet(t, c, ocConfigMapGVR, ns, "b1").GetLabels()["audited"]; ok {
		t.Fatal("b1 does not match the selector but was labeled")
	}
	if _, ok := ocGet(t, c, ocConfigMapGVR, ns2, "a3").GetLabels()["audited"]; ok {
		t.Fatal("a3 is in another namespace but was labeled")
	}

	// -A with a selector crosses namespaces.
	r = kdyn(t, env, "label", "cm", "-A", "-l", "team="+teamA, "audited=yes").must(t)
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []string{"configmap/a1 not labeled", "configmap/a2 not labeled", "configmap/a3 labeled"}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("-A -l output (-want +got):\n%s", diff)
	}

	// --all, and --list over several objects.
	r = kdyn(t, env, "-n", ns, "annotate", "cm", "--all", "note=checked").must(t)
	ocStdout(t, r, "configmap/a1 annotated\nconfigmap/a2 annotated\nconfigmap/b1 annotated\n")
	r = kdyn(t, env, "-n", ns, "label", "cm", "-l", "team="+teamB, "--list").must(t)
	ocStdout(t, r, "team="+teamB+"\n")
	r = kdyn(t, env, "-n", ns, "label", "cm", "-l", "team="+teamA, "--list").must(t)
	ocStdout(t, r, "Listing labels for configmap/a1:\n audited=yes\n team="+teamA+"\nListing labels for configmap/a2:\n audited=yes\n team="+teamA+"\n")

	kdyn(t, env, "-n", ns, "label", "cm", "a1", "-l", "team="+teamA, "x=1").ocExpect(t, 1, "name cannot be provided when a selector")
	kdyn(t, env, "-n", ns, "label", "cm", "--all", "-l", "team="+teamA, "x=1").ocExpect(t, 1, "cannot set --all and --selector at the same time")
	kdyn(t, env, "-n", ns, "label", "cm", "--all", "x=1", "--resource-version", "5").ocExpect(t, 1, "--resource-version may only be used with a single resource")
	r = kdyn(t, env, "-n", ns, "label", "cm", "-l", "team=zzz", "x=1").must(t)
	if !strings.Contains(r.stderr, "No resources found in "+ns+" namespace.") {
		t.Fatalf("no match: stderr = %q", r.stderr)
	}
}

func TestAnnotate(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, nil)
	annotations := func() map[string]string { return ocGet(t, c, ocConfigMapGVR, ns, "x").GetAnnotations() }

	r := kdyn(t, env, "-n", ns, "annotate", "cm", "x", "note=a=b, with spaces", "example.com/owner=team-a").must(t)
	ocStdout(t, r, "configmap/x annotated\n")
	if diff := cmp.Diff(map[string]string{"note": "a=b, with spaces", "example.com/owner": "team-a"}, annotations()); diff != "" {
		t.Fatalf("annotations (-want +got):\n%s", diff)
	}
	kdyn(t, env, "-n", ns, "annotate", "cm", "x", "note=other").
		ocExpect(t, 1, "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (a=b, with spaces)")
	kdyn(t, env, "-n", ns, "annotate", "cm", "x", "note=other", "--overwrite").must(t)
	r = kdyn(t, env, "-n", ns, "annotate", "cm", "x", "note-").must(t)
	ocStdout(t, r, "configmap/x annotated\n")
	r = kdyn(t, env, "-n", ns, "annotate", "cm", "x", "--list").must(t)
	ocStdout(t, r, "example.com/owner=team-a\n")
	kdyn(t, env, "-n", ns, "annotate", "cm", "x", "Bad/Key=1").ocExpect(t, 1, `invalid annotation key "Bad/Key"`)
	r = kdyn(t, env, "-n", ns, "annotate", "cm", "x", "z=1", "-o", "jsonpath={.metadata.annotations.z}").must(t)
	ocStdout(t, r, "1")
}
