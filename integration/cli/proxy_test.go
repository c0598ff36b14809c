package cli_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestProxy: kdyn proxy serves the API with the kubeconfig's credentials
// below --api-prefix, refuses what kubectl proxy's filters refuse, serves
// --www below /static/, and streams a watch.
func TestProxy(t *testing.T) {
	env := testenv.Shared(t)
	www := t.TempDir()
	if err := os.WriteFile(filepath.Join(www, "hello.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), kdynBin, kdynArgs(env, testenv.Admin, "proxy", "--port=0", "--www="+www, "--api-prefix=/custom/")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`^Starting to serve on 127\.0\.0\.1:(\d+)\n$`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("first line %q (%v); stderr %s", line, err, stderr.String())
	}
	base := "http://127.0.0.1:" + m[1]
	get := func(method, path, host string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		method, path, host string
		code               int
		body               string
	}{
		{"GET", "/custom/api/v1/namespaces", "", 200, `"kind":"NamespaceList"`},
		{"GET", "/custom/api/kubernetes", "", 404, ""},
		{"GET", "/custom/healthz", "", 200, "ok"},
		{"GET", "/custom/apis/apps/", "", 200, ""},
		{"GET", "/static/hello.txt", "", 200, "hi"},
		{"POST", "/custom/api/v1/namespaces/default/pods/p/exec", "", 403, "<h3>Unauthorized</h3>"},
		{"GET", "/custom/api/v1/namespaces", "evil.example.com:80", 403, "<h3>Unauthorized</h3>"},
		{"GET", "/api/v1/namespaces", "", 404, ""},
	} {
		code, body := get(c.method, c.path, c.host)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s %s (host %q): %d %.200q, want %d with %q", c.method, c.path, c.host, code, body, c.code, c.body)
		}
	}
	start := time.Now()
	code, body := get("GET", "/custom/api/v1/namespaces?watch=true&timeoutSeconds=1", "")
	if code != 200 || !strings.Contains(body, `"type":"ADDED"`) || time.Since(start) < 900*time.Millisecond {
		t.Errorf("watch through the proxy: %d after %s: %.300q", code, time.Since(start), body)
	}
}
