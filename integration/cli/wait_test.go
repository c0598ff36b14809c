package cli_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/integration/testenv"
)

// ocRun is kdyn running in the background, at -v 6: its log so far tells
// which requests the server has answered.
type ocRun struct {
	mu  sync.Mutex
	log []byte // kdyn's stderr so far
	ch  chan result
}

// Write takes kdyn's stderr as it comes.
func (r *ocRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, p...)
	return len(p), nil
}

func (r *ocRun) logSoFar() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.log)
}

// ocStart runs kdyn in the background (with -v 6); ocResult returns its
// result.
func ocStart(t *testing.T, env *testenv.Env, args ...string) *ocRun {
	t.Helper()
	r := &ocRun{ch: make(chan result, 1)}
	full := kdynArgs(env, testenv.Admin, append([]string{"-v", "6"}, args...)...)
	go func() { r.ch <- runLive(t, "", nil, r, full...) }()
	return r
}

// ocWatching waits until the background run's watch has been answered, so
// that it has listed: a change made from then on is one it waits through,
// not one its list already shows (a kdyn slow to start would otherwise
// see the end state at once, with no watch). It fails the test if the run
// ends first.
func ocWatching(t *testing.T, r *ocRun) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		for _, line := range strings.Split(r.logSoFar(), "\n") {
			if strings.Contains(line, "watch=true") && strings.Contains(line, `status="200 OK"`) {
				return
			}
		}
		select {
		case res := <-r.ch:
			t.Fatalf("kdyn ended before it watched: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		case <-deadline:
			t.Fatalf("kdyn did not watch within 30s\nstderr so far:\n%s", r.logSoFar())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ocStillRunning fails the test if the background run has already ended.
func ocStillRunning(t *testing.T, r *ocRun, d time.Duration) {
	t.Helper()
	select {
	case res := <-r.ch:
		t.Fatalf("kdyn ended before the condition was met: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	case <-time.After(d):
	}
}

// ocResult waits (bounded) for the background run.
func ocResult(t *testing.T, r *ocRun) result {
	t.Helper()
	select {
	case res := <-r.ch:
		return res
	case <-time.After(40 * time.Second):
		t.Fatal("kdyn wait did not return")
	}
	return result{}
}

func TestWaitForConditionSetByAnotherProcess(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", map[string]any{"color": "red"})

	ch := ocStart(t, env, "-n", ns, "wait", "--for=condition=Ready", typ+"/g1", "--timeout=30s")
	ocWatching(t, ch)
	// Another process sets the status.
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "--type", "merge",
		"-p", `{"status":{"conditions":[{"type":"Ready","status":"False"}]}}`).must(t)
	ocStillRunning(t, ch, 500*time.Millisecond)
	start := time.Now()
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "--type", "merge",
		"-p", `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`).must(t)
	r := ocResult(t, ch).must(t)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the condition was seen %s after it was set", d)
	}
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 condition met\n")

	// One list, then watches: no polling.
	lists, watches := 0, 0
	for _, line := range strings.Split(r.stderr, "\n") {
		if !strings.Contains(line, "/gizmos") || !strings.Contains(line, "GET") {
			continue
		}
		if strings.Contains(line, "watch=true") {
			watches++
		} else {
			lists++
		}
	}
	if lists != 1 || watches < 1 {
		t.Errorf("requests for gizmos: %d lists, %d watches; want 1 list and a watch\n%s", lists, watches, r.stderr)
	}

	// Already met: returns at once.
	r = kdyn(t, env, "-n", ns, "wait", "--for=condition=ready=true", "gizmos."+gvr.Group, "g1", "--timeout=5s").must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 condition met\n")
}

func TestWaitForSeveralConditions(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", nil)

	ch := ocStart(t, env, "-n", ns, "wait", typ+"/g1", "--timeout=30s",
		"--for=condition=Ready",
		`--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=AllGood`,
		"--for=jsonpath={.status.phase}=Running")
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status",
		"-p", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"AllGood"}]}}`).must(t)
	ocStillRunning(t, ch, 1500*time.Millisecond) // phase is still missing
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "-p", `{"status":{"phase":"Running"}}`).must(t)
	r := ocResult(t, ch).must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 condition met\n")

	// A JSONPath without a value: the field exists, whatever its value.
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "-p", `{"status":{"ready":false}}`).must(t)
	r = kdyn(t, env, "-n", ns, "wait", typ+"/g1", "--for=jsonpath={.status.ready}", "--timeout=5s").must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 condition met\n")

	// -o prints the object that met the conditions.
	r = kdyn(t, env, "-n", ns, "wait", typ+"/g1", "--for=jsonpath={.status.phase}=Running", "-o", "jsonpath={.status.phase}").must(t)
	ocStdout(t, r, "Running")
}

func TestWaitForDeleteAndCreate(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, nil)
	ocConfigMap(t, c, ns, "y", map[string]string{"batch": "1"}, nil)
	ocConfigMap(t, c, ns, "z", map[string]string{"batch": "1"}, nil)

	// --for=delete on a named object.
	ch := ocStart(t, env, "-n", ns, "wait", "--for=delete", "cm/x", "--timeout=30s")
	ocWatching(t, ch)
	if err := c.Resource(ocConfigMapGVR).Namespace(ns).Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := ocResult(t, ch).must(t)
	ocStdout(t, r, "configmap/x condition met\n")

	// --for=delete with a selector: every object that matched at the start.
	ch = ocStart(t, env, "-n", ns, "wait", "--for=delete", "cm", "-l", "batch=1", "--timeout=30s")
	ocWatching(t, ch)
	for _, n := range []string{"y", "z"} {
		ocStillRunning(t, ch, 300*time.Millisecond)
		if err := c.Resource(ocConfigMapGVR).Namespace(ns).Delete(t.Context(), n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r = ocResult(t, ch).must(t)
	ocStdout(t, r, "configmap/y condition met\nconfigmap/z condition met\n")

	// Nothing left to wait for.
	kdyn(t, env, "-n", ns, "wait", "--for=delete", "cm", "-l", "batch=1", "--timeout=5s").must(t)

	// --for=create, then a condition on the same object.
	ch = ocStart(t, env, "-n", ns, "wait", "--for=create", "--for=jsonpath={.data.k}=v", "cm/later", "--timeout=30s")
	ocWatching(t, ch)
	ocConfigMap(t, c, ns, "later", nil, map[string]string{"k": "other"})
	ocStillRunning(t, ch, 500*time.Millisecond)
	if _, err := c.Resource(ocConfigMapGVR).Namespace(ns).Patch(t.Context(), "later", "application/merge-patch+json", []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = ocResult(t, ch).must(t)
	ocStdout(t, r, "configmap/later condition met\n")

	// --for=create with a selector: the first object to appear.
	ch = ocStart(t, env, "-n", ns, "wait", "--for=create", "cm", "-l", "wave=2", "--timeout=30s")
	ocWatching(t, ch)
	ocConfigMap(t, c, ns, "w2", map[string]string{"wave": "2"}, nil)
	r = ocResult(t, ch).must(t)
	ocStdout(t, r, "configmap/w2 condition met\n")
}

func TestWaitTimeouts(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", nil)
	ocGizmo(t, c, gvr, ns, "g2", nil)

	start := time.Now()
	r := kdyn(t, env, "-n", ns, "wait", "--for=condition=Ready", typ+"/g1", "--timeout=1s").
		ocExpect(t, 1, "error: timed out waiting for the condition on gizmos/g1")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("a 1s wait took %s", d)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q", r.stdout)
	}
	kdyn(t, env, "-n", ns, "wait", "--for=condition=Ready", typ, "g1", "g2", "--timeout=1s", "--exit-codes").
		ocExpect(t, 7, "error: timed out waiting for the condition on gizmos/g1\nerror: timed out waiting for the condition on gizmos/g2\n")

	// --timeout=0 checks once.
	kdyn(t, env, "-n", ns, "wait", "--for=jsonpath={.status.phase}=Running", typ+"/g1", "--timeout=0").
		ocExpect(t, 1, "error: condition not met for gizmos/g1")
	kdyn(t, env, "-n", ns, "wait", "--for=delete", typ+"/g1", "--timeout=0", "--exit-codes").
		ocExpect(t, 7, "error: condition not met for gizmos/g1")
	r = kdyn(t, env, "-n", ns, "wait", "--for=create", typ+"/g1", "--timeout=0").must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 condition met\n")

	// Errors.
	kdyn(t, env, "-n", ns, "wait", "--for=condition=Ready", typ+"/missing", "--exit-codes").
		ocExpect(t, 3, "Error from server (NotFound): gizmos."+gvr.Group+` "missing" not found`)
	kdyn(t, env, "-n", ns, "wait", "--for=condition=Ready", typ, "-l", "none=here").
		ocExpect(t, 1, "error: no matching resources found")
	kdyn(t, env, "-n", ns, "wait", typ+"/g1").ocExpect(t, 1, "--for is required")
	kdyn(t, env, "-n", ns, "wait", "--for=readiness", typ+"/g1", "--exit-codes").ocExpect(t, 2, `unrecognized condition: "readiness"`)
	kdyn(t, env, "-n", ns, "wait", "--for=delete", "--for=create", typ+"/g1").ocExpect(t, 1, "--for=delete cannot be combined")
	kdyn(t, env, "-n", ns, "wait", "--for=create", typ).ocExpect(t, 1, "no name, label selector, or --all flag specified")

	// The object is deleted while a condition is awaited: kubectl's NotFound.
	ch := ocStart(t, env, "-n", ns, "wait", "--for=condition=Ready", typ+"/g2", "--timeout=30s")
	ocWatching(t, ch)
	if err := c.Resource(gvr).Namespace(ns).Delete(t.Context(), "g2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ocResult(t, ch).ocExpect(t, 1, `"g2" not found`)
}

func TestWaitAcrossNamespaces(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns1, ns2 := ocNamespace(t, c), ocNamespace(t, c)
	label := "run-" + ocSuffix()
	for _, ns := range []string{ns1, ns2} {
		ocConfigMap(t, c, ns, "cfg", map[string]string{"run": label}, nil)
	}
	ch := ocStart(t, env, "wait", "cm", "-A", "-l", "run="+label, "--for=jsonpath={.data.ok}=yes", "--timeout=30s")
	ocWatching(t, ch)
	for _, ns := range []string{ns1, ns2} {
		u := ocGet(t, c, ocConfigMapGVR, ns, "cfg")
		if err := unstructured.SetNestedField(u.Object, "yes", "data", "ok"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Resource(ocConfigMapGVR).Namespace(ns).Update(t.Context(), u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := ocResult(t, ch).must(t)
	ocStdout(t, r, "configmap/cfg condition met\nconfigmap/cfg condition met\n")
}
