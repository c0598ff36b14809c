package tree_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// TestTreeParallelBound: tree lists the metadata of every listable type
// looking for dependents, at most --parallel at a time, and prints the
// tree once all have answered.
func TestTreeParallelBound(t *testing.T) {
	var lists clitest.Concurrency
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/apps/v1/namespaces/default/deployments/web" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","uid":"u-web"}}`))
			return
		}
		if r.Method == http.MethodGet && r.URL.Query().Get("limit") != "" {
			lists.Hold(5 * time.Millisecond)
		}
		clitest.EmptyLists(w, r)
	})
	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "tree", "deploy", "web", "--parallel=3")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Deployment/web") || lists.Total() < 10 {
		t.Fatalf("tree: exit %d after %d lists; stdout %q, stderr %q", r.Code, lists.Total(), r.Stdout, r.Stderr)
	}
	if p := lists.Peak(); p > 3 || p < 2 {
		t.Errorf("peak lists in flight = %d, want between 2 and the bound 3", p)
	}
}
