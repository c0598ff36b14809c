package crcache_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kdyn/kdyn/integration/testenv"
)

// crTestFiles are controller-runtime's pkg/cache test files that test
// through the package's exported API (package cache_test); the others are
// white-box tests of its own internals.
var crTestFiles = []string{"cache_suite_test.go", "cache_test.go", "informer_cache_test.go"}

// TestControllerRuntimeCacheSuite runs controller-runtime v0.25.3's own
// pkg/cache tests, read from the module cache, against crcache on the real
// control plane: every cache.New in them becomes crcache.New and envtest
// uses the running control plane (USE_EXISTING_CLUSTER). It runs them
// once for each of suiteConfigs, compares the result of every spec with
// testdata/crsuite-results.txt and fails on a spec that passed there and
// does not now. KDYN_CRSUITE_RESULTS names a file
// to write the results to (the format of testdata/crsuite-results.txt),
// KDYN_CRSUITE_REPORT one for the Markdown table of docs/crcache.md.
// KDYN_CRSUITE_DIR keeps the generated files, the report and go test's
// output in that directory; KDYN_CRSUITE_FOCUS runs only the specs that
// match it (ginkgo's -focus), for debugging.
func TestControllerRuntimeCacheSuite(t *testing.T) {
	env := testenv.Shared(t)
	var runs []map[string]specResult
	for _, c := range suiteConfigs {
		runs = append(runs, runCacheSuite(t, env, c))
	}
	results := mergeResults(runs)
	for i, c := range suiteConfigs {
		passed, failed := 0, 0
		for _, r := range runs[i] {
			switch {
			case r.state == "passed":
				passed++
			case r.failed():
				failed++
			}
		}
		t.Logf("controller-runtime's cache tests on %s: %d passed, %d failed, %d in all", c.name, passed, failed, len(runs[i]))
	}
	if p := os.Getenv("KDYN_CRSUITE_RESULTS"); p != "" {
		if err := os.WriteFile(p, []byte(formatResults(results)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if p := os.Getenv("KDYN_CRSUITE_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(markdownTable(results)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	want, err := os.ReadFile("testdata/crsuite-results.txt")
	if err != nil {
		t.Fatalf("reading the expected results: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != len(suiteConfigs)+1 {
			continue
		}
		name := fields[len(fields)-1]
		for i, c := range suiteConfigs {
			if fields[i] != "passed" {
				continue
			}
			got, ok := runs[i][name]
			switch {
			case !ok:
				t.Errorf("%s: spec %q did not run", c.name, name)
			case got.state != "passed":
				t.Errorf("%s: spec %q passed before and is %s now: %s", c.name, name, got.state, got.failure)
			}
		}
	}
}

// suiteConfig is one cache the suite runs against: expr replaces every
// cache.New of controller-runtime's tests.
type suiteConfig struct{ name, expr string }

// suiteConfigs are kdyn's defaults, and kdyn keeping managedFields (as
// controller-runtime's cache does), which shows what else differs.
var suiteConfigs = []suiteConfig{
	{"crcache.New", "crcache.New"},
	{"KeepManagedFields", "crcache.NewWith(crcache.Options{KeepManagedFields: true})"},
}

// runCacheSuite runs controller-runtime's cache tests with c's cache and
// returns the result of every spec and plain Go test.
func runCacheSuite(t *testing.T, env *testenv.Env, c suiteConfig) map[string]specResult {
	dir := t.TempDir()
	if keep := os.Getenv("KDYN_CRSUITE_DIR"); keep != "" {
		dir = filepath.Join(keep, strings.NewReplacer("(", "", ")", "", "{", "", "}", "", ":", "", " ", "").Replace(c.name))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/controller-runtime").Output()
	if err != nil {
		t.Fatalf("finding controller-runtime in the module cache: %v", err)
	}
	crDir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "cache")
	pkgDir, err := filepath.Abs("internal/crtests")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"kdyn_new_test.go": "package crtests_test\n\nimport crcache \"github.com/kdyn/kdyn/crcache\"\n\n// kdynNew replaces cache.New.\nvar kdynNew = " + c.expr + "\n",
	}
	newCall := regexp.MustCompile(`\bcache\.New\b`)
	for _, name := range crTestFiles {
		src, err := os.ReadFile(filepath.Join(crDir, name))
		if err != nil {
			t.Fatalf("reading controller-runtime's test: %v", err)
		}
		text := strings.Replace(string(src), "package cache_test", "package crtests_test", 1)
		files[name] = newCall.ReplaceAllString(text, "kdynNew")
	}
	overlay := map[string]string{}
	for name, text := range files {
		gen := filepath.Join(dir, name)
		if err := os.WriteFile(gen, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(pkgDir, "zz_"+name)] = gen
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	b, _ := json.Marshal(map[string]any{"Replace": overlay})
	if err := os.WriteFile(overlayFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	report := filepath.Join(dir, "report.json")
	cmd := exec.Command("go", "test", "-count=1", "-overlay", overlayFile, "-timeout", "20m", "./internal/crtests/",
		"-args", "-ginkgo.json-report="+report, "-test.v")
	if focus := os.Getenv("KDYN_CRSUITE_FOCUS"); focus != "" {
		cmd.Args = append(cmd.Args, "-ginkgo.focus="+focus)
	}
	cmd.Env = append(os.Environ(), "USE_EXISTING_CLUSTER=true", "KUBECONFIG="+env.KubeconfigPath(testenv.Admin))
	logPath := filepath.Join(dir, "go-test.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	runErr := cmd.Run()
	logFile.Close()

	results, err := readSpecResults(report)
	if err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("controller-runtime's cache tests on %s gave no report (%v; go test: %v):\n%s", c.name, err, runErr, tail(log, 60))
	}
	goTests, err := readGoTests(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range goTests {
		results[k] = v
	}
	return results
}

// mergeResults is, by spec, the result of each run.
func mergeResults(runs []map[string]specResult) map[string][]specResult {
	out := map[string][]specResult{}
	for i, run := range runs {
		for name, r := range run {
			if out[name] == nil {
				out[name] = make([]specResult, len(runs))
				for j := range out[name] {
					out[name][j].state = "not run"
				}
			}
			out[name][i] = r
		}
	}
	return out
}

// specResult is how one spec (or plain Go test) of the suite ended.
type specResult struct {
	state, failure string
}

// failed reports a failed, panicked, timed-out or interrupted spec.
func (r specResult) failed() bool {
	switch r.state {
	case "failed", "panicked", "timedout", "interrupted", "aborted":
		return true
	}
	return false
}

// readSpecResults reads a ginkgo JSON report into results by spec name
// (container texts and the leaf text joined by " / ").
func readSpecResults(path string) (map[string]specResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	out := map[string]specResult{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			name := strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " / ")
			res := specResult{state: s.State.String()}
			if s.State.Is(types.SpecStateFailureStates) {
				res.failure = firstLine(s.Failure.Message)
			}
			out[name] = res
		}
	}
	return out, nil
}

// readGoTests reads the results of the plain Go tests (not ginkgo's
// TestSource) from go test -v output.
func readGoTests(path string) (map[string]specResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]specResult{}
	re := regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (Test\S+)`)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil || m[2] == "TestSource" {
			continue
		}
		state := map[string]string{"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}[m[1]]
		out[m[2]] = specResult{state: state}
	}
	return out, sc.Err()
}

// formatResults is one line per spec, sorted by name: the state in each
// configuration, then the name, separated by tabs.
func formatResults(results map[string][]specResult) string {
	var b strings.Builder
	for _, n := range sortedNames(results) {
		for _, r := range results[n] {
			b.WriteString(r.state + "\t")
		}
		b.WriteString(n + "\n")
	}
	return b.String()
}

// markdownTable counts the results of each configuration by top-level
// container and lists every spec that did not pass in one of them.
func markdownTable(results map[string][]specResult) string {
	type counts struct{ passed, failed, other []int }
	groups := map[string]*counts{}
	var b strings.Builder
	var notPassed strings.Builder
	for _, name := range sortedNames(results) {
		g, _, _ := strings.Cut(name, " / ")
		if groups[g] == nil {
			n := len(suiteConfigs)
			groups[g] = &counts{make([]int, n), make([]int, n), make([]int, n)}
		}
		all := true
		for i, r := range results[name] {
			switch {
			case r.state == "passed":
				groups[g].passed[i]++
			case r.failed():
				groups[g].failed[i]++
				all = false
			default:
				groups[g].other[i]++
				all = false
			}
		}
		if !all {
			fmt.Fprintf(&notPassed, "| %s |", name)
			for _, r := range results[name] {
				text := r.state
				if r.failure != "" {
					text += ": " + r.failure
				}
				fmt.Fprintf(&notPassed, " %s |", strings.ReplaceAll(text, "|", `\|`))
			}
			notPassed.WriteString("\n")
		}
	}
	b.WriteString("| Group |")
	for _, c := range suiteConfigs {
		fmt.Fprintf(&b, " %s: passed / failed / skipped |", c.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(suiteConfigs)) + "\n")
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		fmt.Fprintf(&b, "| %s |", g)
		for i := range suiteConfigs {
			fmt.Fprintf(&b, " %d / %d / %d |", groups[g].passed[i], groups[g].failed[i], groups[g].other[i])
		}
		b.WriteString("\n")
	}
	if notPassed.Len() > 0 {
		b.WriteString("\n| Spec not passed everywhere |")
		for _, c := range suiteConfigs {
			fmt.Fprintf(&b, " %s |", c.name)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(suiteConfigs)) + "\n")
		b.WriteString(notPassed.String())
	}
	return b.String()
}

func sortedNames(results map[string][]specResult) []string {
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
