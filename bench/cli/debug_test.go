package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

// debugTarget is the pod the debug tests debug: two containers, an init
// container, probes, labels and annotations, as the suite's
// pod-with-metadata-and-probes.yaml; nonRoot runs it as user 1000.
func debugTarget(name string, nonRoot bool) map[string]any {
	probe := map[string]any{"exec": map[string]any{"command": []any{"true"}}}
	spec := map[string]any{
		"initContainers": []any{map[string]any{"name": "init", "image": "busybox"}},
		"containers": []any{
			map[string]any{"name": "app", "image": "nginx", "livenessProbe": probe, "readinessProbe": probe, "startupProbe": probe,
				"env": []any{map[string]any{"name": "A", "value": "1"}}},
			map[string]any{"name": "side", "image": "busybox", "command": []any{"sleep", "1d"}},
		},
	}
	if nonRoot {
		spec["securityContext"] = map[string]any{"runAsUser": int64(1000)}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"run": "target"}, "annotations": map[string]any{"test": "test"}},
		"spec":     spec}
}

// debuggerNames are the random names of debug containers and node pods.
var debuggerNames = regexp.MustCompile(`(debugger-|node-debugger-[a-z0-9.-]*-)[bcdfghjklmnpqrstvwxz2456789]{5}\b`)

// normDebug normalises what differs between two debugging runs: server
// fields and the random names.
func normDebug(b []byte) []byte {
	return debuggerNames.ReplaceAll(normServerFields(b), []byte("${1}XXXXX"))
}

// TestDebugMatchesKubectl: debug, in every way (ephemeral container, pod
// copy, node pod) and with every profile and custom profiles, prints what
// kubectl prints and makes the objects kubectl makes (compared as get -o
// json prints them, managed fields included, server fields and random
// names aside). Each tool works in a namespace of its own on pods of the
// same names.
func TestDebugMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	p := newPair(t, env, testenv.Admin)
	nsK, nsD := vbNamespace(t, c), vbNamespace(t, c)
	nodeGVR := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	node := "debug-node-" + nsK
	vbCreate(t, c, nodeGVR, "", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node}})
	t.Cleanup(func() { _ = c.Resource(nodeGVR).Delete(context.Background(), node, metav1.DeleteOptions{}) })
	podGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for _, ns := range []string{nsK, nsD} {
		vbCreate(t, c, podGVR, ns, debugTarget("target", false))
		vbCreate(t, c, podGVR, ns, debugTarget("nonroot", true))
		vbCreate(t, c, podGVR, ns, debugTarget("doomed", false))
	}
	dir := t.TempDir()
	customJSON, customYAML, badCustom := filepath.Join(dir, "custom.json"), filepath.Join(dir, "custom.yaml"), filepath.Join(dir, "bad.json")
	for path, content := range map[string]string{
		customJSON: `{"env":[{"name":"ENV_VAR1","value":"value1"},{"name":"A","value":"over"}],"securityContext":{"runAsUser":0},"workingDir":"/tmp","unknown":true}`,
		customYAML: "env:\n- name: ENV_VAR3\n  value: value3\nvolumeMounts:\n- name: host-root\n  mountPath: /root-fs\n  readOnly: true\n",
		badCustom:  `{"image":"x"}`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// check runs debug with both tools, each in its namespace, comparing
	// stdout and stderr.
	check := func(args ...string) {
		t.Helper()
		p.check(t, same{args: slices.Concat(args, []string{"-n", nsK}), kdynArgs: slices.Concat(args, []string{"-n", nsD}), stderr: true, norm: normDebug})
	}
	// object compares an object as the tools' gets print it.
	object := func(what ...string) {
		t.Helper()
		args := append(append([]string{"get"}, what...), "-o", "json", "--show-managed-fields")
		p.check(t, same{args: slices.Concat(args, []string{"-n", nsK}), kdynArgs: slices.Concat(args, []string{"-n", nsD}), norm: normDebug})
	}

	// Ephemeral containers, one per profile, added to the same pod (the
	// later patches merge into the list the earlier made).
	for _, profile := range []string{"general", "legacy", "baseline", "restricted", "netadmin", "sysadmin"} {
		check("debug", "target", "-i", "-t", "--attach=false", "--image=busybox", "-c", "dbg-"+profile, "--profile="+profile,
			"--env=X=1", "--target=app", "--image-pull-policy=IfNotPresent", "--", "sh", "-c", "sleep 1d")
	}
	check("debug", "target", "--image=busybox", "--arguments-only", "--", "a", "b")
	check("debug", "target", "--image=busybox", "-q", "-c", "quiet")
	check("debug", "target", "--image=busybox", "-c", "custom-json", "--custom="+customJSON)
	check("debug", "target", "--image=busybox", "-c", "custom-yaml", "--custom="+customYAML, "--profile=sysadmin")
	check("debug", "nonroot", "--image=busybox", "-c", "warned", "--profile=netadmin")
	check("debug", "nonroot", "--image=busybox", "-c", "unwarned", "--profile=netadmin", "--custom="+customJSON)
	object("pod/target")
	object("pod/nonroot")

	// Copies, one per profile and with the flags that shape them.
	for _, profile := range []string{"general", "legacy", "baseline", "restricted", "netadmin", "sysadmin"} {
		check("debug", "target", "--copy-to=copy-"+profile, "--image=busybox", "-c", "dbg", "--profile="+profile, "-i", "--attach=false")
		object("pod/copy-" + profile)
	}
	for name, flags := range map[string][]string{
		"copy-keep":    {"--image=busybox", "--keep-labels", "--keep-annotations", "--keep-liveness", "--keep-readiness", "--keep-startup", "--keep-init-containers=false", "--share-processes=false", "--same-node"},
		"copy-change":  {"-c", "app", "--set-image=*=alpine,side=debian", "--env=B=2", "--", "sleep", "1m"},
		"copy-args":    {"-c", "side", "--arguments-only", "--", "x"},
		"copy-images":  {"--set-image=app=alpine"},
		"copy-custom":  {"--image=busybox", "-c", "dbg", "--custom=" + customJSON},
		"copy-nonroot": {"--image=busybox", "-c", "dbg", "--profile=sysadmin"},
	} {
		target := "target"
		if name == "copy-nonroot" {
			target = "nonroot"
		}
		check(append([]string{"debug", target, "--copy-to=" + name}, flags...)...)
		object("pod/" + name)
	}
	check("debug", "doomed", "--copy-to=replacement", "--image=busybox", "--replace")
	object("pod/replacement")
	object("pod/doomed") // deleted with both

	// Node pods, one per profile, listed by label.
	for _, profile := range []string{"general", "legacy", "baseline", "restricted", "netadmin", "sysadmin"} {
		check("debug", "node/"+node, "--image=busybox", "--profile="+profile, "-c", "dbg-"+profile, "--", "true")
	}
	check("debug", "node/"+node, "--image=busybox", "--custom="+customYAML, "--env=E=1", "--arguments-only", "--", "x")
	object("pods", "-l", "app.kubernetes.io/managed-by=kubectl-debug", "--sort-by=.spec.containers[0].name")

	// -f names the pod as written. (kubectl's copy of a pod without a
	// securityContext panics: it reads the pod's runAsUser.)
	file := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: target\nspec:\n  securityContext: {}\n  containers:\n  - name: app\n    image: nginx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("debug", "-f", file, "--copy-to=from-file", "--image=busybox", "-c", "dbg")
	object("pod/from-file")

	// Refusals.
	for _, args := range [][]string{
		{"debug", "target"},
		{"debug", "--image=busybox"},
		{"debug", "target", "--image=busybox", "--profile=bogus"},
		{"debug", "target", "--image=busybox", "-t"},
		{"debug", "target", "--image=busybox", "--replace"},
		{"debug", "target", "--image=busybox", "--same-node"},
		{"debug", "target", "--image=busybox", "--set-image=app=x"},
		{"debug", "target", "--copy-to=x", "--image=busybox", "--target=app"},
		{"debug", "target", "--copy-to=x"},
		{"debug", "target", "--copy-to=x", "--", "sh"},
		{"debug", "target", "--image=Not_An_Image"},
		{"debug", "target", "--image=busybox", "--image-pull-policy=Sometimes"},
		{"debug", "target", "--image=busybox", "--custom=" + badCustom},
		{"debug", "target", "--attach", "--copy-to=y", "--set-image=app=x"},
		{"debug", "missing", "--image=busybox"},
		{"debug", "configmap/kube-root-ca.crt", "--image=busybox"},
	} {
		check(args...)
	}
}
