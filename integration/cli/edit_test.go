package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// ocKdynEnv runs kdyn as the admin with extra environment variables.
func ocKdynEnv(t *testing.T, env *testenv.Env, extraEnv []string, args ...string) result {
	t.Helper()
	full := append([]string{"--kubeconfig", env.KubeconfigPath(testenv.Admin), "--cache-dir", filepath.Join(env.Dir(), "kdyn-cache-"+testenv.Admin.String())}, args...)
	return run(t, "", extraEnv, full...)
}

// ocEditor writes a shell script editor into dir. Each run executes the
// step for its run number (1, 2, ...) with the file to edit as $1, after
// saving a copy of the file as it was given (seen-N) and its mode (mode-N).
// A run past the last step leaves the file unchanged.
func ocEditor(t *testing.T, dir string, steps ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\nset -e\nd=%q\n", dir)
	b.WriteString("n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/count\"\n")
	b.WriteString("cp \"$1\" \"$d/seen-$n\"; stat -c %a \"$1\" > \"$d/mode-$n\"\n")
	b.WriteString("case $n in\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "%d)\n%s\n;;\n", i+1, s)
	}
	b.WriteString("esac\n")
	path := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func ocRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ocEditEnv(dir, editor string) []string {
	return []string{"KUBE_EDITOR=sh " + editor, "EDITOR=false", "TMPDIR=" + dir}
}

// ocLeftovers lists kdyn's edit files left in dir.
func ocLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "kdyn-edit-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEditSuccess(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	dir := t.TempDir()
	ed := ocEditor(t, dir, `sed -i 's/a: "1"/a: "2"/' "$1"`)

	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "cm", "x").must(t)
	ocStdout(t, r, "configmap/x edited\n")
	if got := ocGet(t, c, ocConfigMapGVR, ns, "x").Object["data"].(map[string]any)["a"]; got != "2" {
		t.Fatalf("data.a = %v after edit", got)
	}
	seen := ocRead(t, filepath.Join(dir, "seen-1"))
	if !strings.HasPrefix(seen, "# ") || !strings.Contains(seen, "\nkind: ConfigMap\n") || !strings.Contains(seen, "resourceVersion:") {
		t.Errorf("the file given to the editor:\n%s", seen)
	}
	if strings.Contains(seen, "managedFields") {
		t.Errorf("managedFields were not hidden:\n%s", seen)
	}
	if mode := strings.TrimSpace(ocRead(t, filepath.Join(dir, "mode-1"))); mode != "600" {
		t.Errorf("the file's mode is %s, want 600", mode)
	}
	if left := ocLeftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}

	// --show-managed-fields, JSON, and an editor command that needs
	// shell-like word splitting (the file is appended as $0 of sh -c).
	dir2 := t.TempDir()
	editor := `sh -c 'cp "$0" ` + dir2 + `/seen && sed -i "s/\"a\": \"2\"/\"a\": \"3\"/" "$0"'`
	r = ocKdynEnv(t, env, []string{"KUBE_EDITOR=" + editor, "TMPDIR=" + dir2}, "-n", ns, "edit", "cm/x", "-o", "json", "--show-managed-fields").must(t)
	ocStdout(t, r, "configmap/x edited\n")
	seen = ocRead(t, filepath.Join(dir2, "seen"))
	if !strings.Contains(seen, `"managedFields": [`) || !strings.Contains(seen, `"kind": "ConfigMap"`) {
		t.Errorf("the JSON file given to the editor:\n%s", seen)
	}
	if got := ocGet(t, c, ocConfigMapGVR, ns, "x").Object["data"].(map[string]any)["a"]; got != "3" {
		t.Fatalf("data.a = %v after a JSON edit", got)
	}
}

func TestEditCancelled(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	rv := ocGet(t, c, ocConfigMapGVR, ns, "x").GetResourceVersion()

	for name, step := range map[string]string{
		"unchanged":     `:`,
		"comment added": `sed -i 's/^data:/# a note\ndata:/' "$1"`,
	} {
		dir := t.TempDir()
		r := ocKdynEnv(t, env, ocEditEnv(dir, ocEditor(t, dir, step)), "-n", ns, "edit", "cm", "x").must(t)
		if r.stdout != "" || !strings.Contains(r.stderr, "Edit cancelled, no changes made.") {
			t.Errorf("%s: stdout %q, stderr %q", name, r.stdout, r.stderr)
		}
		if left := ocLeftovers(t, dir); len(left) > 0 {
			t.Errorf("%s: temporary files left behind: %v", name, left)
		}
	}
	dir := t.TempDir()
	r := ocKdynEnv(t, env, ocEditEnv(dir, ocEditor(t, dir, `: > "$1"`)), "-n", ns, "edit", "cm", "x").must(t)
	if !strings.Contains(r.stderr, "Edit cancelled, saved file was empty.") {
		t.Errorf("empty file: stderr %q", r.stderr)
	}
	if got := ocGet(t, c, ocConfigMapGVR, ns, "x").GetResourceVersion(); got != rv {
		t.Errorf("a cancelled edit changed the object (resourceVersion %s → %s)", rv, got)
	}
}

func TestEditRetriesAfterErrors(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	dir := t.TempDir()
	ed := ocEditor(t, dir,
		// 1: a syntax error.
		`sed -i 's/^data:/data: [/' "$1"`,
		// 2: fixed, but a label value the server rejects.
		`sed -i 's/^data: \[/data:/; s/^  name: x$/  name: x\n  labels:\n    bad: "-x-"/' "$1"`,
		// 3: fixed for good.
		`sed -i 's/bad: "-x-"/good: "yes"/; s/a: "1"/a: "4"/' "$1"`,
	)
	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "cm", "x").must(t)
	ocStdout(t, r, "configmap/x edited\n")
	seen2 := ocRead(t, filepath.Join(dir, "seen-2"))
	if !strings.Contains(seen2, "# The edited file had a syntax error: ") || !strings.Contains(seen2, "\ndata: [\n") {
		t.Errorf("second open: no syntax error note, or the user's text was lost:\n%s", seen2)
	}
	seen3 := ocRead(t, filepath.Join(dir, "seen-3"))
	if !strings.Contains(seen3, `# configmaps "x" was not valid:`) || !strings.Contains(seen3, "# * metadata.labels: Invalid value") || !strings.Contains(seen3, `bad: "-x-"`) {
		t.Errorf("third open: no server error note, or the user's text was lost:\n%s", seen3)
	}
	if strings.Count(seen3, "syntax error") > 0 {
		t.Errorf("an old error note was kept:\n%s", seen3)
	}
	got := ocGet(t, c, ocConfigMapGVR, ns, "x")
	if got.GetLabels()["good"] != "yes" || got.Object["data"].(map[string]any)["a"] != "4" {
		t.Fatalf("object after the retried edit: %v", got.Object)
	}
	if left := ocLeftovers(t, dir); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestEditConflict(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	dir := t.TempDir()
	// While the editor is open, someone else changes the object.
	concurrent := fmt.Sprintf(`%q --kubeconfig %q --cache-dir %q -n %s patch cm x -p '{"data":{"b":"theirs"}}' >/dev/null`,
		kdynBin, env.KubeconfigPath(testenv.Admin), filepath.Join(env.Dir(), "kdyn-cache-admin"), ns)
	ed := ocEditor(t, dir,
		concurrent+"\n"+`sed -i 's/a: "1"/a: "mine"/' "$1"`,
		// Overwrite their version: drop the resourceVersion precondition.
		`sed -i '/resourceVersion:/d' "$1"`,
	)
	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "cm", "x").must(t)
	ocStdout(t, r, "configmap/x edited\n")
	if !strings.Contains(r.stderr, "Conflict") {
		t.Errorf("the conflict was not reported on stderr:\n%s", r.stderr)
	}
	seen2 := ocRead(t, filepath.Join(dir, "seen-2"))
	if !strings.Contains(seen2, `# configmaps "x" was changed on the server after this edit began:`) || !strings.Contains(seen2, `a: "mine"`) {
		t.Errorf("second open: no conflict note, or the user's text was lost:\n%s", seen2)
	}
	data := ocGet(t, c, ocConfigMapGVR, ns, "x").Object["data"].(map[string]any)
	if data["a"] != "mine" || data["b"] != nil {
		t.Fatalf("data after overwriting = %v, want only a=mine", data)
	}
}

func TestEditGivenUp(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	rv := ocGet(t, c, ocConfigMapGVR, ns, "x").GetResourceVersion()
	dir := t.TempDir()
	// An invalid change, then the user exits without touching the file.
	ed := ocEditor(t, dir, `sed -i 's/^  name: x$/  name: x\n  labels:\n    bad: "-x-"/' "$1"`)
	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "cm", "x").ocExpect(t, 1, "error: Edit cancelled, no valid changes were saved.")
	m := regexp.MustCompile(`A copy of your changes has been stored to "([^"]+)"`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no copy reported:\n%s", r.stderr)
	}
	if filepath.Dir(m[1]) != dir || !strings.HasPrefix(filepath.Base(m[1]), "kdyn-edit-") {
		t.Errorf("copy at %s, want a kdyn-edit-* file in TMPDIR %s", m[1], dir)
	}
	if kept := ocRead(t, m[1]); !strings.Contains(kept, `bad: "-x-"`) {
		t.Errorf("the copy does not hold the user's change:\n%s", kept)
	}
	if got := ocGet(t, c, ocConfigMapGVR, ns, "x").GetResourceVersion(); got != rv {
		t.Errorf("a given-up edit changed the object")
	}

	// An editor that fails keeps the file too.
	dir = t.TempDir()
	r = ocKdynEnv(t, env, ocEditEnv(dir, ocEditor(t, dir, `exit 3`)), "-n", ns, "edit", "cm", "x").ocExpect(t, 1, "there was a problem with the editor")
	if !strings.Contains(r.stderr, "A copy of your changes has been stored to") {
		t.Errorf("no copy reported after an editor failure:\n%s", r.stderr)
	}

	// Errors before an editor is started.
	kdyn(t, env, "-n", ns, "edit", "cm", "missing", "--exit-codes").ocExpect(t, 3, `configmaps "missing" not found`)
	kdyn(t, env, "-n", ns, "edit", "cm", "x", "-o", "wide").ocExpect(t, 1, `the edit format must be yaml or json, not "wide"`)
}

func TestEditStatusSubresource(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	gvr := ocGizmos(t, c)
	typ := "gizmos." + gvr.Group
	ocGizmo(t, c, gvr, ns, "g1", map[string]any{"color": "red"})
	kdyn(t, env, "-n", ns, "patch", typ, "g1", "--subresource", "status", "-p", `{"status":{"phase":"Pending"}}`).must(t)
	dir := t.TempDir()
	ed := ocEditor(t, dir, `sed -i 's/phase: Pending/phase: Done/; s/color: red/color: blue/' "$1"`)
	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", typ+"/g1", "--subresource", "status").must(t)
	ocStdout(t, r, "gizmo."+gvr.Group+"/g1 edited\n")
	got := ocGet(t, c, gvr, ns, "g1")
	if got.Object["status"].(map[string]any)["phase"] != "Done" {
		t.Errorf("status after editing the status subresource: %v", got.Object["status"])
	}
	if got.Object["spec"].(map[string]any)["color"] != "red" {
		t.Errorf("an edit of the status subresource changed spec: %v", got.Object["spec"])
	}
}

// TestEditSaveConfig: edit --save-config records the edited object as the
// last-applied configuration, as kubectl's.
func TestEditSaveConfig(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "x", nil, map[string]string{"a": "1"})
	dir := t.TempDir()
	ed := ocEditor(t, dir, `sed -i 's/a: "1"/a: "2"/' "$1"`)
	ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "cm", "x", "--save-config").must(t)
	cfg := ocGet(t, c, ocConfigMapGVR, ns, "x").GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if !strings.Contains(cfg, `"data":{"a":"2"}`) || !strings.HasSuffix(cfg, "}\n") {
		t.Errorf("last-applied after edit --save-config: %q", cfg)
	}
	// get --ignore-not-found of an empty list says nothing, as kubectl.
	r := kdyn(t, env, "get", "pods", "-n", ns, "--ignore-not-found")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("get --ignore-not-found of nothing: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
}

// edit -f edits the live objects a manifest names, in the manifest's
// namespace or the command's; the file's other content is not used.
func TestEditFromFile(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	ocConfigMap(t, c, ns, "named", nil, map[string]string{"a": "1"})
	dir := t.TempDir()
	file := filepath.Join(dir, "cm.yaml")
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: named\ndata:\n  a: from-the-file\n"
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	ed := ocEditor(t, dir, `sed -i 's/a: "1"/a: "2"/' "$1"`)
	r := ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "-f", file).must(t)
	ocStdout(t, r, "configmap/named edited\n")
	if got := ocGet(t, c, ocConfigMapGVR, ns, "named").Object["data"].(map[string]any)["a"]; got != "2" {
		t.Fatalf("data.a = %v after edit -f", got)
	}
	if seen := ocRead(t, filepath.Join(dir, "seen-1")); strings.Contains(seen, "from-the-file") {
		t.Errorf("the editor was given the file, not the live object:\n%s", seen)
	}
	r = ocKdynEnv(t, env, ocEditEnv(dir, ed), "-n", ns, "edit", "-f", file, "cm", "named")
	if r.code == 0 || !strings.Contains(r.stderr, "you may not specify resource arguments as well") {
		t.Fatalf("edit -f with arguments: %d %s", r.code, r.stderr)
	}
}
