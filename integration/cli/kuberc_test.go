package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// kubercRun runs kdyn as admin with KUBERC set to kuberc ("off": none).
func kubercRun(t *testing.T, env *testenv.Env, kuberc, stdin string, args ...string) result {
	t.Helper()
	return run(t, stdin, []string{"KUBERC=" + kuberc}, kdynArgs(env, testenv.Admin, args...)...)
}

// TestApplyIsClientSideByDefault is kubectl's default: apply records the
// last-applied configuration and sends a three-way merge patch, so the
// same manifest applied after a scale succeeds ("configured") and sets the
// manifest's replicas again, where a server-side apply as another manager
// would conflict; diff shows what it will do.
func TestApplyIsClientSideByDefault(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + ns + `
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.27
`
	file := mfWrite(t, "web.yaml", manifest)
	replicas := func() string {
		return kubercRun(t, env, "off", "", "-n", ns, "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").must(t).stdout
	}
	if r := kubercRun(t, env, "off", "", "apply", "-f", file).must(t); r.stdout != "deployment.apps/web created\n" {
		t.Fatalf("first apply: %q", r.stdout)
	}
	r := kubercRun(t, env, "off", "", "-n", ns, "get", "deploy", "web", "-o", `jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`).must(t)
	if !strings.Contains(r.stdout, `"replicas":1`) {
		t.Fatalf("no last-applied-configuration: %q", r.stdout)
	}
	if r := kubercRun(t, env, "off", "", "apply", "-f", file).must(t); r.stdout != "deployment.apps/web unchanged\n" {
		t.Fatalf("apply again: %q", r.stdout)
	}
	kubercRun(t, env, "off", "", "diff", "-f", file).mfExpect(t, 0)
	kubercRun(t, env, "off", "", "-n", ns, "scale", "deploy/web", "--replicas=3").must(t)
	// diff and apply after the scale: the manifest's replicas come back.
	r = kubercRun(t, env, "off", "", "diff", "-f", file).mfExpect(t, 1)
	if !strings.Contains(r.stdout, "-  replicas: 3\n+  replicas: 1\n") {
		t.Fatalf("diff after scale:\n%s", r.stdout)
	}
	if r := kubercRun(t, env, "off", "", "apply", "-f", file).must(t); r.stdout != "deployment.apps/web configured\n" {
		t.Fatalf("apply after scale: %q", r.stdout)
	}
	if got := replicas(); got != "1" {
		t.Fatalf("replicas after apply: %q", got)
	}
	// A changed image shows in the client-side diff and nothing else does.
	changed := mfWrite(t, "web2.yaml", strings.Replace(manifest, "nginx:1.27", "nginx:1.28", 1))
	r = kubercRun(t, env, "off", "", "diff", "-f", changed).mfExpect(t, 1)
	if !strings.Contains(r.stdout, "-      - image: nginx:1.27\n+      - image: nginx:1.28\n") || strings.Contains(r.stdout, "replicas") {
		t.Fatalf("client-side diff:\n%s", r.stdout)
	}
	// Server-side apply, asked for, takes the image over from the
	// client-side apply without a conflict: its manager is kubectl's
	// ("kubectl"), which the server lets take over the fields of
	// "kubectl-client-side-apply", as kubectl v1.37 does (checked against
	// it); diff --server-side shows the change.
	kubercRun(t, env, "off", "", "diff", "--server-side", "-f", changed).mfExpect(t, 1)
	kubercRun(t, env, "off", "", "diff", "--server-side", "--force-conflicts", "-f", changed).mfExpect(t, 1)
	kubercRun(t, env, "off", "", "apply", "--server-side", "-f", changed).must(t).mfStdout(t, "deployment.apps/web serverside-applied")
	kubercRun(t, env, "off", "", "diff", "--force-conflicts", "-f", changed).mfExpect(t, 2, "--force-conflicts only works with --server-side")
}

// TestKuberc: kubectl's preferences file sets flag defaults per command
// (the command line still wins) and adds aliases; --kuberc names another
// file; KUBERC=off turns it off; a bad file is refused or warned about as
// kubectl does.
func TestKuberc(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	dir := t.TempDir()
	rc := filepath.Join(dir, "kuberc")
	writeFile(t, rc, 0o600, `apiVersion: kubectl.config.k8s.io/v1beta1
kind: Preference
defaults:
- command: apply
  options:
  - name: server-side
    default: "true"
- command: create configmap
  options:
  - name: dry-run
    default: client
  - name: output
    default: name
aliases:
- name: getcm
  command: get
  prependArgs: [configmaps]
  options:
  - name: output
    default: jsonpath={.data.k}
`)
	file := mfWrite(t, "cm.yaml", mfConfigMap("pref", ns, map[string]string{"k": "v1"}))
	if r := kubercRun(t, env, rc, "", "apply", "-f", file).must(t); r.stdout != "configmap/pref serverside-applied\n" {
		t.Fatalf("apply with server-side as the kuberc default: %q", r.stdout)
	}
	if r := kubercRun(t, env, rc, "", "apply", "--server-side=false", "-f", file).must(t); r.stdout != "configmap/pref configured\n" {
		t.Fatalf("the command line overrides kuberc: %q", r.stdout)
	}
	// A default of a subcommand: create configmap only prints, it creates nothing.
	if r := kubercRun(t, env, rc, "", "-n", ns, "create", "configmap", "other", "--from-literal=a=b").must(t); r.stdout != "configmap/other\n" {
		t.Fatalf("create configmap with kuberc defaults: %q", r.stdout)
	}
	kubercRun(t, env, "off", "", "-n", ns, "get", "cm", "other").mfExpect(t, 1, `configmaps "other" not found`)
	// The alias: get configmaps with its own output.
	if r := kubercRun(t, env, rc, "", "-n", ns, "getcm", "pref").must(t); r.stdout != "v1" {
		t.Fatalf("alias getcm: %q", r.stdout)
	}
	if r := kubercRun(t, env, rc, "", "-n", ns, "getcm", "pref", "-o", "name").must(t); r.stdout != "configmap/pref\n" {
		t.Fatalf("alias getcm -o name: %q", r.stdout)
	}
	kubercRun(t, env, "off", "", "-n", ns, "getcm", "pref").mfExpect(t, 1, `unknown command "getcm"`)
	// --kuberc names the file; it cannot be combined with KUBERC=off.
	if r := kubercRun(t, env, "", "", "--kuberc", rc, "-n", ns, "getcm", "pref").must(t); r.stdout != "v1" {
		t.Fatalf("--kuberc: %q", r.stdout)
	}
	kubercRun(t, env, "off", "", "--kuberc", rc, "get", "ns").mfExpect(t, 1, "disabling kuberc via KUBERC=off and passing kuberc flag are mutually exclusive")

	// An unknown field is a warning; the rest applies.
	typo := filepath.Join(dir, "typo")
	writeFile(t, typo, 0o600, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefualts: []\naliases:\n- name: ns\n  command: get\n  prependArgs: [namespaces]\n")
	r := kubercRun(t, env, typo, "", "ns", ns, "-o", "name").must(t)
	if r.stdout != "namespace/"+ns+"\n" || !strings.Contains(r.stderr, `kuberc: ignoring strict decoding error in `+typo) || !strings.Contains(r.stderr, `unknown field "defualts"`) {
		t.Fatalf("typo: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// A missing file named explicitly, a bad alias, an unknown flag: errors.
	kubercRun(t, env, filepath.Join(dir, "missing"), "", "get", "ns").mfExpect(t, 1, "kuberc: open "+filepath.Join(dir, "missing"))
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, 0o600, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\naliases:\n- name: get-x\n  command: get\n")
	kubercRun(t, env, bad, "", "get", "ns").mfExpect(t, 1, `invalid alias name "get-x", can only include alphabetical characters`)
	unknown := filepath.Join(dir, "unknown")
	writeFile(t, unknown, 0o600, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\ndefaults:\n- command: get\n  options:\n  - name: no-such-flag\n    default: x\n")
	kubercRun(t, env, unknown, "", "get", "ns").mfExpect(t, 1, "invalid flag no-such-flag for command get")
	notPref := filepath.Join(dir, "notpref")
	writeFile(t, notPref, 0o600, "apiVersion: v1\nkind: ConfigMap\n")
	kubercRun(t, env, notPref, "", "get", "ns").mfExpect(t, 1, "no valid preferences found in "+notPref)
}

// TestKubercCredentialPluginPolicy: DenyAll keeps an exec plugin from
// running, an Allowlist lets only the listed one run, and a policy that
// cannot be right (an allowlist with AllowAll) is refused.
func TestKubercCredentialPluginPolicy(t *testing.T) {
	dir := t.TempDir()
	kubeconfig, marker := pluginKubeconfig(t, dir, "Never")
	plugin := filepath.Join(dir, "plugin.sh")
	policy := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, 0o600, "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n"+body)
		return p
	}
	ran := func() bool {
		_, err := os.Stat(marker)
		os.Remove(marker)
		return err == nil
	}
	get := func(rc string) result {
		return run(t, "", []string{"KUBERC=" + rc}, "--kubeconfig", kubeconfig, "get", "ns")
	}
	r := get(policy("deny", "credentialPluginPolicy: DenyAll\n")).mfExpect(t, 1, `plugin "`+plugin+`" not allowed: policy set to "DenyAll"`)
	if ran() {
		t.Fatalf("DenyAll ran the plugin: %s", r.stderr)
	}
	other := filepath.Join(dir, "other-plugin")
	get(policy("others", "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: "+other+"\n")).mfExpect(t, 1, "is not permitted by the credential plugin allowlist")
	if ran() {
		t.Fatal("an allowlist without the plugin ran it")
	}
	r = get(policy("allowed", "credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- command: "+plugin+"\n")).mfExpect(t, 1, "was refused")
	if !ran() {
		t.Fatalf("an allowlist with the plugin did not run it: %s", r.stderr)
	}
	get(policy("confused", "credentialPluginPolicy: AllowAll\ncredentialPluginAllowlist:\n- command: "+plugin+"\n")).mfExpect(t, 1, `plugin policy is "AllowAll" but allowlist is non-nil`)
	if ran() {
		t.Fatal("a policy that was refused still ran the plugin")
	}
}
