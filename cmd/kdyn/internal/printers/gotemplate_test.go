package printers

import (
	"strings"
	"testing"
)

func cm(name string, data map[string]any) []byte {
	b := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"prod"}`
	if data != nil {
		b += `,"data":{`
		first := true
		for k, v := range data {
			if !first {
				b += ","
			}
			first = false
			b += `"` + k + `":"` + v.(string) + `"`
		}
		b += "}"
	}
	return []byte(b + "}")
}

// -o go-template as kubectl prints it: the object alone, or the List of
// every object; kubectl's functions; a missing key "<no value>" unless
// missing keys are errors, and then the template and the data printed to
// help debug it.
func TestGoTemplatePrinter(t *testing.T) {
	for _, tc := range []struct {
		name, tmpl string
		strict     bool
		objs       [][]byte
		want       string
		wantErr    string
	}{
		{"one object", "{{.metadata.name}}:{{.data.color}}", false, [][]byte{cm("a", map[string]any{"color": "blue"})}, "a:blue", ""},
		{"a list", "{{range .items}}{{.metadata.name}};{{end}}", false, [][]byte{cm("a", nil), cm("b", nil)}, "a;b;", ""},
		{"an empty list", "{{len .items}} {{.kind}}", false, [][]byte{}, "0 List", ""},
		{"a missing key", "{{.missing}}", false, [][]byte{cm("a", nil)}, "<no value>", ""},
		{"exists", `{{if exists . "data" "color"}}y{{else}}n{{end}}{{if exists . "data" "size"}}y{{else}}n{{end}}`, false, [][]byte{cm("a", map[string]any{"color": "blue"})}, "yn", ""},
		{"base64decode", `{{base64decode .data.v}}`, false, [][]byte{cm("a", map[string]any{"v": "aGVsbG8="})}, "hello", ""},
		{"a missing key, strict", "{{.missing}}", true, [][]byte{cm("a", nil)}, "Error executing template", `error executing template "{{.missing}}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			p, err := NewGoTemplatePrinter(&out, tc.tmpl, !tc.strict)
			if err != nil {
				t.Fatal(err)
			}
			single := len(tc.objs) == 1 && !strings.Contains(tc.tmpl, ".items")
			if err := p.Begin(single); err != nil {
				t.Fatal(err)
			}
			for _, o := range tc.objs {
				if err = p.Print(ItemFromRaw(o)); err != nil {
					break
				}
			}
			if err == nil {
				err = p.Finish()
			}
			if tc.wantErr == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Fatalf("printed %q, want %q", out.String(), tc.want)
			}
		})
	}
	if _, err := NewGoTemplatePrinter(&strings.Builder{}, "{{.a", true); err == nil || !strings.Contains(err.Error(), "error parsing template {{.a") {
		t.Fatalf("a bad template: %v", err)
	}
}

// exists walks maps, slices and strings, and a nil at the end is not there.
func TestExists(t *testing.T) {
	v := map[string]any{"a": []any{map[string]any{"b": nil, "c": "x"}}, "s": "str"}
	for _, tc := range []struct {
		path []any
		want bool
	}{
		{[]any{"a"}, true},
		{[]any{"a", 0, "c"}, true},
		{[]any{"a", 0, "b"}, false},
		{[]any{"a", 1}, false},
		{[]any{"a", "x"}, false},
		{[]any{"s", 2}, true},
		{[]any{"nope"}, false},
		{[]any{"s", "x"}, false},
	} {
		if got := exists(v, tc.path...); got != tc.want {
			t.Errorf("exists(%v) = %v", tc.path, got)
		}
	}
}
