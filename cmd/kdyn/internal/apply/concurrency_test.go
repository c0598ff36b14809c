package apply_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// applyServer answers every apply patch with the object it was sent, after
// a short wait, and records the requests in the order they arrived.
type applyServer struct {
	conc clitest.Concurrency
	mu   sync.Mutex
	reqs []string // "PATCH path?query"
}

func (s *applyServer) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	if r.Method != http.MethodPatch {
		http.Error(w, "unexpected", http.StatusInternalServerError)
		return
	}
	s.conc.Hold(20 * time.Millisecond)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (s *applyServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// manifestOf writes deployments first, then ConfigMaps, then
// ServiceAccounts, and returns the file and the summary lines in file
// order.
func manifestOf(t *testing.T, deploys, cms, sas int) (string, []string) {
	var b strings.Builder
	var lines []string
	doc := func(apiVersion, kind, name, line string) {
		fmt.Fprintf(&b, "---\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, kind, name)
		lines = append(lines, line+" serverside-applied")
	}
	for i := range deploys {
		doc("apps/v1", "Deployment", fmt.Sprintf("d%d", i), fmt.Sprintf("deployment.apps/d%d", i))
	}
	for i := range cms {
		doc("v1", "ConfigMap", fmt.Sprintf("c%d", i), fmt.Sprintf("configmap/c%d", i))
	}
	for i := range sas {
		doc("v1", "ServiceAccount", fmt.Sprintf("s%d", i), fmt.Sprintf("serviceaccount/s%d", i))
	}
	p := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, lines
}

// apply sends up to --concurrency objects at once, the foundation kinds
// (ConfigMaps, ServiceAccounts) before the others, and prints the results
// in file order; --concurrency=1 sends them one by one in file order.
func TestApplyConcurrency(t *testing.T) {
	file, lines := manifestOf(t, 5, 12, 3)
	for _, n := range []int{4, 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := &applyServer{}
			srv := clitest.APIServer(t, s.handle)
			r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "-n", "ns",
				"apply", "--server-side", "-f", file, fmt.Sprintf("--concurrency=%d", n))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if diff := cmp.Diff(strings.Join(lines, "\n")+"\n", r.Stdout); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if p := s.conc.Peak(); p > n || (n > 1 && p < 2) {
				t.Errorf("peak of %d requests in flight with --concurrency=%d", p, n)
			}
			reqs := s.requests()
			if len(reqs) != 20 {
				t.Fatalf("%d requests: %v", len(reqs), reqs)
			}
			firstDeploy := len(reqs)
			for i, q := range reqs {
				if strings.Contains(q, "/deployments/") {
					firstDeploy = min(firstDeploy, i)
				} else if n > 1 && i > firstDeploy {
					t.Errorf("request %d (%s) came after a Deployment's: foundation kinds go first", i, q)
				}
				if !strings.Contains(q, "fieldValidation=Strict") {
					t.Errorf("request %s: no fieldValidation=Strict", q)
				}
			}
			if n == 1 && !strings.Contains(reqs[0], "/deployments/d0") {
				t.Errorf("--concurrency=1: first request %s, want deployment d0 (file order)", reqs[0])
			}
		})
	}
}

// --validate sends kubectl's fieldValidation values on every write.
func TestValidateFlag(t *testing.T) {
	file, _ := manifestOf(t, 0, 1, 0)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "fieldValidation=Strict"},
		{[]string{"--validate"}, "fieldValidation=Strict"},
		{[]string{"--validate=true"}, "fieldValidation=Strict"},
		{[]string{"--validate=warn"}, "fieldValidation=Warn"},
		{[]string{"--validate=ignore"}, "fieldValidation=Ignore"},
		{[]string{"--validate=false"}, "fieldValidation=Ignore"},
		{[]string{"--validate=0"}, "fieldValidation=Ignore"},
	} {
		s := &applyServer{}
		srv := clitest.APIServer(t, s.handle)
		args := append([]string{"--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "-n", "ns", "apply", "--server-side", "-f", file}, tc.args...)
		if r := clitest.Run(root.Main, args...); r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, r.Code, r.Stderr)
		}
		if reqs := s.requests(); len(reqs) != 1 || !strings.Contains(reqs[0], tc.want) {
			t.Errorf("%v: requests %v, want one with %s", tc.args, reqs, tc.want)
		}
	}
	for _, cmd := range [][]string{
		{"apply", "-f", file}, {"create", "-f", file}, {"replace", "-f", file},
		{"patch", "cm", "x", "-p", "{}"}, {"edit", "cm", "x"},
	} {
		r := clitest.Run(root.Main, append(append([]string{"--kubeconfig", "/nonexistent"}, cmd...), "--validate=maybe")...)
		want := `error: invalid - validate option "maybe"; must be one of: strict (or true), warn, ignore (or false)`
		if r.Code == 0 || !strings.Contains(r.Stderr, want) {
			t.Errorf("%v --validate=maybe: exit %d, stderr %q", cmd, r.Code, r.Stderr)
		}
	}
}
