package kustomize

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kdyn/kdyn/bench/cli"
)

func TestKustomizeSameAsKubectl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kubectl")
	}
	root, _, err := cli.Modules()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := cli.BuildBinaries(context.Background(), t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join(root, "cmd", "kdyn", "internal", "kustomize", "testdata", "app")
	for _, dir := range []string{"base", filepath.Join("overlays", "prod")} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join(fixtures, dir)
			kdyn := run(t, bin.Kdyn, "kustomize", path)
			kubectl := run(t, bin.Kubectl, "kustomize", path)
			if d := cli.CompareBytes(kdyn, kubectl); !d.Identical {
				t.Errorf("kdyn kustomize %s differs from kubectl's: %s", dir, d)
			} else {
				t.Logf("kdyn kustomize %s: %s", dir, d)
			}
			if len(kdyn) == 0 {
				t.Error("empty output")
			}
		})
	}
}

func run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, errOut.Bytes())
	}
	return out.Bytes()
}
