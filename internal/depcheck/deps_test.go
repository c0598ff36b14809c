// Package depcheck_test enforces kdyn's dependency rules with go list -deps:
// the library packages import neither k8s.io/client-go nor any k8s.io/api
// package other than the aggregated-discovery protocol types; only package
// metrics links Prometheus; and neither the library packages nor their
// private helpers under internal/ import the CLI's packages (cmd/kdyn/...),
// which sit on top of everything; nor do they link kustomize, the CLI's.
package depcheck_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var libraryPackages = []string{"rest", "kubeconfig", "discovery", "restmapper", "unstructured", "dynamic", "informer", "metrics", "controller", "shard", "leaderelection", "events", "readiness"}

// cliPrefix is the import path prefix of the CLI's packages.
const cliPrefix = "github.com/kdyn/kdyn/cmd/"

// repoRoot is the module root, two directories above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// libraryPatterns are the go list patterns of the library packages and
// their subpackages.
func libraryPatterns(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	for _, p := range libraryPackages {
		if matches, _ := filepath.Glob(filepath.Join(repoRoot(), p, "*.go")); len(matches) > 0 {
			pkgs = append(pkgs, "./"+p+"/...")
		}
	}
	if len(pkgs) < 6 {
		t.Fatalf("only %d library packages found under %s", len(pkgs), repoRoot())
	}
	return pkgs
}

// deps returns what go list -deps prints for patterns: the packages and
// everything they import, test files aside.
func deps(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, patterns...)...)
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", patterns, err)
	}
	return strings.Fields(string(out))
}

func TestLibraryPackagesAvoidClientGoAndTypedAPIs(t *testing.T) {
	all := deps(t, libraryPatterns(t)...)
	var bad []string
	for _, dep := range all {
		switch {
		case dep == "k8s.io/api/apidiscovery/v2":
		case dep == "k8s.io/client-go" || strings.HasPrefix(dep, "k8s.io/client-go/"),
			dep == "k8s.io/api" || strings.HasPrefix(dep, "k8s.io/api/"):
			bad = append(bad, dep)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("library packages depend on %v; DESIGN.md allows only k8s.io/api/apidiscovery/v2", bad)
	}
	if !slices.Contains(all, "k8s.io/api/apidiscovery/v2") {
		t.Fatal("expected discovery to use k8s.io/api/apidiscovery/v2; is the check looking at the right packages?")
	}
}

// TestLibraryPackagesAvoidTheCLI: no library package, nor a helper of the
// library under internal/, imports anything under cmd/. Go's internal rule
// already refuses imports of cmd/kdyn/internal/... from outside cmd/kdyn;
// this also catches a CLI package placed outside internal/.
func TestLibraryPackagesAvoidTheCLI(t *testing.T) {
	var bad []string
	for _, dep := range deps(t, append(libraryPatterns(t), "./internal/...")...) {
		if strings.HasPrefix(dep, cliPrefix) {
			bad = append(bad, dep)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("library packages or their internal helpers depend on the CLI's %v; the CLI sits on the library, not under it", bad)
	}
	// The prefix is the CLI's: the command's own dependencies have it.
	if !slices.Contains(deps(t, "./cmd/kdyn"), cliPrefix+"kdyn/internal/cli") {
		t.Fatalf("go list -deps ./cmd/kdyn has no %skdyn/internal/cli; is the check looking for the right prefix?", cliPrefix)
	}
}

// TestOnlyTheMetricsPackageLinksPrometheus: only package metrics, the
// Prometheus adapter, may link github.com/prometheus/...: programs that do
// not export metrics do not link it.
func TestOnlyTheMetricsPackageLinksPrometheus(t *testing.T) {
	for _, p := range libraryPackages {
		if p == "metrics" {
			continue
		}
		for _, dep := range deps(t, "./"+p+"/...") {
			if strings.HasPrefix(dep, "github.com/prometheus/") {
				t.Errorf("package %s depends on %s; only package metrics may", p, dep)
				break
			}
		}
	}
}

// TestOnlyTheCLILinksKustomize: kustomize (sigs.k8s.io/kustomize/...) is
// for the CLI's -k and kustomize command; no library package links it.
func TestOnlyTheCLILinksKustomize(t *testing.T) {
	for _, dep := range deps(t, append(libraryPatterns(t), "./internal/...")...) {
		if strings.HasPrefix(dep, "sigs.k8s.io/kustomize/") {
			t.Fatalf("a library package or internal helper depends on %s; kustomize is the CLI's", dep)
		}
	}
	if !slices.Contains(deps(t, "./cmd/kdyn"), "sigs.k8s.io/kustomize/api/krusty") {
		t.Fatal("go list -deps ./cmd/kdyn has no sigs.k8s.io/kustomize/api/krusty; is the check looking for the right prefix?")
	}
}
