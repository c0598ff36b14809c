package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "vi", want: []string{"vi"}},
		{in: "  code   --wait ", want: []string{"code", "--wait"}},
		{in: "emacs -nw", want: []string{"emacs", "-nw"}},
		{in: `"/Applications/My Editor/bin/ed" --wait`, want: []string{"/Applications/My Editor/bin/ed", "--wait"}},
		{in: `sh -c 'sed -i s/a/b/ "$1"' edit`, want: []string{"sh", "-c", `sed -i s/a/b/ "$1"`, "edit"}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: `"x\"y" 'it''s'`, want: []string{`x"y`, "its"}},
		{in: `"a\nb"`, want: []string{`a\nb`}},
		{in: `""`, want: []string{""}},
		{in: "tab\there", want: []string{"tab", "here"}},
		{in: `'open`, err: "unterminated single quote"},
		{in: `"open`, err: "unterminated double quote"},
		{in: `x\`, err: "trailing backslash"},
		{in: "   ", err: "no command"},
	} {
		got, err := splitCommandLine(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("splitCommandLine(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("splitCommandLine(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("splitCommandLine(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestEditorCommand(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"vi"}},
		{map[string]string{"EDITOR": "nano"}, []string{"nano"}},
		{map[string]string{"EDITOR": "nano", "KUBE_EDITOR": "code --wait"}, []string{"code", "--wait"}},
		{map[string]string{"EDITOR": "nano", "KUBE_EDITOR": "  "}, []string{"nano"}},
	} {
		got, err := editorCommand(func(k string) string { return tc.env[k] })
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("editorCommand(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if _, err := editorCommand(func(k string) string { return map[string]string{"KUBE_EDITOR": "'x"}[k] }); err == nil || !strings.Contains(err.Error(), "$KUBE_EDITOR") {
		t.Errorf("bad KUBE_EDITOR: err = %v", err)
	}
}

func TestStripEditHeader(t *testing.T) {
	body := "apiVersion: v1\n# a comment the user wrote\nkind: ConfigMap\n"
	for _, in := range []string{
		body,
		editHeader + body,
		editHeader + string(editNotes([]string{"error one", "multi\nline"})) + body,
		"\n  # indented\n\n" + body,
	} {
		if got := string(stripEditHeader([]byte(in))); got != body {
			t.Errorf("stripEditHeader(%q) = %q", in, got)
		}
	}
	if got := stripEditHeader([]byte(editHeader)); len(got) != 0 {
		t.Errorf("header only: %q", got)
	}
	if got := string(editNotes([]string{"a\nb"})); got != "# a\n# b\n#\n" {
		t.Errorf("editNotes = %q", got)
	}
}

func TestEditBodyRoundTrip(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns", "resourceVersion": "7", "generation": int64(3)},
		"data":     map[string]any{"a": "1"},
	}}
	for _, format := range []string{"yaml", "json"} {
		b, err := encodeEditBody(obj, format)
		if err != nil {
			t.Fatal(err)
		}
		// The header must not break JSON parsing once stripped.
		got, err := decodeEditBody(stripEditHeader(append([]byte(editHeader), b...)))
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b)
		}
		if diff := cmp.Diff(obj.Object, got.Object); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", format, diff)
		}
	}
	for in, want := range map[string]string{
		"a: [b":               "yaml",
		"- a\n- b\n":          "one object",
		"metadata: {}\n":      "apiVersion and kind",
		"kind: ConfigMap\n":   "apiVersion and kind",
		`{"apiVersion": "v1"`: "",
	} {
		if _, err := decodeEditBody([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeEditBody(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestCheckEditIdentity(t *testing.T) {
	mk := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	orig := mk("v1", "ConfigMap", "ns", "x")
	if err := checkEditIdentity(orig, mk("v1", "ConfigMap", "ns", "x")); err != nil {
		t.Error(err)
	}
	noNS := mk("v1", "ConfigMap", "", "x")
	if err := checkEditIdentity(orig, noNS); err != nil || noNS.GetNamespace() != "ns" {
		t.Errorf("a dropped namespace is not restored: %v, %q", err, noNS.GetNamespace())
	}
	for _, bad := range []*unstructured.Unstructured{mk("v2", "ConfigMap", "ns", "x"), mk("v1", "Secret", "ns", "x"), mk("v1", "ConfigMap", "ns", "y")} {
		if err := checkEditIdentity(orig, bad); err == nil || err.Error() != "At least one of apiVersion, kind and name was changed" {
			t.Errorf("checkEditIdentity(%v) = %v", bad.Object, err)
		}
	}
	if err := checkEditIdentity(orig, mk("v1", "ConfigMap", "other", "x")); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("namespace change: %v", err)
	}
}
