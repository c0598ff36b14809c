package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// Helpers of the readiness tests (wait --for=ready, apply --wait, rollout)
// are prefixed rd. The control plane runs no controllers: tests write
// status through the status subresource, as a controller would.

// rdDeployment is a Deployment manifest with replicas.
func rdDeployment(name, ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, name, ns, replicas)
}

// rdDeploymentStatus is the status the deployment controller writes once
// available of replicas pods are up at the given generation.
func rdDeploymentStatus(generation int64, replicas, available int) string {
	progress := `{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated"}`
	avail := `{"type":"Available","status":"False","reason":"MinimumReplicasUnavailable"}`
	if available == replicas {
		progress = `{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable"}`
		avail = `{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}`
	}
	return fmt.Sprintf(`{"status":{"observedGeneration":%d,"replicas":%d,"updatedReplicas":%d,"readyReplicas":%d,"availableReplicas":%d,"conditions":[%s,%s]}}`,
		generation, replicas, replicas, available, available, progress, avail)
}

// rdSetStatus merge-patches obj's status subresource, as a controller.
func rdSetStatus(t *testing.T, env *testenv.Env, ns, obj, patch string) {
	t.Helper()
	kdyn(t, env, "-n", ns, "patch", obj, "--subresource", "status", "--type", "merge", "-p", patch).must(t)
}

// rdCountRequests counts the -v 6 log lines of GET requests for resource,
// lists and watches apart.
func rdCountRequests(log, resource string) (lists, watches int) {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "/"+resource) || !strings.Contains(line, "GET") {
			continue
		}
		if strings.Contains(line, "watch=true") {
			watches++
		} else {
			lists++
		}
	}
	return lists, watches
}

// TestWaitForReady: wait --for=ready on a Deployment and a custom resource
// returns as soon as a status write makes the last of them ready (one
// list per type and a watch, no polling), and not before.
func TestWaitForReady(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", map[string]any{"size": int64(1)})
	mfStdin(t, env, rdDeployment("web", ns, 2), "apply", "-f", "-").must(t)

	rdSetStatus(t, env, ns, typ+"/g1", `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`)
	ch := ocStart(t, env, "-n", ns, "wait", "--for=ready", "deploy/web", typ+"/g1", "--timeout=30s")
	ocWatching(t, ch)
	rdSetStatus(t, env, ns, "deploy/web", rdDeploymentStatus(1, 2, 1))
	ocStillRunning(t, ch, 700*time.Millisecond) // the deployment has 1 of 2 available
	start := time.Now()
	rdSetStatus(t, env, ns, "deploy/web", rdDeploymentStatus(1, 2, 2))
	r := ocResult(t, ch).must(t)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("readiness was seen %s after the status was written; a watch sees it at once", d)
	}
	if !strings.Contains(r.stdout, "deployment.apps/web condition met\n") || !strings.Contains(r.stdout, "gizmo."+gvr.Group+"/g1 condition met\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	// One list each; the gizmo was ready at once, the deployment was
	// followed by a watch.
	if lists, watches := rdCountRequests(r.stderr, "deployments"); lists != 1 || watches < 1 {
		t.Errorf("requests for deployments: %d lists, %d watches; want 1 list and a watch\n%s", lists, watches, r.stderr)
	}
	if lists, _ := rdCountRequests(r.stderr, "gizmos"); lists != 1 {
		t.Errorf("requests for gizmos: %d lists, want 1\n%s", lists, r.stderr)
	}
	// Ready already: at once.
	kdyn(t, env, "-n", ns, "wait", "--for=ready", "deploy/web", "--timeout=5s").must(t)
}

// TestWaitForReadyTimeout: on timeout every object not ready is named
// with its status and why; exit 1, or 7 with --exit-codes.
func TestWaitForReadyTimeout(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", nil)
	ocGizmo(t, c, gvr, ns, "g2", nil)
	rdSetStatus(t, env, ns, typ+"/g1", `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Provisioning","message":"waiting for a volume"}]}}`)
	rdSetStatus(t, env, ns, typ+"/g2", `{"status":{"conditions":[{"type":"Stalled","status":"True","reason":"BadSpec","message":"spec.size must be positive"}]}}`)
	mfStdin(t, env, rdDeployment("web", ns, 3), "apply", "-f", "-").must(t)
	rdSetStatus(t, env, ns, "deploy/web", rdDeploymentStatus(1, 3, 1))

	r := kdyn(t, env, "-n", ns, "--exit-codes", "wait", "--for=ready", "deploy/web", typ+"/g1", typ+"/g2", "--timeout=2s")
	r.mfExpect(t, 7,
		"timed out waiting for the condition on deployments/web: InProgress: Available: 1/3",
		"timed out waiting for the condition on gizmos/g1: InProgress: waiting for a volume",
		"timed out waiting for the condition on gizmos/g2: Failed: spec.size must be positive")
	kdyn(t, env, "-n", ns, "wait", "--for=ready", "deploy/web", "--timeout=0").mfExpect(t, 1, "condition not met for deployments/web: InProgress: Available: 1/3")
	// A missing object is an error, as with other conditions.
	kdyn(t, env, "-n", ns, "wait", "--for=ready", "deploy/nope", "--timeout=2s").mfExpect(t, 1, `deployments.apps "nope" not found`)
}

// TestApplyWait: apply --wait applies, then watches until every applied
// object is ready, printing each; it times out naming what is not.
func TestApplyWait(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "app.yaml", mfConfigMap("settings", ns, map[string]string{"k": "v"})+"---\n"+rdDeployment("api", ns, 2))

	ch := ocStart(t, env, "apply", "--server-side", "-f", file, "--wait", "--timeout=30s")
	ocWatching(t, ch)
	ocStillRunning(t, ch, 500*time.Millisecond)
	start := time.Now()
	rdSetStatus(t, env, ns, "deploy/api", rdDeploymentStatus(1, 2, 2))
	r := ocResult(t, ch).must(t)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("apply --wait saw readiness %s after the status was written", d)
	}
	for _, want := range []string{"configmap/settings serverside-applied\n", "deployment.apps/api serverside-applied\n", "configmap/settings ready\n", "deployment.apps/api ready\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Index(r.stdout, "deployment.apps/api ready") < strings.Index(r.stdout, "deployment.apps/api serverside-applied") {
		t.Errorf("ready before applied:\n%s", r.stdout)
	}

	// A new generation the controller has not observed: not ready.
	file2 := mfWrite(t, "app2.yaml", strings.Replace(rdDeployment("api", ns, 2), "nginx:1.27", "nginx:1.28", 1))
	r = kdyn(t, env, "--exit-codes", "apply", "--server-side", "-f", file2, "--wait", "--timeout=2s")
	r.mfExpect(t, 7, "waiting for 1 object(s) to be ready", "deployment.apps/api: InProgress: Deployment generation is 2, but latest observed generation is 1")
	kdyn(t, env, "apply", "--server-side", "-f", file2, "--wait", "--dry-run=server").mfExpect(t, 1, "--wait cannot be used with --dry-run")
}
