package root_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// TestMatchServerVersion: --match-server-version lets a command run on a
// server of the Kubernetes release kdyn is built with, and stops it before
// any other request on another one.
func TestMatchServerVersion(t *testing.T) {
	release := cli.KubernetesRelease
	goMod, err := os.ReadFile("../../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "k8s.io/apimachinery v0." + strings.TrimPrefix(release, "1.") + "."; !strings.Contains(string(goMod), want) {
		t.Fatalf("cli.KubernetesRelease is %s but go.mod has no %q", release, want)
	}
	major, minor, _ := strings.Cut(release, ".")
	for _, tc := range []struct {
		minor string
		ok    bool
	}{{minor, true}, {minor + "+", true}, {"1", false}} {
		var listed bool
		srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/version" {
				fmt.Fprintf(w, `{"major":%q,"minor":%q,"gitVersion":"v%s.%s.0"}`, major, tc.minor, major, tc.minor)
				return
			}
			listed = true
			clitest.EmptyLists(w, r)
		})
		r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "--match-server-version", "get", "configmaps", "-o", "name")
		switch {
		case tc.ok && (r.Code != 0 || !listed):
			t.Errorf("server %s.%s: exit %d, stderr %q", major, tc.minor, r.Code, r.Stderr)
		case !tc.ok && (r.Code != 1 || listed || !strings.Contains(r.Stderr, "error: server version (v"+major+"."+tc.minor+".0) differs from the Kubernetes release kdyn is built with ("+release+")")):
			t.Errorf("server %s.%s: exit %d, listed %v, stderr %q", major, tc.minor, r.Code, listed, r.Stderr)
		}
	}
}
