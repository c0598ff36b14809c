package cli

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestGoTemplateMatchesKubectl: -o go-template (inline, from --template,
// from a file, and as -o template), over one object and over a list, with
// kubectl's functions, a missing key (allowed and refused), and a bad
// template: kdyn prints what kubectl prints, with its exit code.
func TestGoTemplateMatchesKubectl(t *testing.T) {
	env := testenv.Shared(t)
	c := vbClient(t, env)
	ns := vbNamespace(t, c)
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	vbCreate(t, c, cms, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"tier": "web"}}, "data": map[string]any{"color": "blue", "n": "3"}})
	vbCreate(t, c, cms, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "b"}, "binaryData": map[string]any{"logo": "aGVsbG8="}})
	file := filepath.Join(t.TempDir(), "names.tmpl")
	if err := os.WriteFile(file, []byte("{{range .items}}{{.metadata.name}} {{end}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := newPair(t, env, testenv.Admin)
	for _, c := range []same{
		{args: []string{"get", "cm", "a", "-n", ns, "-o", "go-template={{.metadata.name}}:{{.data.color}}"}},
		{args: []string{"get", "cm", "a", "b", "-n", ns, "-o", "go-template={{range .items}}{{.metadata.name}};{{end}}"}},
		{args: []string{"get", "cm", "-l", "tier=web", "-n", ns, "-o", "go-template", "--template", "{{len .items}} {{.kind}}"}},
		{args: []string{"get", "cm", "-l", "tier=nothing", "-n", ns, "-o", "go-template={{len .items}}"}, stderr: true},
		{args: []string{"get", "cm", "a", "-n", ns, "-o", "template={{.missing}}"}},
		{args: []string{"get", "cm", "b", "-n", ns, "-o", "go-template={{base64decode .binaryData.logo}}"}},
		{args: []string{"get", "cm", "a", "b", "-n", ns, "-o", `go-template={{range .items}}{{if exists . "data" "color"}}{{.metadata.name}} {{end}}{{end}}`}},
		{args: []string{"get", "cm", "a", "b", "-n", ns, "-o", "go-template-file=" + file}},
		{args: []string{"get", "cm", "a", "-n", ns, "-o", "go-template={{.missing}}", "--allow-missing-template-keys=false"}},
		{args: []string{"get", "cm", "a", "-n", ns, "-o", "go-template={{.metadata.name"}},
		{args: []string{"get", "cm", "a", "-n", ns, "-o", "go-template"}},
		{args: []string{"get", "cm", "a", "-n", ns, "--template", "{{.metadata.name}}"}},
		{args: []string{"get", "cm", "-n", ns, "-o", "json", "-l", "tier=nothing"}, stderr: true},
		{args: []string{"get", "cm", "-n", ns, "-o", "name", "-l", "tier=nothing"}, stderr: true},
	} {
		p.check(t, c)
	}
}
