package clientgodynamic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The files of client-go's dynamic package that are ported and run.
var upstreamFiles = []string{"client_test.go", "golden_test.go"}

// The tests that fail with kdyn's default watch encoding and pass with
// Config.CompressWatches: client-go's golden watch request pins
// "Accept-Encoding: gzip".
var wantDefaultFailures = []string{"TestGoldenRequest", "TestGoldenRequest/watch"}

// TestClientGoDynamic runs client-go's dynamic client tests, ported by Port,
// against kdyn twice: with the client-go-compatible watch encoding every
// test must pass; with kdyn's default encoding exactly the golden watch
// request must fail, which pins that default and shows it is the only
// difference. Every test and subtest that ran is logged (run with -v to see
// the list when it passes); a test function of the upstream files that did
// not run fails the test, as does a skipped one.
func TestClientGoDynamic(t *testing.T) {
	modRoot := goOutput(t, "", "env", "GOMOD")
	modRoot = filepath.Dir(strings.TrimSpace(modRoot))
	upstream := clientGoModule(t, modRoot)
	t.Logf("client-go %s from %s", upstream.Version, upstream.Dir)
	src := filepath.Join(upstream.Dir, "dynamic")

	// The ported packages live inside the bench module, under a directory
	// the go command's ./... patterns ignore (a leading "_"), and are
	// removed afterwards.
	work, err := os.MkdirTemp(".", "_clientgo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })

	variants := []struct {
		dir  string
		opts Options
	}{
		{"compat", Options{CompressWatches: true}},
		{"default", Options{}},
	}
	var declared []string // top-level Test functions of the upstream files
	for _, v := range variants {
		dst := filepath.Join(work, v.dir)
		if err := copyTree(filepath.Join(src, "testdata"), filepath.Join(dst, "testdata")); err != nil {
			t.Fatal(err)
		}
		for _, name := range upstreamFiles {
			in, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			out, rep, err := Port(name, in, v.opts)
			if err != nil {
				t.Fatal(err)
			}
			if v.opts.CompressWatches {
				t.Logf("%s (%s): %s; dot import of kdyn's dynamic: %v; CompressWatches added to %d rest.Config literals",
					name, v.dir, strings.Join(rep.Imports, ", "), rep.DotImport, rep.ConfigLiterals)
				if rep.ConfigLiterals == 0 {
					t.Errorf("%s: no rest.Config literal found to set CompressWatches on; the upstream file changed", name)
				}
				declared = append(declared, testFuncs(t, name, in)...)
			}
			if err := os.WriteFile(filepath.Join(dst, name), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	absWork, err := filepath.Abs(work)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(modRoot, absWork)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"test", "-count=1", "-json", "-timeout=5m"}
	for _, v := range variants {
		args = append(args, "./"+filepath.ToSlash(filepath.Join(rel, v.dir)))
	}
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = modRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, runErr := cmd.Output()
	results, output := parseTestJSON(stdout)

	var exitErr *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exitErr) {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), runErr, stderr.Bytes())
	}
	for _, v := range variants {
		pkg := results[v.dir]
		if len(pkg) == 0 {
			t.Errorf("%s: no test ran; go test said:\n%s%s", v.dir, output[v.dir][""], stderr.Bytes())
			continue
		}
		names := slices.Sorted(maps.Keys(pkg))
		var failed, skipped []string
		t.Logf("%s (%s): %d tests and subtests ran", v.dir, describe(v.opts), len(names))
		for _, n := range names {
			if v.opts.CompressWatches {
				t.Logf("  %-4s %s", pkg[n], n) // the list, once
			}
			switch pkg[n] {
			case "fail":
				failed = append(failed, n)
			case "skip":
				skipped = append(skipped, n)
			}
		}
		for _, d := range declared {
			if _, ok := pkg[d]; !ok {
				t.Errorf("%s: %s is declared upstream but did not run", v.dir, d)
			}
		}
		if len(skipped) > 0 {
			t.Errorf("%s: skipped: %s", v.dir, strings.Join(skipped, ", "))
		}
		want := []string(nil)
		if !v.opts.CompressWatches {
			want = wantDefaultFailures
		}
		if !slices.Equal(failed, want) {
			t.Errorf("%s: failed %q, want %q; output of the failures:\n%s", v.dir, failed, want, failureOutput(output[v.dir], failed))
		} else if len(want) > 0 {
			t.Logf("  failed, as expected: %s", strings.Join(failed, ", "))
		}
	}
}

func describe(o Options) string {
	if o.CompressWatches {
		return "rest.Config.CompressWatches: true"
	}
	return "kdyn's default watch encoding"
}

// module is the part of `go mod download -json` this test uses.
type module struct {
	Version string
	Dir     string
	Error   string
}

// clientGoModule returns client-go at the version the bench module
// requires, downloading it through the module proxy if the cache lacks it.
func clientGoModule(t *testing.T, modRoot string) module {
	t.Helper()
	out := goOutput(t, modRoot, "mod", "download", "-json", "k8s.io/client-go")
	var m module
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("go mod download -json k8s.io/client-go: %v\n%s", err, out)
	}
	if m.Error != "" || m.Dir == "" {
		t.Fatalf("go mod download k8s.io/client-go: %q (dir %q)", m.Error, m.Dir)
	}
	return m
}

func goOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// testFuncs returns the names of the top-level test functions in src.
func testFuncs(t *testing.T, name string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
			out = append(out, fd.Name.Name)
		}
	}
	return out
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string
	// ImportPath names the package of a build-output event.
	ImportPath string
}

// parseTestJSON returns, by variant directory (the last element of the
// package path), each test's final action (pass, fail, skip) and output.
func parseTestJSON(b []byte) (results map[string]map[string]string, output map[string]map[string]string) {
	results = map[string]map[string]string{}
	output = map[string]map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e testEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		pkg := e.Package
		if e.Action == "build-output" {
			pkg = e.ImportPath
			if i := strings.IndexByte(pkg, ' '); i >= 0 {
				pkg = pkg[:i] // "path [path.test]"
			}
			e.Action = "output"
		}
		v := pkg[strings.LastIndex(pkg, "/")+1:]
		if output[v] == nil {
			results[v], output[v] = map[string]string{}, map[string]string{}
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if e.Test != "" {
				results[v][e.Test] = e.Action
			}
		case "output":
			output[v][e.Test] += e.Output
		}
	}
	return results, output
}

func failureOutput(out map[string]string, failed []string) string {
	var b strings.Builder
	for _, n := range failed {
		fmt.Fprintf(&b, "--- %s\n%s", n, out[n])
	}
	return b.String()
}

// copyTree copies the regular files below src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
