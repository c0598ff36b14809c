package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

func loadExplainFixture(t *testing.T) *openAPIDocument {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "explain", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseOpenAPIDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// TestExplainGolden renders the fixture document; the format was checked
// byte for byte against kubectl v1.32 explain on every built-in type of
// the test control plane (see the integration tests).
func TestExplainGolden(t *testing.T) {
	doc := loadExplainFixture(t)
	all := recursion{on: true}
	cases := []struct {
		name      string
		path      string
		recursive recursion
	}{
		{"kind", "", recursion{}},
		{"kind-recursive", "", all},
		{"kind-depth-1", "", recursion{on: true, maxDepth: 1}},
		{"kind-depth-2", "", recursion{on: true, maxDepth: 2}},
		{"spec", "spec", recursion{}},
		{"spec-recursive", "spec", all},
		{"enum-field", "spec.color", recursion{}},
		{"array-item-field", "spec.parts.name", recursion{}},
		{"array-field", "spec.parts", recursion{}},
		{"map-field", "spec.limits", recursion{}},
		{"cycle-recursive", "spec.tree", all},
		{"through-cycle", "spec.tree.children.children.value", recursion{}},
		{"metadata-labels", "metadata.labels", recursion{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var path []string
			if tc.path != "" {
				path = strings.Split(tc.path, ".")
			}
			got, err := doc.explain(widgetGVK, path, tc.recursive)
			if err != nil {
				t.Fatal(err)
			}
			clitest.AssertGolden(t, filepath.Join("explain", tc.name+".txt"), got)
		})
	}
}

func TestExplainErrors(t *testing.T) {
	doc := loadExplainFixture(t)
	cases := []struct {
		gvk  schema.GroupVersionKind
		path string
		want string
	}{
		{widgetGVK, "spec.nope", `field "spec.nope" does not exist`},
		{widgetGVK, "spec.nope.deeper", `field "spec.nope" does not exist`},
		{widgetGVK, "spec.size.x", `field "spec.size.x" does not exist`},
		{widgetGVK, "spec.labels.x", `field "spec.labels.x" does not exist`},
		{widgetGVK, "nope", `field "nope" does not exist`},
		{schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, "", "the server's OpenAPI v3 document for example.com/v2 has no schema for kind Widget"},
	}
	for _, tc := range cases {
		var path []string
		if tc.path != "" {
			path = strings.Split(tc.path, ".")
		}
		_, err := doc.explain(tc.gvk, path, recursion{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("explain %s %q: err %v, want %q", tc.gvk, tc.path, err, tc.want)
		}
	}
}

func TestExplainOtherKind(t *testing.T) {
	got, err := loadExplainFixture(t).explain(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}, nil, recursion{on: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "GROUP:      example.com\nKIND:       Gadget\nVERSION:    v1\n\nDESCRIPTION:\n    A Gadget lives in another kind of the same document.\n    \nFIELDS:\n  apiVersion\t<string>\n  kind\t<string>\n\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestWrapText(t *testing.T) {
	cases := []struct {
		name, in string
		width    int
		want     string
	}{
		{"short", "a b c", 10, "a b c"},
		{"exact", "aaaa bbbb", 9, "aaaa bbbb"},
		{"break", "aaaa bbbb cccc", 9, "aaaa bbbb\ncccc"},
		{"many spaces kept", "a   b", 10, "a   b"},
		{"spaces at break dropped", "aaaa    bbbb", 6, "aaaa\nbbbb"},
		{"long word alone", "see https://example.com/a/very/long/url ok", 12, "see\nhttps://example.com/a/very/long/url\nok"},
		{"long word first", "https://example.com/a/very/long/url ok", 12, "https://example.com/a/very/long/url\nok"},
		{"newlines kept", "one two\nthree four five", 9, "one two\nthree\nfour five"},
		{"leading spaces kept", " - item one\n - item two", 20, " - item one\n - item two"},
		{"tab kept", "\t(note)", 20, "\t(note)"},
		{"trailing newline", "text\n", 76, "text\n"},
		{"trailing spaces that fit", "ab  ", 4, "ab  "},
		{"trailing spaces that do not fit", "ab   ", 4, "ab"},
		{"runes", "héllo wörld", 5, "héllo\nwörld"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := wrapText(tc.in, tc.width); got != tc.want {
				t.Errorf("wrapText(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
			}
		})
	}
}

func TestIndentText(t *testing.T) {
	if got, want := indentText("a\nb\n", 2), "  a\n  b\n  "; got != want {
		t.Fatalf("indentText = %q, want %q", got, want)
	}
}
