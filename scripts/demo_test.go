//go:build unix

// Package scripts_test runs the repository's shell scripts with fake
// commands, for the paths a real run cannot produce on demand.
package scripts_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeCluster stands in for integration/cluster. FAKE_MODE picks how it
// behaves after "-dir DIR"; every start records its pid.
const fakeCluster = `#!/usr/bin/env bash
if [[ "$1" == -build-only ]]; then echo /fake/controlplane; exit 0; fi
echo $$ >>"$FAKE_STATE/cluster.pids"
dir=$2
case "$FAKE_MODE" in
silent)  echo "cluster: starting…" >&2 ;;
exit)    echo "cluster: etcd: address already in use" >&2; exit 3 ;;
empty)   echo "export KUBECONFIG=" ;;
outside) echo "export KUBECONFIG=$HOME/.kube/config" ;;
missing) echo "export KUBECONFIG=$dir/kubeconfig" ;;
ok)      mkdir -p "$dir" && echo "apiVersion: v1" >"$dir/kubeconfig" && echo "export KUBECONFIG=$dir/kubeconfig" ;;
esac
exec sleep 600
`

// fakeKdyn records how it was called: its arguments and the variables that
// could point it at a cluster.
const fakeKdyn = `#!/usr/bin/env bash
{
	printf 'KUBECONFIG=%s\tKUBERNETES_SERVICE_HOST=%s\targs=' "${KUBECONFIG-<unset>}" "${KUBERNETES_SERVICE_HOST-<unset>}"
	printf '[%s]' "$@"
	echo
} >>"$FAKE_STATE/kdyn.log"
`

// The demo must never run kdyn unless its own control plane gave it a
// kubeconfig in the demo's own directory: whatever goes wrong while the
// control plane starts, it exits non-zero with a message, runs no kdyn (a
// fake on KDYN and on PATH records every call) and stops the control plane,
// in an environment whose HOME, KUBECONFIG and in-cluster variables all
// point elsewhere.
func TestDemoTouchesNoOtherCluster(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	demo, err := filepath.Abs("demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode string
		want string // in stderr; "" for success
	}{
		{"silent", "printed no KUBECONFIG line within 1s"},
		{"exit", "exited (status 3) before it printed its KUBECONFIG line"},
		{"empty", "printed an empty KUBECONFIG line"},
		{"outside", "is not in the demo's directory"},
		{"missing", "is missing or empty"},
		{"ok", ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			state, bin, home, tmp := filepath.Join(root, "state"), filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "tmp")
			sentinel := filepath.Join(home, ".kube", "config")
			for _, d := range []string{state, bin, filepath.Dir(sentinel), tmp} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeExec(t, filepath.Join(bin, "cluster"), fakeCluster)
			for _, name := range []string{"kdyn", "kubectl"} {
				writeExec(t, filepath.Join(bin, name), fakeKdyn)
			}
			if err := os.WriteFile(sentinel, []byte("# the user's real cluster: the demo must not read this\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killRecorded(t, state) })

			cmd := exec.CommandContext(t.Context(), bash, demo)
			cmd.Env = []string{
				"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
				"HOME=" + home,
				"TMPDIR=" + tmp,
				"KUBECONFIG=" + sentinel,
				"KUBERNETES_SERVICE_HOST=10.0.0.1",
				"KUBERNETES_SERVICE_PORT=443",
				"KDYN=" + filepath.Join(bin, "kdyn"),
				"KDYN_DEMO_CLUSTER=" + filepath.Join(bin, "cluster"),
				"KDYN_DEMO_START_TIMEOUT=1",
				"FAKE_STATE=" + state,
				"FAKE_MODE=" + tc.mode,
			}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			t.Logf("demo.sh (%s) after %s: %v\nstdout:\n%s\nstderr:\n%s", tc.mode, time.Since(start).Round(time.Millisecond), err, stdout.String(), stderr.String())

			calls := readLines(t, filepath.Join(state, "kdyn.log"))
			if tc.want != "" {
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 1 {
					t.Errorf("demo.sh: %v, want exit status 1", err)
				}
				for _, w := range []string{tc.want, "stopped before running kdyn; no cluster was touched"} {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("stderr does not say %q", w)
					}
				}
				if len(calls) > 0 {
					t.Errorf("kdyn ran %d times, want none:\n%s", len(calls), strings.Join(calls, "\n"))
				}
			} else {
				if err != nil {
					t.Fatalf("demo.sh: %v", err)
				}
				if len(calls) < 10 {
					t.Errorf("kdyn ran %d times, want the whole tour", len(calls))
				}
				// Every call names the demo's kubeconfig, under the demo's
				// temporary directory, both as --kubeconfig and as KUBECONFIG.
				for _, c := range calls {
					env, args, _ := strings.Cut(c, "\targs=")
					kc, ok := flagValue(args, "--kubeconfig")
					if !ok || !strings.HasPrefix(kc, tmp+string(filepath.Separator)) || !strings.HasSuffix(kc, "/cluster-data/kubeconfig") {
						t.Errorf("kdyn called without --kubeconfig of the demo's own file: %s", c)
						continue
					}
					if want := "KUBECONFIG=" + kc + "\tKUBERNETES_SERVICE_HOST=<unset>"; env != want {
						t.Errorf("kdyn environment %q, want %q", env, want)
					}
				}
			}
			// The control plane was started once and is stopped.
			pids := readLines(t, filepath.Join(state, "cluster.pids"))
			if len(pids) != 1 {
				t.Errorf("the control plane was started %d times, want once", len(pids))
			}
			for _, p := range pids {
				if alive(t, p) {
					t.Errorf("the control plane (pid %s) still runs after the demo ended", p)
				}
			}
		})
	}
}

func writeExec(t *testing.T, path, script string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// flagValue finds "[name][value]" in the fake kdyn's recorded arguments.
func flagValue(args, name string) (string, bool) {
	_, rest, ok := strings.Cut(args, "["+name+"][")
	if !ok {
		return "", false
	}
	v, _, ok := strings.Cut(rest, "]")
	return v, ok
}

func alive(t *testing.T, pid string) bool {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatalf("pid %q: %v", pid, err)
	}
	return syscall.Kill(n, 0) == nil
}

// killRecorded stops a fake control plane that a failing demo left behind.
func killRecorded(t *testing.T, state string) {
	for _, p := range readLines(t, filepath.Join(state, "cluster.pids")) {
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
}
