package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// A CRD deleted after kdyn cached discovery: the next command says the type
// is gone (kubectl's wording) instead of a bare 404, and later commands do
// not trust the stale cache.
func TestDeletedCRDAfterCachedDiscovery(t *testing.T) {
	env := testenv.Shared(t)
	group := fmt.Sprintf("stale%d.kdyn.test", time.Now().UnixNano()%1_000_000)
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: doodads.%s}
spec:
  group: %s
  scope: Namespaced
  names: {plural: doodads, singular: doodad, kind: Doodad, shortNames: [ddd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group, group)
	file := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(file, []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	kdyn(t, env, "apply", "-f", file).must(t)
	// Warm the cache with the type.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := kdyn(t, env, "get", "ddd")
		if r.code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new CRD never resolved: %s", r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	kdyn(t, env, "delete", "-f", file).must(t)
	deadline = time.Now().Add(30 * time.Second)
	for {
		r := kdyn(t, env, "get", "ddd")
		if r.code != 0 && strings.Contains(r.stderr, `the server doesn't have a resource type "ddd"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the CRD was deleted: exit %d, stderr %q", r.code, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r := kdyn(t, env, "get", "ddd")
	if r.code != 1 || !strings.Contains(r.stderr, `the server doesn't have a resource type "ddd"`) || strings.Contains(r.stderr, "could not find the requested resource") {
		t.Fatalf("the next command: exit %d, stderr %q", r.code, r.stderr)
	}
}
