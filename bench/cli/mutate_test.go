package cli

import (
	"bytes"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestNodeCommandsMatchKubectl: cordon, uncordon and taint, each tool on a
// node of its own, print what kubectl prints and leave the node as
// kubectl leaves it.
func TestNodeCommandsMatchKubectl(t *testing.T) {
	env := testenv.Shared(t)
	p := newPair(t, env, testenv.Admin)
	for _, n := range []string{"node-kubectl", "node-kdyn"} {
		p.kubectl(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"`+n+`","labels":{"pool":"`+n+`"}}}`, "create", "-f", "-")
	}
	norm := func(b []byte) []byte { return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("node-kubectl"), []byte("NODE")), []byte("node-kdyn"), []byte("NODE")) }
	steps := [][]string{
		{"cordon", "NODE"},
		{"cordon", "NODE"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec.unschedulable}"},
		{"uncordon", "NODE"},
		{"uncordon", "NODE", "--dry-run=client"},
		{"cordon", "-l", "pool=NODE", "--dry-run=server"},
		{"taint", "nodes", "NODE", "dedicated=web:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated=other:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated=other:NoSchedule", "--overwrite"},
		{"taint", "node", "NODE", "a=b:NoExecute", "c:PreferNoSchedule"},
		{"taint", "node", "NODE", "a:NoExecute-", "x=y:NoSchedule"},
		{"taint", "nodes", "NODE", "dedicated-"},
		{"taint", "nodes", "NODE", "nothere-"},
		{"taint", "nodes", "NODE", "bad=x:Sometimes"},
		{"taint", "nodes", "NODE", "k=v"},
		{"taint", "nodes", "NODE"},
		{"taint", "nodes", "NODE", "k=v:NoSchedule", "NODE"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec.taints}"},
		{"taint", "nodes", "NODE", "c-", "x-", "-o", "name"},
		{"get", "node", "NODE", "-o", "jsonpath={.spec}"},
	}
	subst := func(args []string, node string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = string(bytes.ReplaceAll([]byte(a), []byte("NODE"), []byte(node)))
		}
		return out
	}
	for _, s := range steps {
		p.check(t, same{args: subst(s, "node-kubectl"), kdynArgs: subst(s, "node-kdyn"), norm: norm})
	}
}
