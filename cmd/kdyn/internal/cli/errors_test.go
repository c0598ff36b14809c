package cli

import (
	"bytes"
	"errors"
	"testing"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestErrorMessageKubectlWords: a mapper's NoResourceMatchError reads as
// kubectl's CheckErr words it, and an error is printed with exactly one
// newline after it, as kubectl prints.
func TestErrorMessageKubectlWords(t *testing.T) {
	for _, tc := range []struct {
		pr   schema.GroupVersionResource
		want string
	}{
		{schema.GroupVersionResource{Resource: "invalid-resource"}, `error: the server doesn't have a resource type "invalid-resource"`},
		{schema.GroupVersionResource{Group: "apps", Resource: "x"}, `error: the server doesn't have a resource type "x" in group "apps"`},
		{schema.GroupVersionResource{Version: "v2", Resource: "x"}, `error: the server doesn't have a resource type "x" in version "v2"`},
		{schema.GroupVersionResource{Group: "apps", Version: "v2", Resource: "x"}, `error: the server doesn't have a resource type "x" in group "apps" and version "v2"`},
	} {
		if got := ErrorMessage(&meta.NoResourceMatchError{PartialResource: tc.pr}); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.pr, got, tc.want)
		}
	}
	for in, want := range map[string]string{"one line": "error: one line\n", "ends in a newline\n": "error: ends in a newline\n"} {
		var b bytes.Buffer
		PrintError(&b, errors.New(in))
		if b.String() != want {
			t.Errorf("PrintError(%q) wrote %q, want %q", in, b.String(), want)
		}
	}
}

// TestOutputFlags: --template alone is -o go-template; with a template
// format without "=" it is that format's template; in either order.
func TestOutputFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-o", "yaml"}, "yaml"},
		{[]string{"--template={{.a}}"}, "go-template={{.a}}"},
		{[]string{"--template={.a}", "-o", "jsonpath"}, "jsonpath={.a}"},
		{[]string{"-o", "go-template-file", "--template=t.tmpl"}, "go-template-file=t.tmpl"},
		{[]string{"-o", "jsonpath={.b}", "--template={.a}"}, "jsonpath={.b}"},
	} {
		fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
		var out string
		AddOutputFlags(fl, &out, "output")
		if err := fl.Parse(tc.args); err != nil || out != tc.want {
			t.Errorf("%q: %q (%v), want %q", tc.args, out, err, tc.want)
		}
	}
}

// TestInvalidCausesOneALine: an invalid object's several causes are
// printed one a line, as kubectl's CheckErr prints them; one cause stays
// in the server's message.
func TestInvalidCausesOneALine(t *testing.T) {
	causes := []metav1.StatusCause{
		{Field: "spec.a", Message: `Not found: "x"`},
		{Field: "spec.b", Message: "Forbidden: no"},
		{Field: "spec.a", Message: `Not found: "x"`},
	}
	err := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "target", nil)
	err.ErrStatus.Details.Causes = causes
	err.ErrStatus.Message = "The Pod \"target\" is invalid: [spec.a: Not found: \"x\", spec.b: Forbidden: no]"
	want := "The Pod \"target\" is invalid: \n* spec.a: Not found: \"x\"\n* spec.b: Forbidden: no\n"
	if got := ErrorMessage(err); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	err.ErrStatus.Details.Causes = causes[:1]
	err.ErrStatus.Message = "The Pod \"target\" is invalid: spec.a: Not found: \"x\""
	if got := ErrorMessage(err); got != err.ErrStatus.Message {
		t.Errorf("one cause: got %q", got)
	}
}
