package cli

import (
	"bytes"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

// TestJSONPathAsJSON: -o jsonpath-as-json prints the template's results as
// a JSON array, as kubectl does, not as -o jsonpath's text.
func TestJSONPathAsJSON(t *testing.T) {
	for _, tc := range []struct {
		output string
		want   string
	}{
		{"jsonpath={.data}", `{"k":"v"}`},
		{"jsonpath-as-json={.data}", "[\n    {\n        \"k\": \"v\"\n    }\n]\n"},
		{"jsonpath-as-json={.metadata.name}", "[\n    \"x\"\n]\n"},
	} {
		out, err := ParseOutput(tc.output)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		p, err := out.ObjectPrinter(&buf, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Begin(true); err != nil {
			t.Fatal(err)
		}
		if err := p.Print(printers.ItemFromRaw([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"v"}}`))); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("-o %s printed %q, want %q", tc.output, buf.String(), tc.want)
		}
	}
}

// TestOutputOverDefault: --template without -o is a go template even where
// -o has a default (config view's and kuberc view's yaml), as in kubectl.
func TestOutputOverDefault(t *testing.T) {
	for _, c := range []struct {
		o, template string
		oSet        bool
		want        string
	}{
		{"yaml", "", false, "yaml"},
		{"yaml", "{{.kind}}", false, "go-template={{.kind}}"},
		{"json", "{{.kind}}", true, "json"},
		{"jsonpath", "{.kind}", true, "jsonpath={.kind}"},
		{"", "", true, "yaml"},
	} {
		if got := OutputOverDefault(c.o, c.template, c.oSet, "yaml"); got != c.want {
			t.Errorf("OutputOverDefault(%q, %q, %v) = %q, want %q", c.o, c.template, c.oSet, got, c.want)
		}
	}
}
