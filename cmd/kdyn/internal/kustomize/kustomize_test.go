package kustomize_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// The overlay's build: generators with hash suffixes (and a merge into the
// base's ConfigMap), a name prefix that spares the CRD, a strategic-merge
// and a JSON 6902 patch, an image tag, labels into selectors. The golden
// file is also what bench/kustomize checks against kubectl kustomize.
func TestKustomizeOverlay(t *testing.T) {
	r := clitest.Run(root.Main, "kustomize", filepath.Join("testdata", "app", "overlays", "prod"))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	clitest.AssertGolden(t, "app-prod.yaml", r.Stdout)
	for _, want := range []string{"name: prod-app-config-", "name: kwidgets.kustomize.kdyn.test\n", "image: nginx:1.27", "size: 5"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestKustomizeBase(t *testing.T) {
	r := clitest.Run(root.Main, "kustomize", filepath.Join("testdata", "app", "base"))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	clitest.AssertGolden(t, "app-base.yaml", r.Stdout)
}

func TestKustomizeOutputFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.yaml")
	r := clitest.Run(root.Main, "kustomize", filepath.Join("testdata", "app", "base"), "-o", out)
	if r.Code != 0 || r.Stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", r.Code, r.Stdout, r.Stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	clitest.AssertGolden(t, "app-base.yaml", string(got))
}

func TestKustomizeErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"kustomize", dir}, cli.ExitGeneric, "unable to find one of 'kustomization.yaml'"},
		{[]string{"kustomize", "a", "b"}, cli.ExitUsage, "accepts at most 1 arg"},
		{[]string{"kustomize", dir, "--load-restrictor", "sometimes"}, cli.ExitUsage, "illegal flag value --load-restrictor sometimes"},
		{[]string{"kustomize", dir, "-o", dir}, cli.ExitUsage, "is a directory"},
	} {
		r := clitest.Run(root.Main, append([]string{"--exit-codes"}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, r.Code, r.Stderr, tc.code, tc.want)
		}
	}
}

// -k goes with neither -f nor -R, as in kubectl; both are refused before
// any request.
func TestKustomizeFlagConflicts(t *testing.T) {
	base := filepath.Join("testdata", "app", "base")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-k", base, "-f", "x.yaml"}, "only one of -f or -k can be specified"},
		{[]string{"diff", "-k", base, "-R"}, "the -k flag can't be used with -f or -R"},
		{[]string{"delete", "-k", base, "configmap", "x"}, "give either -f/-k or resource arguments, not both"},
	} {
		r := clitest.Run(root.Main, append([]string{"--exit-codes", "--kubeconfig", filepath.Join(t.TempDir(), "none")}, tc.args...)...)
		if !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}
}
