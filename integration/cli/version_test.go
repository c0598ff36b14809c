package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestVersion(t *testing.T) {
	env := testenv.Shared(t)
	r := kdyn(t, env, "version").must(t)
	if !strings.Contains(r.stdout, "Server Version: v1.37.2") || !strings.Contains(r.stdout, "Client Version: ") {
		t.Fatalf("version output:\n%s", r.stdout)
	}
	r = kdyn(t, env, "version", "-o", "json").must(t)
	var v struct {
		ClientVersion struct{ GitVersion, Platform string }
		ServerVersion struct{ GitVersion string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.ServerVersion.GitVersion != "v1.37.2" || v.ClientVersion.Platform == "" {
		t.Fatalf("version -o json: %v\n%s", err, r.stdout)
	}
	r = run(t, "", nil, "version", "--client", "--kubeconfig", "/nonexistent/kubeconfig").must(t)
	if strings.Contains(r.stdout, "Server Version") {
		t.Fatalf("--client talked to a server:\n%s", r.stdout)
	}
}

func TestVerbosityRedactsCredentials(t *testing.T) {
	env := testenv.Shared(t)
	for _, v := range []string{"0", "6", "8", "9", "10"} {
		r := kdyn(t, env, "get", "secrets", "-A", "-v", v).must(t)
		all := r.stdout + r.stderr
		if strings.Contains(all, env.AdminToken()) {
			t.Fatalf("-v %s printed the token", v)
		}
		if v >= "6" && v != "10" && !strings.Contains(r.stderr, "/api/v1/secrets") {
			t.Fatalf("-v %s did not log the URL:\n%s", v, r.stderr)
		}
		if v == "9" && !strings.Contains(r.stderr, "Bearer <masked>") {
			t.Fatalf("-v 9 did not print a masked curl line:\n%s", r.stderr)
		}
	}
}

func TestConfigCommands(t *testing.T) {
	env := testenv.Shared(t)
	r := kdyn(t, env, "config", "get-contexts").must(t)
	if !strings.Contains(r.stdout, "CURRENT") || !strings.Contains(r.stdout, "*         admin") {
		t.Fatalf("get-contexts:\n%s", r.stdout)
	}
	r = kdyn(t, env, "config", "current-context").must(t)
	if strings.TrimSpace(r.stdout) != "admin" {
		t.Fatalf("current-context = %q", r.stdout)
	}
	r = kdyn(t, env, "config", "view").must(t)
	if strings.Contains(r.stdout, env.AdminToken()) || !strings.Contains(r.stdout, "REDACTED") || !strings.Contains(r.stdout, "DATA+OMITTED") {
		t.Fatalf("config view is not redacted:\n%s", r.stdout)
	}
	r = kdyn(t, env, "config", "view", "--raw").must(t)
	if !strings.Contains(r.stdout, env.AdminToken()) {
		t.Fatalf("config view --raw hides the token")
	}
	r = kdyn(t, env, "--context", "nobody", "get", "secrets")
	if r.code != 1 || !strings.Contains(r.stderr, "Error from server (Forbidden)") {
		t.Fatalf("nobody get secrets: %d\n%s", r.code, r.stderr)
	}
}

// TestRawRequests: --raw on get, create, replace and delete sends the file
// as is to the path and prints the server's answer, as kubectl's test/cmd
// uses them (core.sh, create.sh, version.sh).
func TestRawRequests(t *testing.T) {
	env := testenv.Shared(t)
	ns := ocNamespace(t, ocClient(t, env))
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw"},"data":{"k":"one"}}`
	r := kdynAs(t, env, testenv.Admin, cm, "create", "--raw", base, "-f", "-").must(t)
	if !strings.Contains(r.stdout, `"name":"raw"`) {
		t.Fatalf("create --raw printed %q", r.stdout)
	}
	r = kdynAs(t, env, testenv.Admin, strings.Replace(cm, "one", "two", 1), "replace", "--raw", base+"/raw", "-f", "-").must(t)
	if !strings.Contains(r.stdout, `"k":"two"`) {
		t.Fatalf("replace --raw printed %q", r.stdout)
	}
	r = kdyn(t, env, "get", "--raw", base+"?fieldSelector=metadata.name%3Draw").must(t)
	if !strings.Contains(r.stdout, `"kind":"ConfigMapList"`) || !strings.Contains(r.stdout, `"k":"two"`) {
		t.Fatalf("get --raw with a query printed %q", r.stdout)
	}
	r = kdyn(t, env, "get", "--raw=/version").must(t)
	if !strings.Contains(r.stdout, `"gitVersion": "v1.37.2"`) {
		t.Fatalf("get --raw=/version printed %q", r.stdout)
	}
	kdyn(t, env, "delete", "--raw", base+"/raw").must(t)
	r = kdyn(t, env, "get", "--raw", base+"/raw")
	if r.code != 1 || !strings.Contains(r.stderr, `Error from server (NotFound): configmaps "raw" not found`) {
		t.Fatalf("get --raw of a deleted object: exit %d, %q", r.code, r.stderr)
	}
	// A YAML pod posted to the namespaces collection, sent as is: the
	// server's own refusal.
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
	r = kdynAs(t, env, testenv.Admin, pod, "create", "--raw", "/api/v1/namespaces", "-f", "-")
	if r.code != 1 || !strings.Contains(r.stderr, "the object provided is unrecognized (must be of type Namespace)") {
		t.Fatalf("create --raw of a pod to namespaces: exit %d, %q", r.code, r.stderr)
	}
	r = kdyn(t, env, "create", "--raw", base, "-f", "a.yaml", "-f", "b.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "--raw can only use a single local file or stdin") {
		t.Fatalf("create --raw with two files: exit %d, %q", r.code, r.stderr)
	}
}
