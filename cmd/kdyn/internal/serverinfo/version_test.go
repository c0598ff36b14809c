package serverinfo_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/serverinfo"
)

// TestKustomizeVersionMatchesGoMod: the kustomize release kdyn reports is
// the one built from the kustomize library go.mod requires.
func TestKustomizeVersionMatchesGoMod(t *testing.T) {
	goMod, err := os.ReadFile("../../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// kustomize v5.8.1 is built from sigs.k8s.io/kustomize/api v0.21.1.
	if serverinfo.KustomizeVersion != "v5.8.1" || !strings.Contains(string(goMod), "sigs.k8s.io/kustomize/api v0.21.1\n") {
		t.Fatalf("KustomizeVersion %s does not match go.mod's kustomize library; update it with the library", serverinfo.KustomizeVersion)
	}
}

// TestVersionClientOutputs: kubectl's lines and fields, in its order.
func TestVersionClientOutputs(t *testing.T) {
	text := clitest.Run(root.Main, "version", "--client")
	lines := strings.Split(strings.TrimSpace(text.Stdout), "\n")
	if text.Code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "Client Version: ") || lines[1] != "Kustomize Version: "+serverinfo.KustomizeVersion {
		t.Fatalf("version --client: exit %d, stdout %q, stderr %q", text.Code, text.Stdout, text.Stderr)
	}
	js := clitest.Run(root.Main, "version", "--client", "-o", "json")
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js.Stdout), &doc); err != nil || js.Code != 0 {
		t.Fatalf("version -o json: exit %d, %v: %q", js.Code, err, js.Stdout)
	}
	if _, ok := doc["serverVersion"]; ok || string(doc["kustomizeVersion"]) != `"`+serverinfo.KustomizeVersion+`"` || doc["clientVersion"] == nil {
		t.Errorf("version --client -o json: %s", js.Stdout)
	}
	yml := clitest.Run(root.Main, "version", "--client", "-o", "yaml")
	if yml.Code != 0 || !strings.Contains(yml.Stdout, "\nkustomizeVersion: "+serverinfo.KustomizeVersion+"\n") {
		t.Errorf("version --client -o yaml: %q", yml.Stdout)
	}
}
