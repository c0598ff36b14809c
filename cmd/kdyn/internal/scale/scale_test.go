package scale_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// fakeScales serves the deployment "web" (2 replicas, scale
// resourceVersion 5) and its scale subresource, recording every request
// that is not discovery.
type fakeScales struct {
	mu       sync.Mutex
	requests []string
	replicas int64
}

func (s *fakeScales) handler(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	line := r.Method + " " + r.URL.Path
	if len(body) > 0 {
		line += " " + strings.TrimSpace(string(body))
	}
	s.requests = append(s.requests, line)
	w.Header().Set("Content-Type", "application/json")
	const base = "/apis/apps/v1/namespaces/default/deployments/web"
	switch {
	case r.URL.Path == base && r.Method == http.MethodGet:
		fmt.Fprintf(w, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","resourceVersion":"5","managedFields":[{"manager":"m"}]},"spec":{"replicas":%d}}`, s.replicas)
	case r.URL.Path == base+"/scale" && r.Method == http.MethodGet:
		fmt.Fprintf(w, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default","resourceVersion":"5"},"spec":{"replicas":%d}}`, s.replicas)
	case r.URL.Path == base+"/scale" && r.Method == http.MethodPatch:
		var p struct{ Spec struct{ Replicas int64 } }
		_ = json.Unmarshal(body, &p)
		s.replicas = p.Spec.Replicas
		fmt.Fprintf(w, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default","resourceVersion":"6"},"spec":{"replicas":%d}}`, s.replicas)
	case r.URL.Path == base+"/scale" && r.Method == http.MethodPut:
		var p struct {
			Metadata struct{ ResourceVersion string }
			Spec     struct{ Replicas int64 }
		}
		_ = json.Unmarshal(body, &p)
		if p.Metadata.ResourceVersion != "5" {
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`)
			return
		}
		s.replicas = p.Spec.Replicas
		fmt.Fprintf(w, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default","resourceVersion":"6"},"spec":{"replicas":%d}}`, s.replicas)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

func TestScaleRequests(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderr   string
		requests []string
	}{
		{
			name:     "a merge patch of the scale",
			args:     []string{"scale", "deploy/web", "--replicas=3"},
			stdout:   "deployment.apps/web scaled\n",
			requests: []string{`PATCH /apis/apps/v1/namespaces/default/deployments/web/scale {"spec":{"replicas":3}}`},
		},
		{
			name:   "a precondition: read, check, write back with the resourceVersion read",
			args:   []string{"scale", "deploy", "web", "--replicas=3", "--current-replicas=2"},
			stdout: "deployment.apps/web scaled\n",
			requests: []string{
				"GET /apis/apps/v1/namespaces/default/deployments/web/scale",
				`PUT /apis/apps/v1/namespaces/default/deployments/web/scale {"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":"default","resourceVersion":"5"},"spec":{"replicas":3}}`,
			},
		},
		{
			name:     "a precondition that fails is a conflict",
			args:     []string{"--exit-codes", "scale", "deploy/web", "--replicas=3", "--current-replicas=4"},
			code:     4,
			stderr:   "error: Expected replicas to be 4, was 2\n",
			requests: []string{"GET /apis/apps/v1/namespaces/default/deployments/web/scale"},
		},
		{
			name:     "a resourceVersion precondition",
			args:     []string{"scale", "deploy/web", "--replicas=3", "--resource-version=4"},
			code:     1,
			stderr:   "error: Expected resource version to be 4, was 5\n",
			requests: []string{"GET /apis/apps/v1/namespaces/default/deployments/web/scale"},
		},
		{
			name:     "a client dry run reads the object and sends nothing",
			args:     []string{"scale", "deploy/web", "--replicas=7", "--dry-run=client", "-o", "json"},
			stdout:   "{\n    \"apiVersion\": \"apps/v1\",\n    \"kind\": \"Deployment\",\n    \"metadata\": {\n        \"name\": \"web\",\n        \"namespace\": \"default\",\n        \"resourceVersion\": \"5\"\n    },\n    \"spec\": {\n        \"replicas\": 7\n    }\n}\n",
			requests: []string{"GET /apis/apps/v1/namespaces/default/deployments/web"},
		},
		{
			name:     "a client dry run's summary",
			args:     []string{"scale", "deploy/web", "--replicas=7", "--dry-run"},
			stdout:   "deployment.apps/web scaled (dry run)\n",
			requests: []string{"GET /apis/apps/v1/namespaces/default/deployments/web"},
		},
		{
			name:   "bad counts are usage errors",
			args:   []string{"--exit-codes", "scale", "deploy/web", "--replicas=-1"},
			code:   2,
			stderr: "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0\n",
		},
		{
			name:   "--replicas is required",
			args:   []string{"scale", "deploy/web"},
			code:   1,
			stderr: "error: required flag(s) \"replicas\" not set\n",
		},
		{
			name:   "--current-replicas below -1",
			args:   []string{"scale", "deploy/web", "--replicas=1", "--current-replicas=-2"},
			code:   1,
			stderr: "error: The --current-replicas must specify an integer of -1 or greater\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeScales{replicas: 2}
			srv := clitest.APIServer(t, s.handler)
			args := append([]string{"--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir()}, tc.args...)
			r := clitest.Run(root.Main, args...)
			if r.Code != tc.code || r.Stdout != tc.stdout || r.Stderr != tc.stderr {
				t.Fatalf("exit %d (want %d)\nstdout %q\nwant   %q\nstderr %q\nwant   %q", r.Code, tc.code, r.Stdout, tc.stdout, r.Stderr, tc.stderr)
			}
			if d := cmp.Diff(tc.requests, s.requests); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
		})
	}
}

// TestScaleFromManifest: -f names the objects; the live ones are scaled.
func TestScaleFromManifest(t *testing.T) {
	s := &fakeScales{replicas: 2}
	srv := clitest.APIServer(t, s.handler)
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := clitest.WriteKubeconfig(t, srv.URL)
	r := clitest.Run(root.Main, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "scale", "-f", manifest, "--replicas=4")
	if r.Code != 0 || r.Stdout != "deployment.apps/web scaled\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	want := []string{`PATCH /apis/apps/v1/namespaces/default/deployments/web/scale {"spec":{"replicas":4}}`}
	if d := cmp.Diff(want, s.requests); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	r = clitest.Run(root.Main, "--kubeconfig", kc, "--exit-codes", "scale", "deploy", "-f", manifest, "--replicas=4")
	if r.Code != 2 || !strings.Contains(r.Stderr, "-f names the objects to scale") {
		t.Fatalf("-f with a TYPE: exit %d, stderr %q", r.Code, r.Stderr)
	}
}
