package cli_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// nodesNS is the namespace of TestNodeVerbs' pods.
const nodesNS = "drain"

// nodeWorkloads are TestNodeVerbs' workloads: a Deployment web of two
// pods, a Deployment scratch whose pod has an emptyDir volume, a
// Deployment guarded whose one pod a PodDisruptionBudget lets no eviction
// take, and a DaemonSet ds (a pod on each node).
const nodeWorkloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: scratch}
spec:
  replicas: 1
  selector: {matchLabels: {app: scratch}}
  template:
    metadata: {labels: {app: scratch}}
    spec:
      containers: [{name: c, image: busybox, volumeMounts: [{name: tmp, mountPath: /tmp}]}]
      volumes: [{name: tmp, emptyDir: {}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: guarded}
spec:
  replicas: 1
  selector: {matchLabels: {app: guarded}}
  template:
    metadata: {labels: {app: guarded}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: guarded}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  selector: {matchLabels: {app: ds}}
  template:
    metadata: {labels: {app: ds}}
    spec: {containers: [{name: c, image: busybox}]}
`

// lonelyPod is a pod that declares no controller.
const lonelyPod = `apiVersion: v1
kind: Pod
metadata: {name: lonely, labels: {app: lonely}}
spec: {containers: [{name: c, image: busybox}]}
`

// TestNodeVerbs: cordon, uncordon, taint and drain against a whole
// cluster (controllers, scheduler, two KWOK nodes whose pods really run
// and really go), each change read back from the node, and its effect on
// the scheduler and on the pods checked: a cordoned or tainted node gets
// no new pods, drain evicts the pods its flags let go (their controllers
// recreate them on the other node), refuses DaemonSet, emptyDir and
// unmanaged pods without the flags that allow them, waits on a
// PodDisruptionBudget until --timeout, deletes past it with
// --disable-eviction, and changes nothing under --dry-run.
func TestNodeVerbs(t *testing.T) {
	env := testenv.New(t, testenv.Options{Controllers: true, Scheduler: true, Nodes: 2})
	n0, n1 := testenv.NodeName(0), testenv.NodeName(1)
	k := func(args ...string) result { return kdyn(t, env, args...) }
	kn := func(args ...string) result { return kdyn(t, env, append([]string{"-n", nodesNS}, args...)...) }
	k("create", "namespace", nodesNS).must(t)

	if !t.Run("cordon", func(t *testing.T) {
		k("cordon", n0).expect(t, 0, "node/"+n0+" cordoned\n")
		checkUnschedulable(t, env, n0, "true")
		k("cordon", n0).expect(t, 0, "node/"+n0+" already cordoned\n")
		k("uncordon", n0).expect(t, 0, "node/"+n0+" uncordoned\n")
		checkUnschedulable(t, env, n0, "")
		k("uncordon", n0).expect(t, 0, "node/"+n0+" already uncordoned\n")

		// dry runs print what would be done and change nothing
		k("cordon", n0, "--dry-run=client").expect(t, 0, "node/"+n0+" cordoned (dry run)\n")
		k("cordon", n0, "--dry-run=server").expect(t, 0, "node/"+n0+" cordoned (server dry run)\n")
		checkUnschedulable(t, env, n0, "")

		// a selector picks every node it matches, in name order
		k("cordon", "-l", "type=kwok").expect(t, 0, "node/"+n0+" cordoned\nnode/"+n1+" cordoned\n")
		checkUnschedulable(t, env, n0, "true")
		checkUnschedulable(t, env, n1, "true")
		k("uncordon", "-l", "type=kwok").expect(t, 0, "node/"+n0+" uncordoned\nnode/"+n1+" uncordoned\n")
		checkUnschedulable(t, env, n0, "")
		checkUnschedulable(t, env, n1, "")
		// no node matches: nothing on either stream, as kubectl
		if r := k("cordon", "-l", "type=none"); r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("cordon -l type=none: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}

		// kubectl takes NODE as TYPE/NAME too (ResourceNames("nodes", args...))
		k("cordon", "node/"+n1).expect(t, 0, "node/"+n1+" cordoned\n")
		checkUnschedulable(t, env, n1, "true")

		k("cordon").expect(t, 1, "", "error: USAGE: cordon NODE [flags]\nSee 'kdyn cordon -h' for help and examples")
		k("uncordon", n0, "-l", "type=kwok").expect(t, 1, "", "error: cannot specify both a node name and a --selector option")
		k("cordon", "nope").expect(t, 1, "", `Error from server (NotFound): nodes "nope" not found`)
		checkUnschedulable(t, env, n0, "")
	}) {
		return
	}
	// From here on n1 is cordoned: new pods can only go to n0.

	if !t.Run("taint", func(t *testing.T) {
		node := "node/" + n0
		k("taint", "nodes", n0, "dedicated=gpu:NoSchedule").expect(t, 0, node+" tainted\n")
		checkTaints(t, env, n0, "dedicated=gpu:NoSchedule\n")
		k("taint", "nodes", n0, "dedicated=cpu:NoSchedule").expect(t, 1, "",
			"error: node "+n0+" already has dedicated taint(s) with same effect(s) and --overwrite is false")
		checkTaints(t, env, n0, "dedicated=gpu:NoSchedule\n")
		k("taint", "nodes", n0, "dedicated=cpu:NoSchedule", "--overwrite").expect(t, 0, node+" modified\n")
		checkTaints(t, env, n0, "dedicated=cpu:NoSchedule\n")
		// the same key with another effect is another taint; new ones come first
		k("taint", "node", n0, "dedicated=x:PreferNoSchedule", "spot:NoExecute").expect(t, 0, node+" tainted\n")
		checkTaints(t, env, n0, "dedicated=x:PreferNoSchedule\nspot=:NoExecute\ndedicated=cpu:NoSchedule\n")

		// KEY:EFFECT- removes one taint, KEY- every effect of the key
		k("taint", "nodes", n0, "dedicated:NoSchedule-").expect(t, 0, node+" untainted\n")
		checkTaints(t, env, n0, "dedicated=x:PreferNoSchedule\nspot=:NoExecute\n")
		k("taint", "nodes", n0, "dedicated:NoSchedule-").expect(t, 1, "", `error: taint "dedicated:NoSchedule" not found`)
		k("taint", "nodes", n0, "spot-", "extra=1:NoSchedule").expect(t, 0, node+" modified\n")
		checkTaints(t, env, n0, "extra=1:NoSchedule\ndedicated=x:PreferNoSchedule\n")
		k("taint", "nodes", n0, "dedicated-").expect(t, 0, node+" untainted\n")
		checkTaints(t, env, n0, "extra=1:NoSchedule\n")

		// dry runs change nothing (kubectl v1.37 prints no "(dry run)"
		// suffix for taint, kdyn does: only the start is checked)
		for _, dry := range []string{"--dry-run=client", "--dry-run=server"} {
			r := k("taint", "nodes", n0, "zone=a:NoSchedule", dry)
			r.expect(t, 0, "-")
			if !strings.HasPrefix(r.stdout, node+" tainted") {
				t.Errorf("taint %s printed %q", dry, r.stdout)
			}
		}
		checkTaints(t, env, n0, "extra=1:NoSchedule\n")

		// --all and -l pick every node
		k("taint", "nodes", "--all", "pool=x:PreferNoSchedule").expect(t, 0, node+" tainted\nnode/"+n1+" tainted\n")
		checkTaints(t, env, n1, "pool=x:PreferNoSchedule\n")
		checkTaints(t, env, n0, "pool=x:PreferNoSchedule\nextra=1:NoSchedule\n")
		k("taint", "nodes", "-l", "type=kwok", "pool-").expect(t, 0, node+" untainted\nnode/"+n1+" untainted\n")
		checkTaints(t, env, n1, "")
		k("taint", "nodes", n0, "extra-").expect(t, 0, node+" untainted\n")
		checkTaints(t, env, n0, "")

		k("taint", "nodes", n0, "a=b:Bogus").expect(t, 1, "", "error: invalid taint effect: Bogus, unsupported taint effect")
		k("taint", "nodes", n0, "a=b").expect(t, 1, "", "error: invalid taint spec: a=b")
		k("taint", "nodes", n0).expect(t, 1, "", "error: at least one taint update is required")
		k("taint", "nodes", n0, "a=b:NoSchedule", "a=c:NoSchedule").expect(t, 1, "",
			"error: duplicated taints with the same key and effect: {a c NoSchedule <nil>}")
		k("taint", "nodes", n0, "a=b:NoSchedule", n1).expect(t, 1, "", "error: all resources must be specified before taint changes: "+n1)
		k("taint", "nodes", "nope", "a=b:NoSchedule").expect(t, 1, "", `Error from server (NotFound): nodes "nope" not found`)
		checkTaints(t, env, n0, "")
		checkTaints(t, env, n1, "")

		// The scheduler obeys: with n0 tainted and n1 cordoned a new pod
		// fits nowhere; once the taint is gone it runs on n0.
		k("taint", "nodes", n0, "dedicated=x:NoSchedule").expect(t, 0, node+" tainted\n")
		kdynAs(t, env, testenv.Admin, lonelyPod, "-n", nodesNS, "create", "-f", "-").must(t)
		kn("wait", "pod/lonely", `--for=jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}=Unschedulable`, "--timeout=30s").must(t)
		msg := kn("get", "pod/lonely", "-o", `jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}`).must(t).stdout
		if !strings.Contains(msg, "1 node(s) had untolerated taint") || !strings.Contains(msg, "1 node(s) were unschedulable") {
			t.Errorf("lonely is unschedulable for another reason: %q", msg)
		}
		k("taint", "nodes", n0, "dedicated:NoSchedule-").expect(t, 0, node+" untainted\n")
		kn("wait", "pod/lonely", "--for=condition=Ready", "--timeout=30s").must(t)
		if got := podsOn(t, env, n0, "app=lonely"); !slices.Equal(got, []string{"lonely"}) {
			t.Errorf("pods app=lonely on %s: %q", n0, got)
		}
	}) {
		return
	}

	// The workloads start while n1 is cordoned: all but the DaemonSet's
	// pod there (a DaemonSet tolerates the cordon) go to n0.
	kdynAs(t, env, testenv.Admin, nodeWorkloads, "-n", nodesNS, "apply", "-f", "-").must(t)
	for _, w := range []string{"deploy/web", "deploy/scratch", "deploy/guarded", "ds/ds"} {
		kn("rollout", "status", w, "--timeout=60s").must(t)
	}
	// the budget counts the guarded pod, and allows no disruption
	kn("wait", "pdb/guarded", "--for=jsonpath={.status.currentHealthy}=1", "--timeout=30s").must(t)
	kn("get", "pdb/guarded", "-o", "jsonpath={.status.disruptionsAllowed}").expect(t, 0, "0")
	ds0, ds1 := onlyPod(t, podsOn(t, env, n0, "app=ds")), onlyPod(t, podsOn(t, env, n1, "app=ds"))
	if got := podsOn(t, env, n1, ""); !slices.Equal(got, []string{ds1}) {
		t.Fatalf("pods on cordoned %s: %q, want only %s", n1, got, ds1)
	}
	web := podsOn(t, env, n0, "app=web")
	scratch := onlyPod(t, podsOn(t, env, n0, "app=scratch"))
	guarded := onlyPod(t, podsOn(t, env, n0, "app=guarded"))
	if len(web) != 2 {
		t.Fatalf("web pods on %s: %q", n0, web)
	}
	all0 := podsOn(t, env, n0, "")
	if want := sortedNames(ds0, guarded, "lonely", scratch, web[0], web[1]); !slices.Equal(all0, want) {
		t.Fatalf("pods on %s: %q, want %q", n0, all0, want)
	}
	// evicted pods can go to n1 now
	k("uncordon", n1).expect(t, 0, "node/"+n1+" uncordoned\n")
	checkUnschedulable(t, env, n1, "")

	t.Run("drain", func(t *testing.T) {
		node := "node/" + n0
		// Without flags the DaemonSet, emptyDir and unmanaged pods each
		// stop the drain; the node is cordoned all the same.
		k("drain", n0).expect(t, 1, node+" cordoned\n",
			`error: unable to drain node "`+n0+`" due to error: [`,
			"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): "+nodesNS+"/"+ds0,
			"cannot delete Pods that declare no controller (use --force to override): "+nodesNS+"/lonely",
			"cannot delete Pods with local storage (use --delete-emptydir-data to override): "+nodesNS+"/"+scratch,
			"], continuing command...\nThere are pending nodes to be drained:\n "+n0+"\n")
		checkUnschedulable(t, env, n0, "true")
		checkPods(t, env, n0, all0)
		// each flag lets its kind go: the unmanaged pod still needs --force
		r := k("drain", n0, "--ignore-daemonsets", "--delete-emptydir-data")
		r.expect(t, 1, node+" already cordoned\n",
			`error: unable to drain node "`+n0+`" due to error: cannot delete Pods that declare no controller (use --force to override): `+nodesNS+"/lonely, continuing command...")
		if strings.Contains(r.stderr, "DaemonSet") || strings.Contains(r.stderr, "local storage") {
			t.Errorf("drain with --ignore-daemonsets --delete-emptydir-data still refuses:\n%s", r.stderr)
		}
		checkPods(t, env, n0, all0)

		allow := []string{"--ignore-daemonsets", "--delete-emptydir-data", "--force"}
		warning := "Warning: ignoring DaemonSet-managed Pods: " + nodesNS + "/" + ds0 +
			"; deleting Pods that declare no controller: " + nodesNS + "/lonely\n"

		// --dry-run=client names the pods in list order and sends nothing
		evicting := func(pod, suffix string) string { return "evicting pod " + nodesNS + "/" + pod + suffix }
		want := node + " already cordoned (dry run)\n"
		for _, p := range []string{guarded, "lonely", scratch, web[0], web[1]} {
			want += evicting(p, " (dry run)") + "\n"
		}
		want += node + " drained (dry run)\n"
		r = k(append([]string{"drain", n0, "--dry-run=client"}, allow...)...)
		r.expect(t, 0, want)
		if r.stderr != warning {
			t.Errorf("drain --dry-run=client: stderr %q, want %q", r.stderr, warning)
		}
		checkPods(t, env, n0, all0)

		// --dry-run=server sends dry-run evictions (at once, so in any
		// order), which the server checks...
		r = k(append([]string{"drain", n0, "--dry-run=server", "--pod-selector", "app!=guarded"}, allow...)...)
		r.expect(t, 0, "-")
		checkDrainLines(t, r.stdout, node+" already cordoned (server dry run)", node+" drained (server dry run)",
			evicting("lonely", " (server dry run)"), evicting(scratch, " (server dry run)"),
			evicting(web[0], " (server dry run)"), evicting(web[1], " (server dry run)"))
		if r.stderr != warning {
			t.Errorf("drain --dry-run=server: stderr %q, want %q", r.stderr, warning)
		}
		// ...against the budget too
		k("drain", n0, "--dry-run=server", "--pod-selector", "app=guarded", "--timeout=1s").expect(t, 1, "-",
			"Cannot evict pod as it would violate the pod's disruption budget.",
			`error when evicting pods/"`+guarded+`" -n "`+nodesNS+`": global timeout reached: 1s`)
		checkPods(t, env, n0, all0)

		// --pod-selector: only the web pods are evicted, and their
		// Deployment puts new ones on n1
		r = k("drain", n0, "--pod-selector", "app=web")
		r.expect(t, 0, "-")
		if r.stderr != "" {
			t.Errorf("drain --pod-selector app=web: stderr %q", r.stderr)
		}
		checkDrainLines(t, r.stdout, node+" already cordoned", node+" drained",
			evicting(web[0], ""), evicting(web[1], ""), "pod/"+web[0]+" evicted", "pod/"+web[1]+" evicted")
		for _, p := range web {
			kn("get", "pod", p).expect(t, 1, "", `Error from server (NotFound): pods "`+p+`" not found`)
		}
		kn("rollout", "status", "deploy/web", "--timeout=60s").must(t)
		if moved := podsOn(t, env, n1, "app=web"); len(moved) != 2 || slices.Contains(moved, web[0]) || slices.Contains(moved, web[1]) {
			t.Errorf("web pods on %s after the drain: %q", n1, moved)
		}
		rest := sortedNames(ds0, guarded, "lonely", scratch)
		checkPods(t, env, n0, rest)

		// The budget refuses the eviction; drain retries until --timeout
		// and leaves the pod where it is.
		r = k("drain", n0, "--pod-selector", "app=guarded", "--timeout=2s")
		r.expect(t, 1, "-",
			`error when evicting pods/"`+guarded+`" -n "`+nodesNS+`" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
			`There are pending pods in node "`+n0+`" when an error occurred: error when evicting pods/"`+guarded+`" -n "`+nodesNS+`": global timeout reached: 2s`+"\npod/"+guarded+"\n",
			`error: unable to drain node "`+n0+`" due to error: error when evicting pods/"`+guarded+`" -n "`+nodesNS+`": global timeout reached: 2s, continuing command...`,
			"There are pending nodes to be drained:\n "+n0+"\n")
		if !strings.HasPrefix(r.stdout, node+" already cordoned\n"+evicting(guarded, "")+"\n") || strings.Contains(r.stdout, "evicted") {
			t.Errorf("drain blocked by the budget printed:\n%s", r.stdout)
		}
		checkPods(t, env, n0, rest)
		kn("get", "pod", guarded, "-o", "jsonpath={.metadata.deletionTimestamp}").expect(t, 0, "")

		// --disable-eviction deletes it, bypassing the budget
		k("drain", n0, "--pod-selector", "app=guarded", "--disable-eviction").expect(t, 0,
			node+" already cordoned\npod/"+guarded+" deleted\n"+node+" drained\n")
		kn("get", "pod", guarded).expect(t, 1, "", `pods "`+guarded+`" not found`)
		kn("rollout", "status", "deploy/guarded", "--timeout=60s").must(t)
		if moved := podsOn(t, env, n1, "app=guarded"); len(moved) != 1 || moved[0] == guarded {
			t.Errorf("guarded pods on %s after the drain: %q", n1, moved)
		}
		rest = sortedNames(ds0, "lonely", scratch)
		checkPods(t, env, n0, rest)

		// With every flag the emptyDir and unmanaged pods go (the
		// unmanaged one for good); the DaemonSet's pod stays.
		r = k(append([]string{"drain", n0}, allow...)...)
		r.expect(t, 0, "-")
		if r.stderr != warning {
			t.Errorf("drain %q: stderr %q, want %q", allow, r.stderr, warning)
		}
		checkDrainLines(t, r.stdout, node+" already cordoned", node+" drained",
			evicting("lonely", ""), evicting(scratch, ""), "pod/lonely evicted", "pod/"+scratch+" evicted")
		checkPods(t, env, n0, []string{ds0})
		kn("get", "pod", "lonely").expect(t, 1, "", `pods "lonely" not found`)
		kn("rollout", "status", "deploy/scratch", "--timeout=60s").must(t)
		if moved := podsOn(t, env, n1, "app=scratch"); len(moved) != 1 || moved[0] == scratch {
			t.Errorf("scratch pods on %s after the drain: %q", n1, moved)
		}
		if got := podsOn(t, env, n1, ""); len(got) != 5 {
			t.Errorf("pods on %s after the drain: %q (want ds, guarded, scratch and two web)", n1, got)
		}

		// a drained node drains again at once
		k("drain", n0, "--ignore-daemonsets").expect(t, 0, node+" already cordoned\n"+node+" drained\n",
			"Warning: ignoring DaemonSet-managed Pods: "+nodesNS+"/"+ds0+"\n")

		k("drain").expect(t, 1, "", "error: USAGE: drain NODE [flags]\nSee 'kdyn drain -h' for help and examples")
		k("drain", n0, "-l", "type=kwok").expect(t, 1, "", "error: cannot specify both a node name and a --selector option")
		k("drain", "nope").expect(t, 1, "", `Error from server (NotFound): nodes "nope" not found`)
		k("drain", n0, "--pod-selector", "=bad").expect(t, 1, "", "error: --pod-selector=<pod_selector> must be a valid label selector")
		checkPods(t, env, n0, []string{ds0})

		k("uncordon", n0).expect(t, 0, node+" uncordoned\n")
		checkUnschedulable(t, env, n0, "")

		// -l drains every node it picks, cordoning them all first, then
		// one after the other: from n0 nothing (its DaemonSet pod stays),
		// from n1 the web, scratch and guarded pods (in list order)
		on1 := podsOn(t, env, n1, "app!=ds")
		if len(on1) != 4 {
			t.Fatalf("pods on %s but the DaemonSet's: %q", n1, on1)
		}
		want = node + " cordoned (dry run)\nnode/" + n1 + " cordoned (dry run)\n" + node + " drained (dry run)\n"
		for _, p := range on1 {
			want += evicting(p, " (dry run)") + "\n"
		}
		want += "node/" + n1 + " drained (dry run)\n"
		k(append([]string{"drain", "-l", "type=kwok", "--dry-run=client"}, allow...)...).expect(t, 0, want,
			"Warning: ignoring DaemonSet-managed Pods: "+nodesNS+"/"+ds0+"\n",
			"Warning: ignoring DaemonSet-managed Pods: "+nodesNS+"/"+ds1+"\n")
		checkUnschedulable(t, env, n0, "")
		checkUnschedulable(t, env, n1, "")
	})
}

// checkUnschedulable reads node's spec.unschedulable back and compares it
// with want ("true", or "" when the field is absent).
func checkUnschedulable(t *testing.T, env *testenv.Env, node, want string) {
	t.Helper()
	got := kdyn(t, env, "get", "node", node, "-o", "jsonpath={.spec.unschedulable}").must(t).stdout
	if got != want {
		t.Errorf("node %s: spec.unschedulable %q, want %q", node, got, want)
	}
}

// checkTaints reads node's taints back, one "KEY=VALUE:EFFECT" line each
// in the node's order, and compares them with want. The taints the node
// lifecycle controller manages (node.kubernetes.io/..., such as
// node.kubernetes.io/unschedulable on a cordoned node) are left out.
func checkTaints(t *testing.T, env *testenv.Env, node, want string) {
	t.Helper()
	out := kdyn(t, env, "get", "node", node, "-o", `jsonpath={range .spec.taints[*]}{.key}={.value}:{.effect}{"\n"}{end}`).must(t).stdout
	var got strings.Builder
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "node.kubernetes.io/") {
			got.WriteString(line)
		}
	}
	if got.String() != want {
		t.Errorf("node %s taints:\n%s\nwant:\n%s", node, got.String(), want)
	}
}

// podsOn lists the names of the pods of nodesNS bound to node (those
// selector picks, when not empty), in name order.
func podsOn(t *testing.T, env *testenv.Env, node, selector string) []string {
	t.Helper()
	args := []string{"get", "pods", "-n", nodesNS, "--field-selector", "spec.nodeName=" + node,
		"-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`}
	if selector != "" {
		args = append(args, "-l", selector)
	}
	return sortedNames(strings.Fields(kdyn(t, env, args...).must(t).stdout)...)
}

// checkPods compares the pods of nodesNS on node with want (in name
// order).
func checkPods(t *testing.T, env *testenv.Env, node string, want []string) {
	t.Helper()
	if got := podsOn(t, env, node, ""); !slices.Equal(got, want) {
		t.Errorf("pods on %s: %q, want %q", node, got, want)
	}
}

// onlyPod returns the only name of names, failing the test when there are
// none or several.
func onlyPod(t *testing.T, names []string) string {
	t.Helper()
	if len(names) != 1 {
		t.Fatalf("want one pod, got %q", names)
	}
	return names[0]
}

// sortedNames returns names sorted.
func sortedNames(names ...string) []string {
	return slices.Sorted(slices.Values(names))
}

// checkDrainLines checks a drain's stdout: first its first line, last its
// last one, and between them exactly the lines middle, in any order (the
// evictions run at once).
func checkDrainLines(t *testing.T, stdout, first, last string, middle ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) < 2 || lines[0] != first || lines[len(lines)-1] != last ||
		!slices.Equal(sortedNames(lines[1:len(lines)-1]...), sortedNames(middle...)) {
		t.Errorf("stdout:\n%s\nwant %q first, %q last and between them, in any order:\n%s",
			stdout, first, last, strings.Join(middle, "\n"))
	}
}
