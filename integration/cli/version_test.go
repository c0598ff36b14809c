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
