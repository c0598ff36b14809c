package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// sortLines compares outputs whose line order kubectl leaves to chance
// (several logs, read in Go map order).
func sortLines(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	slices.SortFunc(lines, bytes.Compare)
	return bytes.Join(lines, nil)
}

// runName reads the pods kubectl and kdyn run (rk, rd) as one name.
func runName(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("rk"), []byte("R")), []byte("rd"), []byte("R"))
}

// TestPodCommandsMatchKubectl: logs and exec against pods running on a
// KWOK node (a whole cluster of its own: controllers, scheduler, one
// node), through the API server's proxy to KWOK's kubelet API, print what
// kubectl v1.37 prints, with its exit codes and, where kubectl does not
// name itself, its standard error.
func TestPodCommandsMatchKubectl(t *testing.T) {
	env := testenv.New(t, testenv.Options{Controllers: true, Scheduler: true, Nodes: 1})
	dir := t.TempDir()
	for name, data := range map[string]string{
		"app.log":   "2026-12-05T10:00:00.000000000Z stdout F app line 1\n2026-12-05T10:00:01.000000000Z stdout F app line 2\n",
		"side.log":  "2026-12-05T10:00:02.000000000Z stderr F side line\n",
		"web.log":   "2026-12-05T10:00:03.000000000Z stdout F web line\n",
		"hello.txt": "hello from the container\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := newPair(t, env, testenv.Admin)
	ns := "pod-commands"
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[2]s}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: %[2]s, labels: {app: p}}
spec:
  containers: [{name: app, image: busybox}, {name: side, image: busybox}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[2]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: p, namespace: %[2]s}
spec:
  logs: [{containers: [app], logsFile: %[1]s/app.log}, {containers: [side], logsFile: %[1]s/side.log}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: web}
spec:
  selector: {matchNamespaces: [%[2]s]}
  logs: [{logsFile: %[1]s/web.log}]
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: exec}
spec:
  selector: {matchNamespaces: [%[2]s]}
  execs: [{local: {workDir: %[1]s}}]
`, dir, ns)
	if r := p.kubectl(t, manifest, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("apply: %s", r.stderr)
	}
	for _, args := range [][]string{
		{"wait", "-n", ns, "pod/p", "--for=condition=Ready", "--timeout=60s"},
		{"rollout", "status", "-n", ns, "deploy/web", "--timeout=60s"},
	} {
		if r := p.kubectl(t, "", args...); r.code != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	// KWOK learns of its kwok.x-k8s.io objects through its own watches:
	// wait until it serves what they configure. Exit 0 is not enough for
	// the logs: until KWOK has seen pod p's own Logs object, the
	// namespace's ClusterLogs answers for p too.
	for _, w := range []struct {
		args []string
		has  string
	}{
		{[]string{"logs", "-n", ns, "p", "-c", "app"}, "app line 1"},
		{[]string{"logs", "-n", ns, "deploy/web"}, "web line"},
		{[]string{"exec", "-n", ns, "p", "-c", "app", "--", "true"}, ""},
	} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			r := p.kubectl(t, "", w.args...)
			if r.code == 0 && bytes.Contains(r.stdout, []byte(w.has)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("KWOK does not serve %v after 60 s: %s%s", w.args, r.stdout, r.stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	twoPods := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
	n := func(args ...string) []string { return append([]string{"-n", ns}, args...) }
	for _, c := range []same{
		{args: n("logs", "p"), stderr: true},
		{args: n("logs", "p", "side")},
		{args: n("logs", "pod/p", "-c", "side", "--timestamps")},
		{args: n("logs", "p", "-c", "app", "--tail=1")},
		{args: n("logs", "p", "-c", "app", "--limit-bytes=5")},
		{args: n("logs", "p", "-c", "app", "--since-time=2026-12-05T10:00:01Z", "--timestamps")},
		{args: n("logs", "p", "--all-containers", "--prefix"), norm: sortLines},
		{args: n("logs", "deploy/web")},
		{args: n("logs", "deploy/web", "--all-pods"), norm: sortLines},
		{args: n("logs", "-l", "app=web", "--prefix"), norm: sortLines},
		{args: n("logs", "-l", "app=nothing"), stderr: true},
		{args: n("logs", "p", "-c", "nope"), stderr: true},
		{args: n("logs", "nope"), stderr: true},
		{args: n("logs", "cm/kube-root-ca.crt"), stderr: true},
		{args: n("logs", "p", "--since=1h", "--since-time=2026-12-05T10:00:00Z"), stderr: true},
		{args: n("logs", "p", "--tail=-2"), stderr: true},
		{args: n("logs", "p", "--all-containers", "-c", "app"), stderr: true},
		{args: n("logs")},
		{args: n("exec", "p", "--", "cat", "hello.txt"), stderr: true},
		{args: n("exec", "p", "-c", "side", "--", "sh", "-c", "echo out; echo err >&2"), stderr: true},
		{args: n("exec", "-i", "p", "-c", "app", "--", "head", "-c", "5"), stdin: "hello world", stderr: true},
		{args: n("exec", "deploy/web", "--", "cat", "hello.txt"), stderr: true},
		{args: n("exec", "p", "-c", "app", "--", "sh", "-c", "exit 3"), stderr: true},
		{args: n("exec", "-it", "p", "-c", "app", "--", "true"), stderr: true},
		{args: n("exec", "-q", "p", "--", "true"), stderr: true},
		{args: n("exec", "p", "date")},
		{args: n("exec", "p", "-c", "nope", "--", "date"), stderr: true},
		{args: n("exec", "nope", "--", "date"), stderr: true},
		{args: n("exec", "cm/kube-root-ca.crt", "--", "date"), stderr: true},
		{args: n("exec", "p"), stderr: true},
		{args: n("exec", "-f", "-", "--", "echo"), stdin: twoPods, stderr: true},
		// (copying into a KWOK pod is left out: kubectl's never ends there,
		// while kdyn's does, see integration/cli's TestPodStreams)
		{args: n("cp", "p:hello.txt", filepath.Join(t.TempDir(), "k")), kdynArgs: n("cp", "p:hello.txt", filepath.Join(t.TempDir(), "d")), stderr: true},
		{args: n("cp", "p:hello.txt", filepath.Join(t.TempDir(), "k"), "--retries=2"), kdynArgs: n("cp", "p:hello.txt", filepath.Join(t.TempDir(), "d"), "--retries=2"), stderr: true},
		// run attaches once the pod is ready: KWOK has no attach for it,
		// so the log is read instead; --rm deletes the pod
		{args: n("run", "rk", "-i", "--image=busybox", "--rm"), kdynArgs: n("run", "rd", "-i", "--image=busybox", "--rm"), stderr: true, norm: runName},
		{args: n("run", "rk", "--image=busybox", "--attach", "--rm", "-q"), kdynArgs: n("run", "rd", "--image=busybox", "--attach", "--rm", "-q"), stderr: true, norm: runName},
	} {
		p.check(t, c)
	}
}
