package cli

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestDrainMatchesKubectl: drain, each tool on nodes and pods of its own
// (the control plane has no kubelet: pods are bound by spec.nodeName and
// stay Pending), prints what kubectl prints on stdout and stderr and exits
// as it does: the refusals of bad arguments, each pod filter's error or
// warning, client and server dry runs, real evictions and deletions with
// --grace-period=0 (the server deletes such pods at once), an eviction a
// PodDisruptionBudget refuses until --timeout, a wait that times out, and
// --skip-wait-for-delete-timeout. Each step picks the pods of one kind with
// --pod-selector, since kubectl orders the messages of several kinds as a
// map does (randomly) and evicts several pods at once.
func TestDrainMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	ns := vbNamespace(t, vbClient(t, env))
	setup := func(stdin string, args ...string) run {
		t.Helper()
		r := p.kubectl(t, stdin, args...)
		if r.code != 0 {
			t.Fatalf("kubectl %q: %s", args, r.stderr)
		}
		return r
	}
	for _, tool := range []string{"kubectl", "kdyn"} {
		for _, n := range []string{"drain-" + tool, "drain2-" + tool} {
			setup(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"`+n+`","labels":{"pool":"drain-`+tool+`"}}}`, "create", "-f", "-")
		}
		ds := setup(`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds-`+tool+`"},"spec":{"selector":{"matchLabels":{"app":"ds"}},"template":{"metadata":{"labels":{"app":"ds"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`,
			"create", "-n", ns, "-f", "-", "-o", "jsonpath={.metadata.uid}")
		owner := func(kind, name, uid string) string {
			return `,"ownerReferences":[{"apiVersion":"apps/v1","kind":"` + kind + `","name":"` + name + `","uid":"` + uid + `","controller":true}]`
		}
		rs := owner("ReplicaSet", "web", "7d1c1c9e-0000-4000-8000-000000000001")
		for _, pod := range []struct{ name, meta, spec string }{
			{"bare", "", ""},
			{"web", rs, ""},
			{"web2", rs, ""},
			{"scratch", rs, `,"volumes":[{"name":"tmp","emptyDir":{}}]`},
			{"ds", owner("DaemonSet", "ds-"+tool, string(ds.stdout)), ""},
			{"orphan", owner("DaemonSet", "gone", "7d1c1c9e-0000-4000-8000-000000000002"), ""},
			{"mirror", `,"annotations":{"kubernetes.io/config.mirror":"hash"}`, ""},
			{"done", "", ""},
			{"pdb", "", ""},
			{"slow", "", ""},
			{"quick", "", ""},
		} {
			setup(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s-%s","labels":{"app":"%s","owner":"%s"}%s},"spec":{"nodeName":"drain-%s","containers":[{"name":"c","image":"x"}]%s}}`,
				pod.name, tool, pod.name, tool, pod.meta, tool, pod.spec), "create", "-n", ns, "-f", "-")
		}
		// A finished pod goes without --force; a running, ready one is
		// covered by a budget that allows no disruption (its status set as
		// the disruption controller would).
		setup("", "patch", "pod", "done-"+tool, "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Failed"}}`)
		setup("", "patch", "pod", "pdb-"+tool, "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
		setup("", "create", "pdb", "pdb-"+tool, "-n", ns, "--selector=app=pdb,owner="+tool, "--min-available=1")
		setup("", "patch", "pdb", "pdb-"+tool, "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}`)
	}
	// Each tool's names, and the tool naming itself ("See 'kubectl drain
	// -h'"), read TOOL.
	norm := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("kubectl"), []byte("TOOL")), []byte("kdyn"), []byte("TOOL"))
	}
	for _, step := range [][]string{
		// Refusals.
		{"drain"},
		{"drain", "drain-TOOL", "-l", "pool=drain-TOOL"},
		{"drain", "--selector="},
		{"drain", "drain-TOOL", "--pod-selector=app=("},
		{"drain", "nothere-TOOL"},
		{"drain", "drain-TOOL", "nothere-TOOL"},
		{"drain", "pod/bare-TOOL"},
		{"drain", "-l", "pool=nothere"},
		{"cordon", "--selector="},
		{"cordon", "drain-TOOL", "-l", "pool=drain-TOOL"},
		// The filters, in client dry runs.
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=bare"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=bare", "--force"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=ds"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=ds", "--ignore-daemonsets"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=orphan"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=orphan", "--force"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=scratch"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=scratch", "--delete-emptydir-data"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=mirror"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app=done"},
		{"drain", "drain-TOOL", "--dry-run=client", "--pod-selector=app in (web,web2,done)", "--chunk-size=1"},
		{"drain", "nodes/drain-TOOL", "--dry-run=client", "--pod-selector=app in (bare,slow)", "--force"},
		{"drain", "-l", "pool=drain-TOOL", "--dry-run=client", "--pod-selector=app=web"},
		{"get", "node", "drain-TOOL", "-o", "jsonpath={.spec.unschedulable}"},
		// Server dry runs: the node is not cordoned, no pod goes.
		{"drain", "drain-TOOL", "--dry-run=server", "--pod-selector=app=web"},
		{"drain", "drain-TOOL", "--dry-run=server", "--pod-selector=app=web", "--disable-eviction"},
		{"drain", "drain-TOOL", "--dry-run=server", "--pod-selector=app=bare"},
		{"get", "node", "drain-TOOL", "-o", "jsonpath={.spec.unschedulable}"},
		{"get", "pods", "-l", "owner=TOOL", "-o", "name"},
		// Real drains.
		{"drain", "drain-TOOL", "--pod-selector=app=web", "--grace-period=0"},
		{"drain", "drain-TOOL", "--pod-selector=app=done", "--grace-period=0", "--disable-eviction"},
		{"drain", "drain-TOOL", "--pod-selector=app=pdb", "--force", "--timeout=2s"},
		{"drain", "drain-TOOL", "--pod-selector=app=slow", "--force", "--timeout=2s"},
		{"drain", "drain-TOOL", "--pod-selector=app=slow", "--force", "--timeout=2s", "--disable-eviction"},
		{"drain", "drain-TOOL", "--pod-selector=app=quick", "--force", "--grace-period=1", "--skip-wait-for-delete-timeout=1"},
		{"drain", "-l", "pool=drain-TOOL", "--pod-selector=app=web2", "--grace-period=0"},
		{"get", "node", "drain-TOOL", "-o", "jsonpath={.spec.unschedulable}"},
		{"get", "pods", "-l", "owner=TOOL", "-o", "name"},
		{"uncordon", "-l", "pool=drain-TOOL"},
	} {
		p.check(t, same{args: toolArgs(step, "kubectl", "", "-n", ns), kdynArgs: toolArgs(step, "kdyn", "", "-n", ns), norm: norm, stderr: true})
	}
}
