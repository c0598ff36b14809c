package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var (
	auRoleGVR    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	auBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// auGrant lets user get and list configmaps, and get the secret "one", in
// ns.
func auGrant(t *testing.T, c *dynamic.DynamicClient, ns, user string) {
	t.Helper()
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "reader", "namespace": ns},
		"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list"}},
			map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "resourceNames": []any{"one"}, "verbs": []any{"get"}},
		},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "reader", "namespace": ns},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}}
	if _, err := c.Resource(auRoleGVR).Namespace(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resource(auBindingGVR).Namespace(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestAuthCanI(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	auGrant(t, c, ns, testenv.NobodyUserName)
	nobody := func(args ...string) result { return kdynAs(t, env, testenv.Nobody, "", args...) }

	// The admin may do anything.
	ocStdout(t, kdyn(t, env, "auth", "can-i", "create", "pods", "-A").must(t), "yes\n")
	ocStdout(t, kdyn(t, env, "auth", "can-i", "*", "*").must(t), "yes\n")
	ocStdout(t, kdyn(t, env, "auth", "can-i", "get", "/healthz").must(t), "yes\n")

	// The limited user: what its role allows, and no more. "no" exits 1.
	ocStdout(t, nobody("-n", ns, "auth", "can-i", "list", "cm").must(t), "yes\n")
	ocStdout(t, nobody("-n", ns, "auth", "can-i", "get", "configmaps/any").must(t), "yes\n")
	ocStdout(t, nobody("-n", ns, "auth", "can-i", "get", "secrets/one").must(t), "yes\n")
	r := nobody("-n", ns, "auth", "can-i", "get", "secrets/two")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "no") {
		t.Fatalf("get secrets/two: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = nobody("-n", ns, "auth", "can-i", "delete", "configmaps")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "no") {
		t.Fatalf("delete configmaps: exit %d, stdout %q", r.code, r.stdout)
	}
	r = nobody("auth", "can-i", "list", "configmaps", "-A", "-q")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("-q: exit %d, stdout %q", r.code, r.stdout)
	}
	r = nobody("-n", ns, "auth", "can-i", "get", "deployments.apps", "--subresource=scale")
	if r.code != 1 {
		t.Fatalf("--subresource: exit %d, stdout %q", r.code, r.stdout)
	}

	// The admin asks on the user's behalf.
	ocStdout(t, kdyn(t, env, "-n", ns, "--as", testenv.NobodyUserName, "auth", "can-i", "list", "configmaps").must(t), "yes\n")
	r = kdyn(t, env, "-n", ns, "--as", testenv.NobodyUserName, "auth", "can-i", "list", "secrets")
	if r.code != 1 {
		t.Fatalf("--as: exit %d, stdout %q", r.code, r.stdout)
	}

	// kubectl's warnings.
	r = kdyn(t, env, "-n", ns, "auth", "can-i", "get", "nodes").must(t)
	if r.stderr != "Warning: resource 'nodes' is not namespace scoped\n\n" {
		t.Errorf("cluster-scoped warning: %q", r.stderr)
	}
	r = kdyn(t, env, "auth", "can-i", "fly", "pods")
	if !strings.Contains(r.stderr, "Warning: verb 'fly' is not a known verb") {
		t.Errorf("unknown verb warning: %q", r.stderr)
	}
	r = kdyn(t, env, "auth", "can-i", "get", "nosuchthings")
	if !strings.Contains(r.stderr, "Warning: the server doesn't have a resource type 'nosuchthings'") || r.stdout != "yes\n" {
		t.Errorf("unknown type: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	r = kdyn(t, env, "--as", testenv.NobodyUserName, "auth", "can-i", "impersonate", "users")
	if r.code != 1 || !strings.HasPrefix(r.stdout, "no") || r.stderr != "" {
		t.Errorf("impersonate users (no warning for a type no discovery lists): exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// Usage errors.
	kdyn(t, env, "auth", "can-i", "get").ocExpect(t, 1, "you must specify two arguments")
	kdyn(t, env, "auth", "can-i", "--list", "-q").ocExpect(t, 1, "list option can't be specified with neither quiet, all-namespaces nor subresource options")
	kdyn(t, env, "auth", "can-i", "get", "pods", "--no-headers").ocExpect(t, 1, "--no-headers cannot be set without --list specified")
}

func TestAuthCanIList(t *testing.T) {
	env := testenv.Shared(t)
	c := ocClient(t, env)
	ns := ocNamespace(t, c)
	auGrant(t, c, ns, testenv.NobodyUserName)

	r := kdynAs(t, env, testenv.Nobody, "", "-n", ns, "auth", "can-i", "--list").must(t)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "Resources") || !strings.Contains(lines[0], "Non-Resource URLs   Resource Names   Verbs") {
		t.Fatalf("header: %q", lines[0])
	}
	want := map[string]bool{
		"configmaps   [] [] [get list]":                                  false,
		"secrets   [] [one] [get]":                                       false,
		"selfsubjectaccessreviews.authorization.k8s.io   [] [] [create]": false,
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		key := f[0] + "   " + strings.Join(f[1:], " ")
		if _, ok := want[key]; ok {
			want[key] = true
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("no row %q in\n%s", k, r.stdout)
		}
	}
	r = kdynAs(t, env, testenv.Nobody, "", "-n", ns, "auth", "can-i", "--list", "--no-headers").must(t)
	if strings.HasPrefix(r.stdout, "Resources") {
		t.Errorf("--no-headers printed the header:\n%s", r.stdout)
	}
	// The admin's rules hold everything.
	r = kdyn(t, env, "auth", "can-i", "--list").must(t)
	if !strings.Contains(r.stdout, "*.*") || !strings.Contains(r.stdout, "[*]") {
		t.Errorf("admin --list:\n%s", r.stdout)
	}
}

func TestAuthWhoAmI(t *testing.T) {
	env := testenv.Shared(t)
	r := kdyn(t, env, "auth", "whoami").must(t)
	want := "ATTRIBUTE   VALUE\nUsername    kdyn-admin\nUID         kdyn-admin\nGroups      [system:masters system:authenticated]\n"
	if r.stdout != want {
		t.Errorf("admin whoami:\n%q\nwant\n%q", r.stdout, want)
	}
	r = kdynAs(t, env, testenv.Nobody, "", "auth", "whoami").must(t)
	want = "ATTRIBUTE   VALUE\nUsername    kdyn-nobody\nUID         kdyn-nobody\nGroups      [system:authenticated]\n"
	if r.stdout != want {
		t.Errorf("nobody whoami:\n%q\nwant\n%q", r.stdout, want)
	}
	r = kdyn(t, env, "--as", "jane", "--as-group", "dev", "auth", "whoami", "-o", "json").must(t)
	if !strings.HasPrefix(r.stdout, "{\n    \"kind\": \"SelfSubjectReview\",\n    \"apiVersion\": \"authentication.k8s.io/v1\",") {
		t.Errorf("-o json is not in the server's (kubectl's) order:\n%s", r.stdout)
	}
	var review struct {
		Status struct {
			UserInfo struct {
				Username string
				Groups   []string
			} `json:"userInfo"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &review); err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "jane" || strings.Join(u.Groups, ",") != "dev,system:authenticated" {
		t.Errorf("impersonated whoami: %+v", u)
	}
	r = kdyn(t, env, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").must(t)
	if r.stdout != "kdyn-admin" {
		t.Errorf("jsonpath: %q", r.stdout)
	}
}

// TestInteractivePluginDoesNotGetManifestStdin is kubectl's own check
// (test/cmd/authentication.sh): on a terminal, a command that reads its
// manifest from stdin does not run an interactiveMode: Always credential
// plugin, whose prompt would eat the manifest; it fails naming why. The
// same plugin does run for a command that leaves stdin alone, which shows
// the terminal is there.
func TestInteractivePluginDoesNotGetManifestStdin(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) from util-linux is needed to give kdyn a terminal: %v", err)
	}
	dir := t.TempDir()
	kubeconfig, marker := pluginKubeconfig(t, dir, "Always")
	onTerminal := func(stdin string, args ...string) string {
		t.Helper()
		wrapper := filepath.Join(dir, "run.sh")
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = "'" + a + "'"
		}
		writeFile(t, wrapper, 0o755, "#!/bin/sh\nexec "+kdynBin+" --kubeconfig "+kubeconfig+" "+strings.Join(quoted, " ")+" 2>&1\n")
		cmd := exec.CommandContext(t.Context(), scriptBin, "-q", "/dev/null", "-c", wrapper)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "SHELL=/bin/sh")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	manifest := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"some-resource"}}` + "\n"
	for _, args := range [][]string{
		{"apply", "-f", "-"},
		{"replace", "-f", "-", "--force"},
		{"create", "-f", "-"},
		{"delete", "-f", "-"},
		{"diff", "-f", "-"},
	} {
		out := onTerminal(manifest, args...)
		if !strings.Contains(out, "standard input is unavailable: used by stdin resource manifest reader") {
			t.Errorf("kdyn %s on a terminal:\n%s", strings.Join(args, " "), out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("kdyn %s ran the interactive plugin while stdin carried the manifest", strings.Join(args, " "))
		}
	}
	out := onTerminal("", "get", "configmaps")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the plugin did not run for get on a terminal, so this test proves nothing:\n%s", out)
	}
}

// pluginKubeconfig writes, in dir, a kubeconfig whose user runs an exec
// credential plugin (with interactiveMode mode) that touches marker when
// it runs, for a server that refuses connections.
func pluginKubeconfig(t *testing.T, dir, mode string) (kubeconfig, marker string) {
	t.Helper()
	marker = filepath.Join(dir, "plugin-ran")
	plugin := filepath.Join(dir, "plugin.sh")
	writeFile(t, plugin, 0o755, "#!/bin/sh\ntouch "+marker+"\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n")
	kubeconfig = filepath.Join(dir, "config")
	writeFile(t, kubeconfig, 0o600, `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: test
  context: {cluster: test, user: plugin}
current-context: test
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: `+plugin+`
      interactiveMode: `+mode+`
`)
	return kubeconfig, marker
}

func writeFile(t *testing.T, name string, mode os.FileMode, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
