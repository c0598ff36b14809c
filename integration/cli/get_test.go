package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestGetFromManifests: get -f reads the objects a manifest names, each
// in its manifest's namespace (else the command's), as kubectl's does; its
// field managers are kubectl's names.
func TestGetFromManifests(t *testing.T) {
	env := testenv.Shared(t)
	ns, other := mfNamespace(t, env), mfNamespace(t, env)
	a := mfConfigMap("a", "", map[string]string{"k": "v"})
	b := mfConfigMap("b", other, map[string]string{"k": "v"})
	file := mfWrite(t, "two.yaml", a+"---\n"+b)
	kdyn(t, env, "create", "-f", mfWrite(t, "a.yaml", a), "-n", ns).must(t)
	kdyn(t, env, "create", "-f", mfWrite(t, "b.yaml", b)).must(t)

	r := kdyn(t, env, "get", "-f", file, "-n", ns, "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}").must(t)
	if want := ns + "/a " + other + "/b "; r.stdout != want {
		t.Errorf("get -f: %q, want %q", r.stdout, want)
	}
	r = kdyn(t, env, "get", "--show-managed-fields", "-f", mfWrite(t, "a2.yaml", a), "-n", ns, "-o", "jsonpath={.metadata.managedFields[*].manager}").must(t)
	if r.stdout != "kubectl-create" {
		t.Errorf("manager of create: %q", r.stdout)
	}
	r = kdyn(t, env, "get", "-f", file, "-n", ns)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "NAME ") || !strings.Contains(r.stdout, "\na ") || !strings.Contains(r.stdout, "\nb ") {
		t.Errorf("get -f table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	kdyn(t, env, "delete", "configmap", "b", "-n", other).must(t)
	r = kdyn(t, env, "get", "-f", file, "-n", ns, "-o", "name")
	if r.code != 1 || r.stdout != "configmap/a\n" || !strings.Contains(r.stderr, `Error from server (NotFound): configmaps "b" not found`) {
		t.Errorf("get -f with one object gone: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	r = kdyn(t, env, "get", "configmaps", "-f", file)
	if r.code != 1 || !strings.Contains(r.stderr, "you may not specify resource arguments as well") {
		t.Errorf("get TYPE -f: exit %d, %q", r.code, r.stderr)
	}
}

// TestInvokedAsKubectl: through a link named kubectl, kdyn's error texts
// are kubectl's byte for byte (kubectl's test/cmd results.sh).
func TestInvokedAsKubectl(t *testing.T) {
	env := testenv.Shared(t)
	link := filepath.Join(t.TempDir(), "kubectl")
	if err := os.Symlink(kdynBin, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"list"}, "error: unknown command \"list\" for \"kubectl\"\n\nDid you mean this?\n\tget\n"},
		{[]string{"get", "pod/no-such-pod", "-n", "default"}, "Error from server (NotFound): pods \"no-such-pod\" not found\n"},
	} {
		cmd := exec.Command(link, kdynArgs(env, testenv.Admin, tc.args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || stdout.Len() != 0 || stderr.String() != tc.stderr {
			t.Errorf("kubectl %v: %v, stdout %q, stderr %q, want %q", tc.args, err, stdout.String(), stderr.String(), tc.stderr)
		}
	}
}

// TestCreateSelector: create -l creates only the documents whose labels
// match (kubectl's test/cmd create.sh filter test).
func TestCreateSelector(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	docs := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: picked\n  labels:\n    unique: yes-1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: left\n"
	kdyn(t, env, "create", "-l", "unique=yes-1", "-f", mfWrite(t, "two.yaml", docs), "-n", ns).must(t).mfStdout(t, "configmap/picked created")
	r := kdyn(t, env, "get", "configmaps", "-n", ns, "-o", "name")
	if r.code != 0 || strings.Contains(r.stdout, "left") || !strings.Contains(r.stdout, "configmap/picked") {
		t.Errorf("create -l created an unmatched document: %q %q", r.stdout, r.stderr)
	}
}

// TestGetFromManifestsWatch: get -f -w watches the one object a manifest
// names, and refuses several as kubectl does.
func TestGetFromManifestsWatch(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	a := mfConfigMap("a", ns, nil)
	kdyn(t, env, "create", "-f", mfWrite(t, "a.yaml", a)).must(t)
	r := kdyn(t, env, "get", "-f", mfWrite(t, "a2.yaml", a), "-w", "-o", "name", "--request-timeout=1s").must(t)
	if r.stdout != "configmap/a\n" {
		t.Errorf("get -f -w: %q", r.stdout)
	}
	// With -v, the end of the watch says why, as kubectl's does.
	r = kdyn(t, env, "get", "configmap", "a", "-n", ns, "-w", "--request-timeout=1", "-v", "5").must(t)
	if !strings.Contains(r.stderr, "request timeout") || !strings.Contains(r.stderr, "context deadline exceeded") {
		t.Errorf("get -w --request-timeout=1 -v 5 does not say why the watch ended: %q", r.stderr)
	}
	two := mfWrite(t, "two.yaml", a+"---\n"+mfConfigMap("b", ns, nil))
	r = kdyn(t, env, "get", "-f", two, "-w")
	if r.code != 1 || !strings.Contains(r.stderr, "watch is only supported on individual resources and resource collections - 2 resources were found") {
		t.Errorf("get -f -w of two: exit %d, %q", r.code, r.stderr)
	}
}

// TestWarningsAsErrors: a server warning (a deprecated version of a custom
// resource) fails the command with --warnings-as-errors, as kubectl's.
func TestWarningsAsErrors(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	group := "warn" + strings.TrimPrefix(ns, "mf-") + ".example.com"
	group = strings.ReplaceAll(group, "-", "")
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: olds." + group + "\nspec:\n  group: " + group +
		"\n  scope: Namespaced\n  names: {plural: olds, singular: old, kind: Old}\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n    deprecated: true\n    deprecationWarning: old is going away\n    schema:\n      openAPIV3Schema: {type: object}\n"
	mfStdin(t, env, crd, "apply", "-f", "-").must(t)
	kdyn(t, env, "wait", "--for=condition=Established", "crd/olds."+group).must(t)
	r := kdyn(t, env, "get", "olds."+group, "-n", ns)
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: old is going away") {
		t.Fatalf("without the flag: exit %d, %q", r.code, r.stderr)
	}
	r = kdyn(t, env, "get", "olds."+group, "-n", ns, "--warnings-as-errors")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "Warning: old is going away\n") || !strings.HasSuffix(r.stderr, "\nerror: 1 warning received\n") {
		t.Errorf("--warnings-as-errors: exit %d, %q", r.code, r.stderr)
	}
	kdyn(t, env, "delete", "crd", "olds."+group).must(t)
}

// TestREADMEKubectlScript runs the kubectl script the README shows, as it
// stands there, with kdyn installed as kubectl: it must run unchanged.
func TestREADMEKubectlScript(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- kubectl-script:")
	if !ok {
		t.Fatal("README.md has no kubectl-script block")
	}
	_, rest, _ = strings.Cut(rest, "```sh\n")
	script, _, _ := strings.Cut(rest, "```")
	bin := t.TempDir()
	if err := os.Symlink(kdynBin, filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	// The script runs in the namespace of its context, as a user's does: a
	// copy of the kubeconfig names the test's namespace.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	b, err := os.ReadFile(env.KubeconfigPath(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, b, 0o600); err != nil {
		t.Fatal(err)
	}
	set := exec.CommandContext(t.Context(), kdynBin, "--kubeconfig", kc, "config", "set-context", "--current", "--namespace", ns)
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("set the namespace: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECONFIG="+kc, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's script failed on kdyn: %v\n%s", err, out)
	}
	for _, want := range []string{"deployment.apps/web created", "service/web exposed", "deployment.apps/web image updated", "deployment.apps/web env updated",
		"deployment.apps/web labeled", "nginx:1.28", "configmap/settings created", "fast", `deployment.apps "web" deleted`, `service "web" deleted`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script's output lacks %q:\n%s", want, out)
		}
	}
}
