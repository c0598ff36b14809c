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
