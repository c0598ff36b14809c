// Package examples_test runs the programs under examples/ as subprocesses
// against a real kube-apiserver v1.37.2 (see testenv), as the admin user,
// and checks what they do to the cluster and print.
package examples_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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

// waitTimeout bounds every wait on the server or a program.
const waitTimeout = 60 * time.Second

// binDir holds the example binaries, built once for the package.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		flag.Parse()
		if !testing.Short() {
			dir, err := os.MkdirTemp("", "kdyn-examples-test-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			_, file, _, _ := runtime.Caller(0)
			args := []string{"build", "-o", dir + string(filepath.Separator)}
			if raceEnabled {
				args = append(args, "-race")
			}
			cmd := exec.Command("go", append(args, "./examples/...")...)
			cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build examples: %v\n%s", err, out)
				return 1
			}
			binDir = dir
		}
		return testenv.Main(m, testenv.Options{})
	}())
}

var (
	cmGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// proc is a running example program.
type proc struct {
	name string
	cmd  *exec.Cmd

	mu     sync.Mutex
	lines  []string // stdout, line by line
	stderr bytes.Buffer
	more   chan struct{} // closed and replaced when a line arrives
	eof    bool
	done   chan struct{} // closed when the process has exited
	err    error
}

// start runs binDir/name with args. The process gets SIGTERM when the test
// ends (SIGKILL 10 s later if it is still there) and must then exit 0.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, more: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(binDir, name), args...)
	p.cmd.Stderr = &lockedWriter{mu: &p.mu, w: &p.stderr}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		p.mu.Lock()
		p.eof = true
		close(p.more)
		p.mu.Unlock()
		// Wait after the pipe is drained, as os/exec requires.
		err := p.cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop ends the process with SIGTERM and checks that it exited cleanly.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not exit within 10 s of SIGTERM; killed", p.name)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		t.Errorf("%s exited with %v", p.name, p.err)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("%s stdout:\n%s\n%s stderr:\n%s", p.name, strings.Join(p.lines, "\n"), p.name, p.stderr.String())
	}
}

// waitLine waits for a stdout line for which match is true and returns it.
func (p *proc) waitLine(t *testing.T, what string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(waitTimeout)
	seen := 0
	for {
		p.mu.Lock()
		lines, more, eof := p.lines, p.more, p.eof
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if match(lines[seen]) {
				return lines[seen]
			}
		}
		if eof {
			t.Fatalf("%s exited before printing %s", p.name, what)
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("%s did not print %s within %v", p.name, what, waitTimeout)
		}
	}
}

// output returns the stdout lines so far.
func (p *proc) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func adminClient(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one test (left behind).
func newNamespace(t *testing.T, c dynamic.Interface, prefix string) string {
	t.Helper()
	return testenv.NewNamespace(t, c, prefix)
}

// eventually polls cond every 100 ms until it returns true, failing the
// test after waitTimeout with the last reason cond gave.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after %v: %s", what, waitTimeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitEstablished waits until the CRD named name is Established.
func waitEstablished(t *testing.T, c dynamic.Interface, name string) {
	t.Helper()
	eventually(t, "CRD "+name+" established", func() (bool, string) {
		crd, err := c.Resource(crdGVR).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("conditions %v", conds)
	})
}

// createSoon creates obj, retrying while its resource is not served yet (a
// CRD that just became Established can take a moment to be routed).
func createSoon(t *testing.T, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	var out *unstructured.Unstructured
	eventually(t, "create "+obj.GetKind()+" "+obj.GetName(), func() (bool, string) {
		var err error
		out, err = ri.Create(t.Context(), obj, metav1.CreateOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				return false, err.Error()
			}
			t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		return true, ""
	})
	return out
}

// ctxTimeout is a context bounded by waitTimeout, for work in cleanups
// (t.Context is already done then).
func ctxTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitTimeout)
}
