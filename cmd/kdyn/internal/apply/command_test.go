package apply_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// apply -l that matches no document fails as kubectl's does (no objects
// passed to apply), before any request for objects is sent.
func TestApplySelectorMatchingNothing(t *testing.T) {
	var writes atomic.Int32
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1)
		http.Error(w, "unexpected", http.StatusInternalServerError)
	})
	dir := t.TempDir()
	manifest := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: web\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "apply", "-f", manifest, "-l", "app=db")
	if r.Code != cli.ExitGeneric || !strings.Contains(r.Stderr, "no objects passed to apply") || !strings.Contains(r.Stderr, "app=db") {
		t.Fatalf("exit %d, stderr %q; want 1 and 'no objects passed to apply' naming the selector", r.Code, r.Stderr)
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d requests for objects were sent", n)
	}
}
