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
// uses the running control plane (USE_EXISTING_CLUSTER). It compares the
// result of every spec with testdata/crsuite-results.txt and fails on a
// spec that passed there and fails now. KDYN_CRSUITE_RESULTS names a file
// to write the results to (the format of testdata/crsuite-results.txt),
// KDYN_CRSUITE_REPORT one for the Markdown table of docs/crcache.md.
func TestControllerRuntimeCacheSuite(t *testing.T) {
	env := testenv.Shared(t)
	dir := t.TempDir()

	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/controller-runtime").Output()
	if err != nil {
		t.Fatalf("finding controller-runtime in the module cache: %v", err)
	}
	crDir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "cache")
	pkgDir, err := filepath.Abs("internal/crtests")
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string]string{}
	newCall := regexp.MustCompile(`\bcache\.New\b`)
	for _, name := range crTestFiles {
		src, err := os.ReadFile(filepath.Join(crDir, name))
		if err != nil {
			t.Fatalf("reading controller-runtime's test: %v", err)
		}
		text := strings.Replace(string(src), "package cache_test", "package crtests_test", 1)
		if newCall.MatchString(text) {
			text = newCall.ReplaceAllString(text, "crcache.New")
			text = strings.Replace(text, "\nimport (\n", "\nimport (\n\tcrcache \"github.com/kdyn/kdyn/crcache\"\n", 1)
		}
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
		t.Fatalf("controller-runtime's cache tests gave no report (%v; go test: %v):\n%s", err, runErr, tail(log, 60))
	}
	goTests, err := readGoTests(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range goTests {
		results[k] = v
	}
	passed, failed := 0, 0
	for _, r := range results {
		switch r.state {
		case "passed":
			passed++
		case "failed", "panicked", "timedout", "interrupted", "aborted":
			failed++
		}
	}
	t.Logf("controller-runtime's cache tests on crcache: %d passed, %d failed, %d in all", passed, failed, len(results))
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
		state, name, ok := strings.Cut(line, "\t")
		if !ok || state != "passed" {
			continue
		}
		got, ok := results[name]
		switch {
		case !ok:
			t.Errorf("spec %q did not run", name)
		case got.state != "passed":
			t.Errorf("spec %q passed before and is %s now: %s", name, got.state, got.failure)
		}
	}
}

// specResult is how one spec (or plain Go test) of the suite ended.
type specResult struct {
	state, failure string
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

// formatResults is one "state<TAB>name" line per spec, sorted by name.
func formatResults(results map[string]specResult) string {
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s\t%s\n", results[n].state, n)
	}
	return b.String()
}

// markdownTable counts results by top-level container and lists every
// spec that did not pass.
func markdownTable(results map[string]specResult) string {
	type counts struct{ passed, failed, other int }
	groups := map[string]*counts{}
	var notPassed []string
	for name, r := range results {
		g, _, _ := strings.Cut(name, " / ")
		if groups[g] == nil {
			groups[g] = &counts{}
		}
		switch {
		case r.state == "passed":
			groups[g].passed++
		case r.failure != "" || r.state == "failed":
			groups[g].failed++
			notPassed = append(notPassed, fmt.Sprintf("| %s | %s | %s |", name, r.state, strings.ReplaceAll(r.failure, "|", `\|`)))
		default:
			groups[g].other++
			notPassed = append(notPassed, fmt.Sprintf("| %s | %s | |", name, r.state))
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	sort.Strings(notPassed)
	var b strings.Builder
	b.WriteString("| Group | Passed | Failed | Skipped |\n|---|---:|---:|---:|\n")
	for _, g := range names {
		c := groups[g]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", g, c.passed, c.failed, c.other)
	}
	if len(notPassed) > 0 {
		b.WriteString("\n| Spec not passed | State | First line of the failure |\n|---|---|---|\n")
		b.WriteString(strings.Join(notPassed, "\n"))
		b.WriteString("\n")
	}
	return b.String()
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
