package kubectlsuite

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// KubernetesVersion is the release whose test/cmd suite is run.
const KubernetesVersion = "v1.37.2"

//go:embed shim.sh
var shim []byte

// copied are the parts of the k8s.io/kubernetes module the functions read
// (scripts, manifests), copied to a writable directory per run: the
// functions write next to them.
var copied = []string{
	"hack/lib/test.sh",
	"hack/testdata",
	"test/cmd",
	"test/fixtures",
	"test/e2e/testing-manifests",
	"third_party/forked/shell2junit",
}

// ModuleDir returns the k8s.io/kubernetes module's directory, downloading
// it into the module cache if needed (from dir, a module that requires
// it: integration/controlplane).
func ModuleDir(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+KubernetesVersion)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w\n%s%s", KubernetesVersion, err, out.Bytes(), errb.Bytes())
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download k8s.io/kubernetes@%s: %s", KubernetesVersion, m.Error)
	}
	return m.Dir, nil
}

var recordCommand = regexp.MustCompile(`^\s*record_command\s+(run_[A-Za-z0-9_]+)\s*$`)

// Functions returns the test functions runTests records, in its order,
// read from test/cmd/legacy-script.sh of the module at root.
func Functions(root string) ([]string, error) {
	f, err := os.Open(filepath.Join(root, "test", "cmd", "legacy-script.sh"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m := recordCommand.FindStringSubmatch(s.Text()); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no record_command lines in test/cmd/legacy-script.sh")
	}
	return out, nil
}

// PrepareRoot copies the parts of the module at src the functions need
// into dst, writable, and writes the shim beside them.
func PrepareRoot(src, dst string) error {
	for _, rel := range copied {
		from := filepath.Join(src, rel)
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			r, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			to := filepath.Join(dst, r)
			if d.IsDir() {
				return os.MkdirAll(to, 0o755)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if info, err := d.Info(); err == nil && info.Mode()&0o111 != 0 {
				mode = 0o755
			}
			return os.WriteFile(to, data, mode)
		})
		if err != nil {
			return fmt.Errorf("copy %s: %w", rel, err)
		}
	}
	return os.WriteFile(filepath.Join(dst, "kdyn-suite-shim.sh"), shim, 0o644)
}

// Target is a tool and the server it runs against.
type Target struct {
	// Tool names the tool in reports ("kdyn", "kubectl").
	Tool string
	// Binary is the tool's executable; the functions run it as kubectl.
	Binary string
	// Port is the API server's secure port on 127.0.0.1; it accepts the
	// suite's bearer token "admin-token".
	Port int
	// Root is a directory PrepareRoot filled.
	Root string
	// Work is a directory for the runs' homes and temporary files.
	Work string
	// TempFiles are written into each run's TMPDIR (the suite reads the
	// API server's certificate there as apiserver.crt).
	TempFiles map[string][]byte
}

// Result is how one function went.
type Result struct {
	Function string
	Pass     bool
	Duration time.Duration
	// Output is the function's output, stdout and stderr interleaved.
	Output []byte
}

// Tail returns the last n lines of the output.
func (r Result) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(string(r.Output), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// script runs one function as runTests would: the shim, hack/lib/test.sh
// and legacy-script.sh (which sources every test/cmd file) sourced, the
// prelude's flags set, then the function, with errexit.
const script = `set -o errexit
set -o nounset
set -o pipefail
cd "${KUBE_ROOT}"
source ./kdyn-suite-shim.sh
source hack/lib/test.sh
source test/cmd/legacy-script.sh
kdyn_suite_prelude
set -o errexit
set -o nounset
"$1"
`

// Run runs one function against t, for at most timeout, and reports it.
// Each run has its own home (a kubeconfig with the suite's context
// "test": the cluster "local", insecure, and the user "test-admin" with
// the token "admin-token"), temporary directory and kubectl.
func (t Target) Run(ctx context.Context, function string, timeout time.Duration) (Result, error) {
	dir, err := os.MkdirTemp(t.Work, t.Tool+"-"+function+"-")
	if err != nil {
		return Result{}, err
	}
	home, tmp, bin := filepath.Join(dir, "home"), filepath.Join(dir, "tmp"), filepath.Join(dir, "bin")
	for _, d := range []string{filepath.Join(home, ".kube"), tmp, bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Result{}, err
		}
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:%d
    insecure-skip-tls-verify: true
users:
- name: test-admin
  user:
    token: admin-token
contexts:
- name: test
  context:
    cluster: local
    user: test-admin
current-context: test
`, t.Port)
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(kubeconfig), 0o600); err != nil {
		return Result{}, err
	}
	for name, data := range t.TempFiles {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
			return Result{}, err
		}
	}
	if err := os.Symlink(t.Binary, filepath.Join(bin, "kubectl")); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script, "kdyn-suite", function)
	cmd.Dir = t.Root
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TMPDIR=" + tmp,
		"KUBE_TEMP=" + tmp,
		"KUBE_ROOT=" + t.Root,
		"THIS_PLATFORM_BIN=" + bin,
		"SECURE_API_PORT=" + fmt.Sprint(t.Port),
		"KUBE_JUNIT_REPORT_DIR=" + filepath.Join(dir, "junit"),
		"TERM=xterm",
		"LANG=C",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	// One writer for both: exec gives them one pipe, so the lines keep
	// their order.
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	res := Result{Function: function, Duration: time.Since(start), Output: out.Bytes()}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Pass = true
	case ctx.Err() != nil:
		res.Output = append(res.Output, fmt.Sprintf("\nkdyn-suite: killed after %s\n", timeout)...)
	case errors.As(err, &exit):
	default:
		return res, err
	}
	// Whatever the function left running (a proxy, a watch) goes too.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return res, nil
}

// word is how a report names a result.
func word(r Result, ok bool) string {
	switch {
	case !ok:
		return "—"
	case r.Pass:
		return "pass"
	}
	return "FAIL"
}

// Report is the table of results per function (kubectl's and kdyn's),
// in Markdown, with the totals.
func Report(fns []string, results map[string]map[string]Result) string {
	var b strings.Builder
	var kubectlPass, both, kdynOnly int
	b.WriteString("| function | kubectl | kdyn |\n|---|---|---|\n")
	for _, fn := range fns {
		kc, okc := results[fn]["kubectl"]
		kd, okd := results[fn]["kdyn"]
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", fn, word(kc, okc), word(kd, okd))
		switch {
		case kc.Pass && kd.Pass:
			kubectlPass++
			both++
		case kc.Pass:
			kubectlPass++
		case kd.Pass:
			kdynOnly++
		}
	}
	pct := 0.0
	if kubectlPass > 0 {
		pct = 100 * float64(both) / float64(kubectlPass)
	}
	fmt.Fprintf(&b, "\n%d functions; kubectl passes %d; kdyn passes %d of those (%.0f%%) and %d that kubectl fails.\n", len(fns), kubectlPass, both, pct, kdynOnly)
	return b.String()
}

// Results writes the results as testdata/results.txt holds them: one line
// per function, "FUNCTION KUBECTL KDYN" with pass or fail.
func Results(fns []string, results map[string]map[string]Result) string {
	var b strings.Builder
	b.WriteString("# function kubectl kdyn (written by TestKubectlSuite with KDYN_SUITE_RESULTS)\n")
	for _, fn := range fns {
		pf := func(r Result) string {
			if r.Pass {
				return "pass"
			}
			return "fail"
		}
		fmt.Fprintf(&b, "%s %s %s\n", fn, pf(results[fn]["kubectl"]), pf(results[fn]["kdyn"]))
	}
	return b.String()
}

// readResults reads a file Results wrote: function → tool → passed.
func readResults(path string) (map[string]map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: want FUNCTION KUBECTL KDYN", path, i+1)
		}
		out[f[0]] = map[string]bool{"kubectl": f[1] == "pass", "kdyn": f[2] == "pass"}
	}
	return out, nil
}

// ReasonsHeading is the heading of docs/kubectl-suite.md's section that
// says why kdyn fails each function kubectl passes.
const ReasonsHeading = "## Why kdyn fails a function kubectl passes"

// WholeReasonsHeading is the heading of the section that says why kdyn
// fails a function kubectl passes on the whole cluster
// (KDYN_SUITE_CLUSTER=whole).
const WholeReasonsHeading = "## Why kdyn fails a function kubectl passes, on the whole cluster"

// Reasons reads the bullets "- `FUNCTION`: reason" of the section of doc
// under heading (up to the next heading of its level or above).
func Reasons(doc, heading string) map[string]string {
	out := map[string]string{}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.TrimSpace(line) == heading:
			in = true
			continue
		case in && (strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ")):
			return out
		}
		if !in || !strings.HasPrefix(line, "- `") {
			continue
		}
		fn, reason, ok := strings.Cut(strings.TrimPrefix(line, "- `"), "`:")
		if ok && strings.TrimSpace(reason) != "" {
			out[fn] = strings.TrimSpace(reason)
		}
	}
	return out
}
