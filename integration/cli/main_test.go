// Package cli_test runs the built kdyn binary against a real
// kube-apiserver v1.37.2 (see testenv).
package cli_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// kdynBin is the kdyn binary built once for the package.
var kdynBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		flag.Parse()
		if !testing.Short() {
			dir, err := os.MkdirTemp("", "kdyn-cli-test-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			kdynBin = filepath.Join(dir, "kdyn")
			_, file, _, _ := runtime.Caller(0)
			root := filepath.Join(filepath.Dir(file), "..", "..")
			cmd := exec.Command("go", "build", "-o", kdynBin, "./cmd/kdyn")
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build kdyn: %v\n%s", err, out)
				return 1
			}
		}
		return testenv.Main(m, testenv.Options{})
	}())
}

// result is one kdyn run.
type result struct {
	stdout, stderr string
	code           int
}

// kdyn runs the binary as the admin user against the shared control plane,
// with its own discovery cache directory.
func kdyn(t *testing.T, env *testenv.Env, args ...string) result {
	t.Helper()
	return kdynAs(t, env, testenv.Admin, "", args...)
}

// kdynAs runs kdyn as user, with stdin.
func kdynAs(t *testing.T, env *testenv.Env, u testenv.User, stdin string, args ...string) result {
	t.Helper()
	return run(t, stdin, nil, kdynArgs(env, u, args...)...)
}

// kdynArgs prefixes args with user's kubeconfig and discovery cache
// directory.
func kdynArgs(env *testenv.Env, u testenv.User, args ...string) []string {
	cache := filepath.Join(env.Dir(), "kdyn-cache-"+u.String())
	return append([]string{"--kubeconfig", env.KubeconfigPath(u), "--cache-dir", cache}, args...)
}

// run runs kdyn with exactly these arguments.
func run(t *testing.T, stdin string, extraEnv []string, args ...string) result {
	t.Helper()
	return runLive(t, stdin, extraEnv, nil, args...)
}

// runLive is run that also writes kdyn's stderr to live (when not nil) as
// it comes, so that a test can follow a run in the background.
func runLive(t *testing.T, stdin string, extraEnv []string, live io.Writer, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), kdynBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if live != nil {
		cmd.Stderr = io.MultiWriter(&errb, live)
	}
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kdyn %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// must fails the test unless the run succeeded.
func (r result) must(t *testing.T) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("kdyn exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r
}

// startKdyn runs kdyn as the admin user in the background until the test
// ends (a command that watches); its output can be read as it comes.
func startKdyn(t *testing.T, env *testenv.Env, args ...string) (stdout, stderr *liveOutput) {
	t.Helper()
	stdout, stderr, _ = startKdynExit(t, env, args...)
	return stdout, stderr
}

// startKdynExit is startKdyn with a function that waits (up to a minute)
// for the process to end and returns its exit code.
func startKdynExit(t *testing.T, env *testenv.Env, args ...string) (stdout, stderr *liveOutput, exit func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, kdynBin, kdynArgs(env, testenv.Admin, args...)...)
	stdout, stderr = &liveOutput{}, &liveOutput{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	exit = func() int {
		t.Helper()
		select {
		case <-done:
			return cmd.ProcessState.ExitCode()
		case <-time.After(time.Minute):
			t.Fatalf("kdyn %v still runs after a minute; stdout:\n%s\nstderr:\n%s", args, stdout, stderr)
			return -1
		}
	}
	return stdout, stderr, exit
}

// liveOutput is a process's output as it comes.
type liveOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *liveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *liveOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitLine waits until the output holds a whole line (ended by a newline)
// that begins with prefix: a printer may write a line in several pieces.
func (o *liveOutput) waitLine(t *testing.T, prefix string) {
	t.Helper()
	o.waitFor(t, fmt.Sprintf("a line beginning %q", prefix), func(s string) bool {
		return slices.ContainsFunc(strings.SplitAfter(s, "\n"), func(l string) bool {
			return strings.HasPrefix(l, prefix) && strings.HasSuffix(l, "\n")
		})
	})
}

// wait waits until the output holds want.
func (o *liveOutput) wait(t *testing.T, want string) {
	t.Helper()
	o.waitFor(t, fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) })
}

// waitFor waits (up to 30 s) until the output satisfies done.
func (o *liveOutput) waitFor(t *testing.T, what string, done func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !done(o.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("kdyn did not print %s; it printed:\n%s", what, o.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
