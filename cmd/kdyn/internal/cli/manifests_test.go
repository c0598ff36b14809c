package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cmDoc(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
}

// describeEntries renders entries as "where kind/name" or "where ERR msg".
func describeEntries(entries []*ManifestEntry) []string {
	var out []string
	for _, e := range entries {
		if e.err != nil {
			out = append(out, e.where()+" ERR "+e.err.Error())
			continue
		}
		out = append(out, e.where()+" "+TargetName(e.obj))
	}
	return out
}

func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.yaml"), cmDoc("b1")+"---\n"+cmDoc("b2"))
	writeFile(t, filepath.Join(dir, "a.json"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a manifest")
	writeFile(t, filepath.Join(dir, "sub", "c.yml"), cmDoc("c"))
	writeFile(t, filepath.Join(dir, "bad.yaml"), cmDoc("ok1")+"---\ndata: [oops\n---\n"+cmDoc("ok3"))
	single := filepath.Join(dir, "sub", "c.yml")

	tests := []struct {
		name      string
		paths     []string
		recursive bool
		stdin     string
		want      []string
	}{
		{
			name:  "directory, lexical order, only manifest extensions, not recursive",
			paths: []string{dir},
			want: []string{
				filepath.Join(dir, "a.json") + ": document 1 configmap/a",
				filepath.Join(dir, "b.yaml") + ": document 1 configmap/b1",
				filepath.Join(dir, "b.yaml") + ": document 2 configmap/b2",
				filepath.Join(dir, "bad.yaml") + ": document 1 configmap/ok1",
				filepath.Join(dir, "bad.yaml") + ": document 2 ERR " + filepath.Join(dir, "bad.yaml") + ": document 2 (line 6): error converting YAML to JSON: yaml: line 6: did not find expected ',' or ']'",
				filepath.Join(dir, "bad.yaml") + ": document 3 configmap/ok3",
			},
		},
		{
			name:      "recursive",
			paths:     []string{filepath.Join(dir, "sub"), filepath.Join(dir, "a.json")},
			recursive: true,
			want: []string{
				single + ": document 1 configmap/c",
				filepath.Join(dir, "a.json") + ": document 1 configmap/a",
			},
		},
		{
			name:  "a file with any extension, stdin, a missing path",
			paths: []string{filepath.Join(dir, "notes.txt"), "-", filepath.Join(dir, "missing.yaml"), "-"},
			stdin: cmDoc("from-stdin"),
			want: []string{
				filepath.Join(dir, "notes.txt") + ": document 1 ERR " + filepath.Join(dir, "notes.txt") + ": document 1 (line 1): expected an object, found string",
				"STDIN: document 1 configmap/from-stdin",
				filepath.Join(dir, "missing.yaml") + ` ERR the path "` + filepath.Join(dir, "missing.yaml") + `" does not exist`,
				"STDIN ERR standard input can only be read once",
			},
		},
		{
			name:  "URL",
			paths: []string{"https://example.com/x.yaml"},
			want:  []string{"https://example.com/x.yaml ERR reading manifests from a URL is not supported; download the file first"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := describeEntries(readManifests(tc.paths, tc.recursive, strings.NewReader(tc.stdin)))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
		})
	}
}

func TestManifestsRecursiveSubdirectories(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "z.yaml"), cmDoc("top"))
	writeFile(t, filepath.Join(dir, "a", "b", "deep.yaml"), cmDoc("deep"))
	flat := describeEntries(readManifests([]string{dir}, false, nil))
	deep := describeEntries(readManifests([]string{dir}, true, nil))
	if len(flat) != 1 || !strings.HasSuffix(flat[0], "configmap/top") {
		t.Errorf("without -R: %q", flat)
	}
	if len(deep) != 2 || !strings.HasSuffix(deep[0], "configmap/deep") {
		t.Errorf("with -R: %q", deep)
	}
}

func TestListItemsAreNamed(t *testing.T) {
	list := `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}},` +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}]}`
	got := describeEntries(readManifestStream(strings.NewReader(list), "list.json"))
	want := []string{"list.json: document 1: item 1 configmap/x", "list.json: document 1: item 2 configmap/y"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestApplyAndDeleteOrder(t *testing.T) {
	entries := []*ManifestEntry{
		{obj: clitest.Obj("example.com/v1", "Widget", "w")},
		{err: errors.New("bad document")},
		{obj: clitest.Obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")},
		{obj: clitest.Obj("v1", "ConfigMap", "c")},
		{obj: clitest.Obj("v1", "Namespace", "ns")},
		{obj: clitest.Obj("example.com/v1", "Namespace", "not-core")},
	}
	names := func(es []*ManifestEntry) []string {
		var out []string
		for _, e := range es {
			if e.obj == nil {
				out = append(out, "ERR")
				continue
			}
			out = append(out, TargetName(e.obj))
		}
		return out
	}
	wantApply := []string{
		"customresourcedefinition.apiextensions.k8s.io/widgets.example.com", "namespace/ns",
		"widget.example.com/w", "ERR", "configmap/c", "namespace.example.com/not-core",
	}
	if d := cmp.Diff(wantApply, names(ApplyOrder(entries))); d != "" {
		t.Errorf("applyOrder (-want +got):\n%s", d)
	}
	wantDelete := []string{
		"widget.example.com/w", "ERR", "configmap/c", "namespace.example.com/not-core",
		"customresourcedefinition.apiextensions.k8s.io/widgets.example.com", "namespace/ns",
	}
	if d := cmp.Diff(wantDelete, names(DeleteOrder(entries))); d != "" {
		t.Errorf("deleteOrder (-want +got):\n%s", d)
	}
}

func TestFilterManifests(t *testing.T) {
	a := clitest.Obj("v1", "ConfigMap", "a")
	a.SetLabels(map[string]string{"app": "web"})
	b := clitest.Obj("v1", "ConfigMap", "b")
	entries := []*ManifestEntry{{obj: a}, {obj: b}, {err: errors.New("bad")}}
	got, err := FilterManifests(entries, "app=web")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].obj != a || got[1].err == nil {
		t.Errorf("filtered: %v", describeEntries(got))
	}
	if _, err := FilterManifests(entries, "app in (("); err == nil {
		t.Error("bad selector accepted")
	}
}

func TestCRDKind(t *testing.T) {
	crd := clitest.Obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
	if _, ok := crdKind(crd); ok {
		t.Error("a CRD without spec gave a kind")
	}
	_ = unstructured.SetNestedField(crd.Object, "example.com", "spec", "group")
	_ = unstructured.SetNestedField(crd.Object, "Widget", "spec", "names", "kind")
	gk, ok := crdKind(crd)
	if !ok || gk != (schema.GroupKind{Group: "example.com", Kind: "Widget"}) {
		t.Errorf("crdKind = %v, %v", gk, ok)
	}
}

func TestStripServerFields(t *testing.T) {
	in := clitest.Obj("v1", "ConfigMap", "x")
	in.SetResourceVersion("12")
	in.SetUID("u")
	in.SetGeneration(3)
	_ = unstructured.SetNestedSlice(in.Object, []any{map[string]any{"manager": "m"}}, "metadata", "managedFields")
	_ = unstructured.SetNestedField(in.Object, nil, "metadata", "creationTimestamp")
	out := StripServerFields(in)
	md := out.Object["metadata"].(map[string]any)
	if d := cmp.Diff(map[string]any{"name": "x"}, md); d != "" {
		t.Errorf("metadata (-want +got):\n%s", d)
	}
	if in.GetResourceVersion() != "12" {
		t.Error("the input was modified")
	}
}

func TestObjectErrorMessage(t *testing.T) {
	e := &ManifestEntry{doc: kunstructured.Document{Source: "app.yaml", Index: 3}}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "nope")
	tests := []struct {
		name   string
		entry  *ManifestEntry
		object string
		err    error
		want   string
	}{
		{"server error", e, "configmap/x", notFound,
			`Error from server (NotFound): error when applying configmap/x (app.yaml: document 3): namespaces "nope" not found`},
		{"client error", e, "widget.example.com/w", errors.New("restmapper: no matches for kind"),
			`error: app.yaml: document 3: widget.example.com/w: no matches for kind`},
		{"decode error", e, "", &kunstructured.DocumentError{Source: "app.yaml", Index: 3, Line: 9, Err: errors.New("object has no kind")},
			`error: app.yaml: document 3 (line 9): object has no kind`},
		{"unreadable file", &ManifestEntry{doc: kunstructured.Document{Source: "x.yaml"}}, "", errors.New(`the path "x.yaml" does not exist`),
			`error: the path "x.yaml" does not exist`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := objectErrorMessage("applying", tc.entry, tc.object, tc.err); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestWriteOutput(t *testing.T) {
	if _, quiet, err := WriteOutput(""); err != nil || quiet {
		t.Errorf(`writeOutput("") = %v, %v`, quiet, err)
	}
	if out, quiet, err := WriteOutput("yaml"); err != nil || !quiet || out.Kind != OutYAML {
		t.Errorf(`writeOutput("yaml") = %v, %v, %v`, out, quiet, err)
	}
	if _, _, err := WriteOutput("wide"); err == nil {
		t.Error(`writeOutput("wide") succeeded`)
	}
}
