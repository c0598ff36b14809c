// Package depcheck_test enforces kdyn's dependency rule: the library
// packages import neither k8s.io/client-go nor any k8s.io/api package other
// than the aggregated-discovery protocol types.
package depcheck_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var libraryPackages = []string{"rest", "kubeconfig", "discovery", "restmapper", "unstructured", "dynamic", "informer", "events"}

func TestLibraryPackagesAvoidClientGoAndTypedAPIs(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	var pkgs []string
	for _, p := range libraryPackages {
		if matches, _ := filepath.Glob(filepath.Join(root, p, "*.go")); len(matches) > 0 {
			pkgs = append(pkgs, "./"+p+"/...")
		}
	}
	if len(pkgs) < 6 {
		t.Fatalf("only %d library packages found under %s", len(pkgs), root)
	}
	cmd := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
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
	if !strings.Contains(string(out), "k8s.io/api/apidiscovery/v2") {
		t.Fatal("expected discovery to use k8s.io/api/apidiscovery/v2; is the check looking at the right packages?")
	}
}
