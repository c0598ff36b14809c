package shard_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var clusterRoleGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// binaries are the programs the tests run, built once into binDir.
var binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// build builds the main package pkg (a path in the module) once for the
// test binary and returns the program's path.
func build(t *testing.T, pkg string) string {
	t.Helper()
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if p, ok := binaries.built[pkg]; ok {
		return p
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "kdyn-shard-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.built = dir, map[string]string{}
	}
	_, file, _, _ := runtime.Caller(0)
	out := filepath.Join(binaries.dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	binaries.built[pkg] = out
	return out
}

// gcProc is a running examples/gc.
type gcProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    []string
	logs   *lockedBuffer
	exited chan struct{} // closed when the process has exited
}

func startGC(t *testing.T, env *testenv.Env, args ...string) *gcProc {
	t.Helper()
	p := &gcProc{logs: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(build(t, "./examples/gc"), append([]string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--delete", "--resync", "2s",
		"--lease-duration", "3s", "--renew-deadline", "2s", "--retry-period", "300ms"}, args...)...)
	p.cmd.Stderr = p.logs
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			p.mu.Unlock()
		}
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *gcProc) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("gc did not stop within 20 s of SIGTERM")
	}
	if t.Failed() {
		t.Logf("gc stdout:\n%s\ngc stderr:\n%s", strings.Join(p.lines(), "\n"), p.logs.String())
	}
}

func (p *gcProc) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.out...)
}

// gcData is one copy of the test's objects: in each of six namespaces,
// dependents of an owner that is deleted, of one that lives, and of a
// cluster-scoped owner that lives or is deleted (it may be in another
// replica's share).
type gcData struct {
	namespaces []string
	orphans    []string // namespace/name
}

func makeGCData(t *testing.T, c *dynamic.DynamicClient, prefix string) gcData {
	t.Helper()
	var d gcData
	crs := c.Resource(clusterRoleGVR)
	mkCR := func(name string) *unstructured.Unstructured {
		cr, err := crs.Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": name}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = crs.Delete(t.Context(), name, metav1.DeleteOptions{}) })
		return cr
	}
	liveCR, goneCR := mkCR(prefix+"-live"), mkCR(prefix+"-gone")
	ref := func(o *unstructured.Unstructured) []any {
		return []any{map[string]any{"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "name": o.GetName(), "uid": string(o.GetUID())}}
	}
	for i := range 6 {
		ns := newNamespace(t, c, fmt.Sprintf("%s-%d", prefix, i))
		d.namespaces = append(d.namespaces, ns)
		cms := c.Resource(cmGVR).Namespace(ns)
		mk := func(name string, owners []any) *unstructured.Unstructured {
			md := map[string]any{"name": name}
			if owners != nil {
				md["ownerReferences"] = owners
			}
			o, err := cms.Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		doomed, alive := mk("doomed", nil), mk("alive", nil)
		for j := range 3 {
			mk(fmt.Sprintf("orphan-%d", j), ref(doomed))
			d.orphans = append(d.orphans, fmt.Sprintf("%s/orphan-%d", ns, j))
		}
		mk("kept", ref(alive))
		mk("kept-cluster", ref(liveCR))
		mk("orphan-cluster", ref(goneCR))
		d.orphans = append(d.orphans, ns+"/orphan-cluster")
		if err := cms.Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := crs.Delete(t.Context(), goneCR.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(d.orphans)
	return d
}

// waitCollected waits until every orphan of d is gone, then two resyncs
// more, and returns the deletions the processes printed for d's
// namespaces (relative: index/name) with how often.
func waitCollected(t *testing.T, c *dynamic.DynamicClient, d gcData, ps []*gcProc) map[string]int {
	t.Helper()
	eventually(t, 2*time.Minute, "every orphan deleted", func() (bool, string) {
		for _, key := range d.orphans {
			ns, name, _ := strings.Cut(key, "/")
			if _, err := c.Resource(cmGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, key + " still exists"
			}
		}
		return true, ""
	})
	time.Sleep(5 * time.Second)
	idx := map[string]int{}
	for i, ns := range d.namespaces {
		idx[ns] = i
	}
	got := map[string]int{}
	for _, p := range ps {
		for _, line := range p.lines() {
			rest, ok := strings.CutPrefix(line, "deleted ConfigMap/")
			if !ok {
				continue
			}
			ns, rest, _ := strings.Cut(rest, "/")
			name, _, _ := strings.Cut(rest, " ")
			if i, ok := idx[ns]; ok {
				got[fmt.Sprintf("%d/%s", i, name)]++
			}
		}
	}
	for _, ns := range d.namespaces {
		for _, name := range []string{"alive", "kept", "kept-cluster"} {
			if _, err := c.Resource(cmGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s/%s: %v", ns, name, err)
			}
		}
	}
	return got
}

// TestShardedGCDeletesAsOneReplica runs examples/gc alone, then three
// replicas of it sharded by namespace on a ring, each over a copy of the
// same objects: they make the same deletions, each exactly once.
func TestShardedGCDeletesAsOneReplica(t *testing.T) {
	env := testenv.Shared(t)
	c := client(t, env)
	single := makeGCData(t, c, "gc1")
	p := startGC(t, env)
	alone := waitCollected(t, c, single, []*gcProc{p})
	p.stop(t)

	sharded := makeGCData(t, c, "gc3")
	leaseNS := newNamespace(t, c, "gc-ring")
	var ps []*gcProc
	for _, id := range []string{"r1", "r2", "r3"} {
		ps = append(ps, startGC(t, env, "--shard-ring", "gc", "--lease-namespace", leaseNS, "--identity", id))
	}
	three := waitCollected(t, c, sharded, ps)
	if fmt.Sprint(alone) != fmt.Sprint(three) {
		t.Fatalf("deletions alone %v, sharded %v", alone, three)
	}
	for k, n := range three {
		if n != 1 {
			t.Errorf("%s deleted %d times", k, n)
		}
	}
	if len(three) != len(sharded.orphans) {
		t.Errorf("%d deletions, want the %d orphans", len(three), len(sharded.orphans))
	}
	// How the ring spread the namespaces over the replicas.
	for i, p := range ps {
		n := 0
		for _, l := range p.lines() {
			if strings.HasPrefix(l, "deleted ") {
				n++
			}
		}
		t.Logf("replica r%d deleted %d", i+1, n)
	}
}
