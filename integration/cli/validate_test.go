package cli_test

import (
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// vdManifest is a good ConfigMap and one with an unknown top-level field.
const vdManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: good
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
datax:
  a: b
`

// TestValidateStrictByDefault: like kubectl, kdyn sends
// fieldValidation=Strict unless told otherwise, so an unknown field is an
// error naming the field and the document, on every write command.
func TestValidateStrictByDefault(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "v.yaml", vdManifest)
	where := "(" + file + ": document 2)"

	// Server-side apply (kdyn's default) and client-side apply.
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", file).mfExpect(t, 1, "error when applying configmap/bad "+where, ".datax: field not declared in schema")
	kdyn(t, env, "apply", "--server-side", "-n", ns, "-f", file, "--server-side=false").mfExpect(t, 1, "error when applying configmap/bad "+where, `strict decoding error: unknown field "datax"`)
	if mfGet(t, env, ns, "good") == nil || mfGet(t, env, ns, "bad") != nil {
		t.Fatal("the good document was not applied, or the bad one was")
	}
	ns2 := mfNamespace(t, env)
	kdyn(t, env, "create", "-n", ns2, "-f", file).mfExpect(t, 1, "error when creating configmap/bad "+where, `strict decoding error: unknown field "datax"`)

	// replace (PUT), patch and edit of an existing object.
	mfStdin(t, env, mfConfigMap("bad", "", nil), "apply", "--server-side", "-n", ns2, "-f", "-").must(t)
	kdyn(t, env, "replace", "-n", ns2, "-f", file).mfExpect(t, 1, "error when replacing configmap/bad "+where, `unknown field "datax"`)
	kdyn(t, env, "patch", "-n", ns2, "cm", "bad", "-p", `{"datax":{"a":"b"}}`).mfExpect(t, 1, `strict decoding error: unknown field "datax"`)
	kdyn(t, env, "patch", "-n", ns2, "cm", "bad", "--type=json", "-p", `[{"op":"add","path":"/datax","value":{"a":"b"}}]`).mfExpect(t, 1, `unknown field "datax"`)
	dir := t.TempDir()
	editor := ocEditor(t, dir, `printf 'datax:\n  a: b\n' >> "$1"`)
	r := ocKdynEnv(t, env, ocEditEnv(dir, editor), "edit", "-n", ns2, "cm", "bad")
	r.mfExpect(t, 1, `unknown field "datax"`)
	if _, ok := mfGet(t, env, ns2, "bad").Object["datax"]; ok {
		t.Fatal("the unknown field was stored")
	}
}

// TestValidateWarnAndIgnore: --validate=warn stores the object without the
// field and prints the server's warning; --validate=ignore (or false)
// drops it silently. (Server-side apply refuses an unknown field whatever
// fieldValidation says; kubectl's default, client-side apply, and create
// follow it.)
func TestValidateWarnAndIgnore(t *testing.T) {
	env := testenv.Shared(t)
	file := mfWrite(t, "v.yaml", vdManifest)
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"apply", "--server-side=false", "--validate=warn"}, true},
		{[]string{"create", "--validate=warn"}, true},
		{[]string{"apply", "--server-side=false", "--validate=ignore"}, false},
		{[]string{"create", "--validate=false"}, false},
	} {
		ns := mfNamespace(t, env)
		r := kdyn(t, env, append(append(tc.args, "-n", ns, "-f"), file)...).must(t)
		hasWarning := strings.Contains(r.stderr, `Warning: unknown field "datax"`)
		if hasWarning != tc.warn {
			t.Errorf("%v: warning printed %v, want %v\nstderr:\n%s", tc.args, hasWarning, tc.warn, r.stderr)
		}
		bad := mfGet(t, env, ns, "bad")
		if bad == nil {
			t.Fatalf("%v: the object was not stored", tc.args)
		}
		if _, ok := bad.Object["datax"]; ok {
			t.Errorf("%v: the unknown field was stored", tc.args)
		}
	}
}
