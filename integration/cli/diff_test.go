package cli_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestDiff: a new object diffs against nothing (exit 1), an applied one
// shows no difference (exit 0, no output), a change shows as a unified
// diff (exit 1), and nothing is changed by diffing.
func TestDiff(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	file := mfWrite(t, "cm.yaml", mfConfigMap("d", ns, map[string]string{"k": "a"}))
	r := kdyn(t, env, "diff", "-f", file).mfExpect(t, 1)
	name := "v1.ConfigMap." + ns + ".d"
	want := fmt.Sprintf(`diff -u -N live/%[1]s merged/%[1]s
--- live/%[1]s
+++ merged/%[1]s
@@ -0,0 +1,7 @@
+apiVersion: v1
+data:
+  k: a
+kind: ConfigMap
+metadata:
+  name: d
+  namespace: %[2]s
`, name, ns)
	if r.stdout != want {
		t.Fatalf("diff of a new object:\n%s\nwant:\n%s", r.stdout, want)
	}
	if mfGet(t, env, ns, "d") != nil {
		t.Fatal("diff created the object")
	}

	kdyn(t, env, "apply", "-f", file).must(t)
	if r := kdyn(t, env, "diff", "-f", file).must(t); r.stdout != "" {
		t.Fatalf("diff after apply printed:\n%s", r.stdout)
	}
	// Even with --exit-codes, a difference is exit 1 (kubectl's convention).
	if err := os.WriteFile(file, []byte(mfConfigMap("d", ns, map[string]string{"k": "b"})), 0o644); err != nil {
		t.Fatal(err)
	}
	r = kdyn(t, env, "--exit-codes", "diff", "-f", file).mfExpect(t, 1)
	if !strings.Contains(r.stdout, "@@ -1,6 +1,6 @@\n apiVersion: v1\n data:\n-  k: a\n+  k: b\n kind: ConfigMap\n") {
		t.Fatalf("diff of a change:\n%s", r.stdout)
	}
	for _, noise := range []string{"managedFields", "resourceVersion", "uid:", "creationTimestamp"} {
		if strings.Contains(r.stdout, noise) {
			t.Errorf("diff shows %s:\n%s", noise, r.stdout)
		}
	}
	if v := mfGet(t, env, ns, "d").Object["data"].(map[string]any)["k"]; v != "a" {
		t.Fatalf("diff changed the object: k=%v", v)
	}
}

// TestDiffSecretsMasked: Secret values never appear; a changed value is
// still visible as "*** (before)" / "*** (after)".
func TestDiffSecretsMasked(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	secret := func(pass string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: %s\nstringData:\n  user: admin-user\n  pass: %s\n", ns, pass)
	}
	file := mfWrite(t, "secret.yaml", secret("first-password"))
	kdyn(t, env, "apply", "-f", file).must(t)
	if err := os.WriteFile(file, []byte(secret("second-password")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := kdyn(t, env, "diff", "-f", file).mfExpect(t, 1)
	for _, secretText := range []string{"first-password", "second-password", "admin-user"} {
		for _, form := range []string{secretText, base64.StdEncoding.EncodeToString([]byte(secretText))} {
			if strings.Contains(r.stdout, form) {
				t.Fatalf("diff shows a secret value %q:\n%s", form, r.stdout)
			}
		}
	}
	if !strings.Contains(r.stdout, "-  pass: '*** (before)'\n+  pass: '*** (after)'\n") || !strings.Contains(r.stdout, "   user: '***'\n") {
		t.Fatalf("masked diff:\n%s", r.stdout)
	}
}

// TestDiffErrors: errors exit above 1, and are named.
func TestDiffErrors(t *testing.T) {
	env := testenv.Shared(t)
	missingNS := mfName("mf-nowhere")
	file := mfWrite(t, "cm.yaml", mfConfigMap("x", missingNS, nil))
	kdyn(t, env, "diff", "-f", file).mfExpect(t, 2, "Error from server (NotFound): error when diffing configmap/x ("+file+": document 1)", `namespaces "`+missingNS+`" not found`)
	kdyn(t, env, "--exit-codes", "diff", "-f", file).mfExpect(t, 3)
	// A CRD and an object of it: the CRD diffs (it would be created), the
	// object cannot be dry-run before its CRD exists; diff does not wait.
	group := mfName("mfdiff") + ".kdyn.example"
	sn := "gd" + strings.ReplaceAll(strings.TrimSuffix(group, ".kdyn.example")[len("mfdiff-"):], "-", "")
	ns := mfNamespace(t, env)
	crdFile := mfWrite(t, "crd.yaml", mfCRD(group, sn)+"---\n"+fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: %s\n", group, ns))
	start := time.Now()
	r := kdyn(t, env, "diff", "-f", crdFile).mfExpect(t, 2, crdFile+": document 2: gadget."+group+"/g:", "ensure CRDs are installed first")
	if !strings.Contains(r.stdout, "+++ merged/apiextensions.k8s.io.v1.CustomResourceDefinition.gadgets."+group+"\n") {
		t.Fatalf("no diff for the CRD:\n%s", r.stdout)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("diff took %s", d)
	}
	bad := mfWrite(t, "bad.yaml", "kind: [\n")
	kdyn(t, env, "diff", "-f", bad).mfExpect(t, 2, "error: error parsing "+bad+": error converting YAML to JSON")
	kdyn(t, env, "diff").mfExpect(t, 2, "no manifests given")
}

// TestDiffExternalProgram: KUBECTL_EXTERNAL_DIFF runs a program once on a
// LIVE- and a MERGED- directory holding every object's sides (an object
// absent on a side has no file there; objects of one name but different
// kinds get different files), passes on only the arguments kubectl would,
// exits with the program's code, masks Secret values in the files too,
// and removes the directories afterwards.
func TestDiffExternalProgram(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	cm := mfConfigMap("same", ns, map[string]string{"k": "a"})
	kdyn(t, env, "apply", "--server-side", "-f", mfWrite(t, "cm.yaml", cm)).mfExpect(t, 0)
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: same\n  namespace: %s\nstringData:\n  password: hunter2-not-shown\n", ns)
	file := mfWrite(t, "all.yaml", cm+"---\n"+secret)
	withDiff := func(program string, args ...string) result {
		t.Helper()
		return run(t, "", []string{"KUBECTL_EXTERNAL_DIFF=" + program}, kdynArgs(env, testenv.Admin, args...)...)
	}

	// find (kubectl's own test of same-named objects): both directories
	// listed; the ConfigMap on both sides, the new Secret only as merged.
	r := withDiff("find", "diff", "-f", file).mfExpect(t, 0)
	var live, merged string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		switch base := line[strings.LastIndex(line, "/")+1:]; {
		case strings.HasPrefix(base, "LIVE-"):
			live = line
		case strings.HasPrefix(base, "MERGED-"):
			merged = line
		}
	}
	cmFile, secretFile := "v1.ConfigMap."+ns+".same", "v1.Secret."+ns+".same"
	for _, want := range []string{live + "/" + cmFile, merged + "/" + cmFile, merged + "/" + secretFile} {
		if live == "" || merged == "" || !strings.Contains(r.stdout, want+"\n") {
			t.Fatalf("find output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, live+"/"+secretFile) {
		t.Fatalf("the Secret does not exist yet but has a live file:\n%s", r.stdout)
	}
	for _, dir := range []string{live, merged} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind (stat: %v)", dir, err)
		}
	}

	// diff -r: "-r" is passed on, "--x;rm" is not (kubectl keeps only
	// letters, digits, - and =); differences exit 1.
	r = withDiff("diff -r --x;rm", "diff", "-f", file).mfExpect(t, 1)
	if !strings.Contains(r.stdout, ": "+secretFile) || strings.Contains(r.stdout, cmFile) {
		t.Fatalf("diff -r output: want only the Secret named (Only in ...):\n%s", r.stdout)
	}

	// The files hold masked Secret values.
	r = withDiff("grep -r password", "diff", "-f", file).mfExpect(t, 0)
	if strings.Contains(r.stdout, "hunter2") || !strings.Contains(r.stdout, "password: '***'") {
		t.Fatalf("Secret value not masked in the files:\n%s", r.stdout)
	}

	// The program's own error code passes through; a missing one is
	// kdyn's error, exit 2.
	withDiff("false", "diff", "-f", file).mfExpect(t, 1)
	script := mfWrite(t, "fails.sh", "#!/bin/sh\necho broken >&2\nexit 7\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	withDiff(script, "diff", "-f", file).mfExpect(t, 7, "broken")
	withDiff("no-such-diff-program", "diff", "-f", file).mfExpect(t, 2, `running the diff program "no-such-diff-program" from KUBECTL_EXTERNAL_DIFF`, "not found")
}
