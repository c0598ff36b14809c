package apply_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// Client-side apply of an object that exists needs the kind's OpenAPI v3
// schema for its strategic merge patch: a server that publishes none gets
// a JSON merge patch and a warning saying so; a server that fails to send
// it fails the object (a JSON merge patch would replace lists whole), and
// nothing is patched.
func TestApplyWithoutSchema(t *testing.T) {
	for _, tc := range []struct {
		name      string
		openapi   int
		wantPatch string // the patch's content type, "" for none
		wantErr   string
	}{
		{"no document", http.StatusNotFound, "application/merge-patch+json", "publishes no OpenAPI v3 document for v1"},
		{"server error", http.StatusInternalServerError, "", "error when applying configmap/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var patches []string
			srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, "/openapi/v3"):
					http.Error(w, "no", tc.openapi)
				case r.Method == http.MethodPost:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusConflict)
					_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409,"message":"configmaps \"a\" already exists"}`))
				case r.Method == http.MethodGet:
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"5","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"1\"}}"}},"data":{"k":"1"}}`))
				case r.Method == http.MethodPatch:
					mu.Lock()
					patches = append(patches, r.Header.Get("Content-Type"))
					mu.Unlock()
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"6"},"data":{"k":"2"}}`))
				default:
					http.Error(w, "unexpected", http.StatusInternalServerError)
				}
			})
			manifest := filepath.Join(t.TempDir(), "cm.yaml")
			if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"2\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "apply", "-n", "default", "-f", manifest)
			if !strings.Contains(r.Stderr, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %q", r.Code, r.Stderr, tc.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.wantPatch == "" {
				if r.Code == 0 || len(patches) > 0 {
					t.Fatalf("exit %d, patches %v: want a failure and no patch", r.Code, patches)
				}
				return
			}
			if r.Code != 0 || len(patches) != 1 || !strings.HasPrefix(patches[0], tc.wantPatch) {
				t.Fatalf("exit %d, patches %v, stderr %q", r.Code, patches, r.Stderr)
			}
		})
	}
}
