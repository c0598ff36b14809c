package get_test

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// TestFailIfEmptyExitCode: --fail-if-empty on an empty result exits 1, like
// every failure without --exit-codes, and 3 with it, for get TYPE and for
// get all-resources (which fails when no type has any object).
func TestFailIfEmptyExitCode(t *testing.T) {
	srv := clitest.APIServer(t, clitest.EmptyLists)
	kc := clitest.WriteKubeconfig(t, srv.URL)
	cache := t.TempDir()
	for _, tc := range []struct {
		args         []string
		want         int
		nothingFound bool // stderr says "No resources found"
	}{
		{[]string{"get", "cm", "--fail-if-empty"}, cli.ExitGeneric, true},
		{[]string{"--exit-codes", "get", "cm", "--fail-if-empty"}, cli.ExitNotFound, true},
		{[]string{"get", "cm"}, cli.ExitOK, true},
		{[]string{"--exit-codes", "get", "all-resources", "--fail-if-empty"}, cli.ExitNotFound, false},
		{[]string{"get", "--all-types", "-A", "--fail-if-empty"}, cli.ExitGeneric, false},
		{[]string{"get", "all-resources"}, cli.ExitOK, false},
	} {
		r := clitest.Run(root.Main, append([]string{"--kubeconfig", kc, "--cache-dir", cache}, tc.args...)...)
		if r.Code != tc.want {
			t.Errorf("kdyn %v: exit code %d, want %d (stderr %q)", tc.args, r.Code, tc.want, r.Stderr)
		}
		if tc.nothingFound && !strings.Contains(r.Stderr, "No resources found") {
			t.Errorf("kdyn %v: stderr %q does not say that nothing was found", tc.args, r.Stderr)
		}
	}
}

// TestGetSubresourceTable: get --subresource with the default output prints
// the server's Table for the subresource, as kubectl does, instead of
// failing with "no object printer for this output".
func TestGetSubresourceTable(t *testing.T) {
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/apps/v1/namespaces/default/deployments/web/scale" || !strings.Contains(r.Header.Get("Accept"), "as=Table") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},` +
			`"columnDefinitions":[{"name":"Name","type":"string"},{"name":"Desired","type":"integer"}],"rows":[` +
			`{"cells":["web",2],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"default"}}}]}`))
	})
	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "get", "deploy", "web", "--subresource=scale")
	if want := "NAME   DESIRED\nweb    2\n"; r.Code != 0 || r.Stdout != want {
		t.Errorf("get deploy web --subresource=scale: exit %d, stdout %q, stderr %q; want stdout %q", r.Code, r.Stdout, r.Stderr, want)
	}
}

// TestGetSubresourceNeedsNames: --subresource on a list is refused, as
// kubectl refuses it, instead of listing the main resource.
func TestGetSubresourceNeedsNames(t *testing.T) {
	srv := clitest.APIServer(t, clitest.EmptyLists)
	kc := clitest.WriteKubeconfig(t, srv.URL)
	for _, args := range [][]string{
		{"get", "deploy", "--subresource=status"},
		{"get", "all-resources", "--subresource=status"},
	} {
		r := clitest.Run(root.Main, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "--exit-codes"}, args...)...)
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "named objects") {
			t.Errorf("kdyn %v: exit %d, stderr %q; want a usage error asking for names", args, r.Code, r.Stderr)
		}
	}
}

// TestAllResourcesReportsDiscoveryFailureAlone: when every type could be
// listed but discovery failed for a group, the report says so instead of
// "Not listed (0 types)".
func TestAllResourcesReportsDiscoveryFailureAlone(t *testing.T) {
	srv := clitest.APIServer(t, clitest.EmptyLists)
	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "get", "all-resources")
	if strings.Contains(r.Stderr, "(0 types)") || !strings.Contains(r.Stderr, "discovery failed for some groups") || !strings.Contains(r.Stderr, "metrics.k8s.io") {
		t.Fatalf("stderr %q: want the failed group reported without a count of 0 types", r.Stderr)
	}
}

// TestAllResourcesParallelBound: get all-resources probes the listable
// types at most --parallel at a time.
func TestAllResourcesParallelBound(t *testing.T) {
	var probes clitest.Concurrency
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") == "1" {
			probes.Hold(5 * time.Millisecond)
		}
		clitest.EmptyLists(w, r)
	})
	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "get", "all-resources", "-A", "--parallel=3")
	if r.Code != 0 || probes.Total() < 10 {
		t.Fatalf("get all-resources: exit %d after %d probes; stderr %q", r.Code, probes.Total(), r.Stderr)
	}
	if p := probes.Peak(); p > 3 || p < 2 {
		t.Errorf("peak probes in flight = %d, want between 2 and the bound 3", p)
	}
}

// statusHandler answers every object request with the Status of code.
func statusHandler(code int, reason string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"` + reason + `","code":` + strconv.Itoa(code) +
			`,"message":"configmaps \"x\" is ` + strings.ToLower(reason) + `","details":{"name":"x","kind":"configmaps"}}`))
	}
}

// With --exit-codes, get exits with the code of the object's failure —
// 3 for NotFound, 5 for Forbidden — as the README's table says; without,
// 1, as kubectl does.
func TestGetExitCodesNameTheFailure(t *testing.T) {
	for _, tc := range []struct {
		status    int
		reason    string
		exitCodes bool
		want      int
	}{
		{http.StatusNotFound, "NotFound", true, cli.ExitNotFound},
		{http.StatusForbidden, "Forbidden", true, cli.ExitForbidden},
		{http.StatusNotFound, "NotFound", false, cli.ExitGeneric},
	} {
		srv := clitest.APIServer(t, statusHandler(tc.status, tc.reason))
		args := []string{"--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir()}
		if tc.exitCodes {
			args = append(args, "--exit-codes")
		}
		r := clitest.Run(root.Main, append(args, "get", "cm", "x")...)
		if r.Code != tc.want {
			t.Errorf("%s, --exit-codes %v: exit %d, want %d (stderr %q)", tc.reason, tc.exitCodes, r.Code, tc.want, r.Stderr)
		}
	}
}

// An empty list in -o json (and the other object outputs) prints the
// empty List and nothing on stderr, as kubectl does; the table says "No
// resources found".
func TestEmptyListObjectOutputsAreSilent(t *testing.T) {
	srv := clitest.APIServer(t, clitest.EmptyLists)
	kc := clitest.WriteKubeconfig(t, srv.URL)
	for _, o := range []string{"json", "yaml", "name", "go-template={{len .items}}", "jsonpath={.items}"} {
		r := clitest.Run(root.Main, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "get", "cm", "-o", o)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("-o %s: exit %d, stderr %q; want 0 and nothing", o, r.Code, r.Stderr)
		}
	}
	r := clitest.Run(root.Main, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "get", "cm")
	if !strings.Contains(r.Stderr, "No resources found") {
		t.Errorf("table: stderr %q", r.Stderr)
	}
}

// A server port nobody listens on fails with kubectl's words and hint,
// exit 1 (8 with --exit-codes); package rest does not retry a refused
// connection (TestRefusedConnectionIsNotRetried), so it fails at once.
func TestRefusedConnectionFailsFastWithTheHint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	kc := clitest.WriteKubeconfig(t, "http://"+addr)
	for _, tc := range []struct {
		exitCodes bool
		want      int
	}{{false, cli.ExitGeneric}, {true, cli.ExitUnreachable}} {
		args := []string{"--kubeconfig", kc, "--cache-dir", t.TempDir()}
		if tc.exitCodes {
			args = append(args, "--exit-codes")
		}
		r := clitest.Run(root.Main, append(args, "get", "cm")...)
		want := "The connection to the server " + addr + " was refused - did you specify the right host or port?"
		if r.Code != tc.want || !strings.Contains(r.Stderr, want) {
			t.Errorf("exit %d, stderr %q; want %d and %q", r.Code, r.Stderr, tc.want, want)
		}
	}
}

// get --watch --request-timeout ends the watch then, without an error, as
// kubectl's does (the watch stream here never ends by itself).
func TestWatchEndsAtRequestTimeout(t *testing.T) {
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}]}`))
	})
	done := make(chan clitest.Result, 1)
	go func() {
		done <- clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(),
			"--request-timeout", "300ms", "get", "cm", "--watch", "-o", "name")
	}()
	select {
	case r := <-done:
		if r.Code != 0 || r.Stdout != "configmap/a\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("get --watch --request-timeout=300ms was still watching after a minute")
	}
}
