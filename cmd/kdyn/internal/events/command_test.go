package events_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/events"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// captured is when testdata was captured: LAST SEEN counts from it.
var captured = time.Date(2026, 12, 4, 14, 38, 35, 0, time.UTC)

// server answers the lists of testdata, as the real server did.
func server(t *testing.T) string {
	t.Helper()
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		file := ""
		switch {
		case r.URL.Path == "/api/v1/events":
			file = "list-all.json"
		case r.URL.Path == "/api/v1/namespaces/evt/events" && r.URL.Query().Get("fieldSelector") == "involvedObject.kind=Pod,involvedObject.apiVersion=v1,involvedObject.name=web":
			file = "list-for-pod-web.json"
		case r.URL.Path == "/api/v1/namespaces/evt/events" && r.URL.Query().Get("fieldSelector") == "":
			file = "list.json"
		case strings.HasSuffix(r.URL.Path, "/events"):
			clitest.EmptyLists(w, r)
			return
		default:
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("limit") != "500" {
			t.Errorf("list %s without limit=500", r.URL)
		}
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	return clitest.WriteKubeconfig(t, srv.URL)
}

func kdyn(t *testing.T, kubeconfig string, args ...string) clitest.Result {
	t.Helper()
	return clitest.Run(root.Main, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "events"}, args...)...)
}

// TestLikeKubectl: the table, json and yaml outputs are kubectl's, byte for
// byte, from the same server answers.
func TestLikeKubectl(t *testing.T) {
	defer events.SetNow(captured)()
	kc := server(t)
	for _, tc := range []struct {
		args    []string
		kubectl string
	}{
		{[]string{"-n", "evt"}, "kubectl-table.txt"},
		{[]string{"-A"}, "kubectl-table-all.txt"},
		{[]string{"-n", "evt", "-o", "json"}, "kubectl-list.json.txt"},
		{[]string{"-n", "evt", "-o", "yaml"}, "kubectl-list.yaml.txt"},
		{[]string{"-n", "evt", "--for", "pod/web", "--types=warning"}, "kubectl-for-pod-web-warning.txt"},
		{[]string{"-n", "evt", "--no-headers"}, "kubectl-no-headers.txt"},
		{[]string{"-n", "evt", "-o", "json", "--show-managed-fields"}, "kubectl-managed.json.txt"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := kdyn(t, kc, tc.args...)
			if r.Code != 0 || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tc.kubectl))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), r.Stdout); diff != "" {
				t.Fatalf("kdyn events %s differs from kubectl's (-kubectl +kdyn):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}

func TestJSONL(t *testing.T) {
	defer events.SetNow(captured)()
	r := kdyn(t, server(t), "-n", "evt", "-o", "jsonl", "--types", "Warning")
	if r.Code != 0 {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	clitest.AssertGolden(t, "jsonl.golden", r.Stdout)
}

func TestNoEventsAndErrors(t *testing.T) {
	kc := server(t)
	for _, tc := range []struct {
		args           []string
		code           int
		stderr, stdout string
	}{
		{[]string{"-n", "other"}, 0, "No events found in other namespace.\n", ""},
		{[]string{"-n", "other", "-o", "json"}, 0, "No events found in other namespace.\n", ""},
		{[]string{"-n", "evt", "--for", "pod/nope"}, 0, "No events found in evt namespace.\n", ""},
		{[]string{"--for", "web"}, 2, "error: --for must be in resource/name form\n", ""},
		{[]string{"--for", "pod/a/b"}, 2, "error: arguments in resource/name form may not have more than one slash\n", ""},
		{[]string{"--types", "Error"}, 2, "error: valid --types are Normal or Warning\n", ""},
		{[]string{"-o", "wide"}, 2, "error: unable to match a printer suitable for the output format \"wide\", allowed formats are: json,jsonl,yaml\n", ""},
		{[]string{"web"}, 2, "error: unknown command \"web\" for \"kdyn events\"\n", ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := kdyn(t, kc, append(tc.args, "--exit-codes")...)
			if r.Code != tc.code || r.Stderr != tc.stderr || r.Stdout != tc.stdout {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", r.Code, r.Stdout, r.Stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestHelpAndCompletion(t *testing.T) {
	kc := server(t)
	r := clitest.Run(root.Main, "events", "--help")
	for _, want := range []string{"kdyn events --for pod/", "--types", "-w, --watch", "-A, --all-namespaces", "LAST SEEN"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("events --help lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-o", ""}, []string{"json", "yaml", "jsonl"}},
		{[]string{"--types", "Normal,"}, []string{"Normal,Warning"}},
		{[]string{"--types", "w"}, []string{"Warning"}},
		{[]string{"--for", "deployme"}, []string{"deployment/", "deployments/", "deployments.apps/"}},
	} {
		r := clitest.Run(root.Main, append([]string{"__complete", "--kubeconfig", kc, "--cache-dir", t.TempDir(), "events"}, tc.args...)...)
		got := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		got = got[:len(got)-1] // the directive line
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("complete events %v (-want +got):\n%s\nstderr %s", tc.args, diff, r.Stderr)
		}
	}
}
