package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apiServer serves the captured aggregated discovery documents for /api and
// /apis and hands every other request to h.
func apiServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	docs := map[string][]byte{}
	for _, p := range []string{"api", "apis"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "discovery", "testdata", "aggregated", p+".json"))
		if err != nil {
			t.Fatal(err)
		}
		docs["/"+p] = b
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := docs[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
			_, _ = w.Write(b)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// emptyLists answers every list with no items.
func emptyLists(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept"), "as=Table") {
		_, _ = w.Write([]byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"columnDefinitions":[{"name":"Name","type":"string"}],"rows":[]}`))
		return
	}
	_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
}

// TestFailIfEmptyExitCode: --fail-if-empty on an empty result exits 1, like
// every failure without --exit-codes, and 3 with it, for get TYPE and for
// get all-resources (which fails when no type has any object).
func TestFailIfEmptyExitCode(t *testing.T) {
	srv := apiServer(t, emptyLists)
	kc := writeKubeconfig(t, srv.URL)
	cache := t.TempDir()
	for _, tc := range []struct {
		args         []string
		want         int
		nothingFound bool // stderr says "No resources found"
	}{
		{[]string{"get", "cm", "--fail-if-empty"}, exitGeneric, true},
		{[]string{"--exit-codes", "get", "cm", "--fail-if-empty"}, exitNotFound, true},
		{[]string{"get", "cm"}, exitOK, true},
		{[]string{"--exit-codes", "get", "all-resources", "--fail-if-empty"}, exitNotFound, false},
		{[]string{"get", "--all-types", "-A", "--fail-if-empty"}, exitGeneric, false},
		{[]string{"get", "all-resources"}, exitOK, false},
	} {
		r := runKdyn(append([]string{"--kubeconfig", kc, "--cache-dir", cache}, tc.args...)...)
		if r.code != tc.want {
			t.Errorf("kdyn %v: exit code %d, want %d (stderr %q)", tc.args, r.code, tc.want, r.stderr)
		}
		if tc.nothingFound && !strings.Contains(r.stderr, "No resources found") {
			t.Errorf("kdyn %v: stderr %q does not say that nothing was found", tc.args, r.stderr)
		}
	}
}

// TestAllResourcesWatch: get all-resources -w watches every listable type,
// the empty ones included, instead of listing once and exiting.
func TestAllResourcesWatch(t *testing.T) {
	srv := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			emptyLists(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/configmaps") {
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w1","namespace":"default","resourceVersion":"2"}}}` + "\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	printed := func(out string) bool { return strings.Contains(out, "configmap/w1") }
	r := runGetWatch(t, srv, &getOptions{output: "name", watch: true, chunkSize: 500, parallel: 8}, []string{"all-resources"}, printed)
	switch {
	case r.early:
		t.Fatalf("get all-resources -w returned %v before printing the watched ConfigMap; stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	case !printed(r.stdout):
		t.Fatalf("the watched ConfigMap was not printed; stdout %q, stderr %q", r.stdout, r.stderr)
	case r.err != nil:
		t.Errorf("get all-resources -w: %v", r.err)
	}
}

// TestGetSubresourceTable: get --subresource with the default output prints
// the server's Table for the subresource, as kubectl does, instead of
// failing with "no object printer for this output".
func TestGetSubresourceTable(t *testing.T) {
	srv := apiServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/apps/v1/namespaces/default/deployments/web/scale" || !strings.Contains(r.Header.Get("Accept"), "as=Table") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},` +
			`"columnDefinitions":[{"name":"Name","type":"string"},{"name":"Desired","type":"integer"}],"rows":[` +
			`{"cells":["web",2],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"default"}}}]}`))
	})
	r := runKdyn("--kubeconfig", writeKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "get", "deploy", "web", "--subresource=scale")
	if want := "NAME   DESIRED\nweb    2\n"; r.code != 0 || r.stdout != want {
		t.Errorf("get deploy web --subresource=scale: exit %d, stdout %q, stderr %q; want stdout %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestGetSubresourceNeedsNames: --subresource on a list is refused, as
// kubectl refuses it, instead of listing the main resource.
func TestGetSubresourceNeedsNames(t *testing.T) {
	srv := apiServer(t, emptyLists)
	kc := writeKubeconfig(t, srv.URL)
	for _, args := range [][]string{
		{"get", "deploy", "--subresource=status"},
		{"get", "all-resources", "--subresource=status"},
	} {
		r := runKdyn(append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "--exit-codes"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "named objects") {
			t.Errorf("kdyn %v: exit %d, stderr %q; want a usage error asking for names", args, r.code, r.stderr)
		}
	}
}

// TestAllResourcesReportsDiscoveryFailureAlone: when every type could be
// listed but discovery failed for a group, the report says so instead of
// "Not listed (0 types)".
func TestAllResourcesReportsDiscoveryFailureAlone(t *testing.T) {
	srv := apiServer(t, emptyLists)
	r := runKdyn("--kubeconfig", writeKubeconfig(t, srv.URL), "--cache-dir", t.TempDir(), "get", "all-resources")
	if strings.Contains(r.stderr, "(0 types)") || !strings.Contains(r.stderr, "discovery failed for some groups") || !strings.Contains(r.stderr, "metrics.k8s.io") {
		t.Fatalf("stderr %q: want the failed group reported without a count of 0 types", r.stderr)
	}
}
