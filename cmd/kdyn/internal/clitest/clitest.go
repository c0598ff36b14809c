package clitest

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
)

// APIServer serves the captured aggregated discovery documents for /api and
// /apis and hands every other request to h.
func APIServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	docs := map[string][]byte{}
	for _, p := range []string{"api", "apis"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), "discovery", "testdata", "aggregated", p+".json"))
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

// EmptyLists answers every list with no items.
func EmptyLists(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept"), "as=Table") {
		_, _ = w.Write([]byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1"},"columnDefinitions":[{"name":"Name","type":"string"}],"rows":[]}`))
		return
	}
	_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`))
}

// WriteKubeconfig writes a kubeconfig for server (anonymous, plain http
// loopback) and returns its path.
func WriteKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster: {server: " + server +
		"}\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Result is one run of the kdyn command line.
type Result struct {
	Code           int    // the exit code
	Stdout, Stderr string // what it printed
}

// Run runs main, the command line's entry point (root.Main), with args,
// an empty standard input and its output captured.
func Run(main func(args []string, stdin io.Reader, stdout, stderr io.Writer) int, args ...string) Result {
	var out, errb LockedBuffer
	code := main(args, strings.NewReader(""), &out, &errb)
	return Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// repoRoot is the root of the kdyn module: the nearest directory above
// this file that holds a go.mod.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// LockedBuffer is a bytes.Buffer for kdyn's output streams: its logger
// writes to stderr from several goroutines (discovery fetches /api and
// /apis at once), with no lock of its own.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The -update flag may also be registered by a test file of a package that
// imports this one; register it only once and read it by name.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

// AssertGolden compares got with testdata/NAME, or rewrites the file
// with -update.
func AssertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// Res is a discovery resource: name (plural) and kind at group/version,
// with its verbs, short names and categories; its singular name is the
// kind in lower case.
func Res(group, version, name, kind string, namespaced bool, verbs []string, short, cats []string) discovery.Resource {
	singular := strings.ToLower(kind)
	return discovery.Resource{APIResource: metav1.APIResource{
		Name: name, SingularName: singular, Namespaced: namespaced, Group: group, Version: version, Kind: kind,
		Verbs: verbs, ShortNames: short, Categories: cats,
	}}
}

// AllVerbs are the verbs of a resource that supports every one.
var AllVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// FixtureSnapshot is a small discovery snapshot: the core group, apps at
// two versions (one resource only at the older one), a CRD group with
// categories, a resource without verbs, and a failed group-version.
func FixtureSnapshot() *discovery.Snapshot {
	return &discovery.Snapshot{
		Aggregated: true,
		Groups: []discovery.Group{
			{Name: "", PreferredVersion: "v1", Versions: []discovery.Version{{Version: "v1", Resources: []discovery.Resource{
				Res("", "v1", "pods", "Pod", true, AllVerbs, []string{"po"}, []string{"all"}),
				Res("", "v1", "bindings", "Binding", true, []string{"create"}, nil, nil),
				Res("", "v1", "configmaps", "ConfigMap", true, AllVerbs, []string{"cm"}, nil),
				Res("", "v1", "namespaces", "Namespace", false, []string{"create", "delete", "get", "list", "patch", "update", "watch"}, []string{"ns"}, nil),
				Res("", "v1", "nothing", "Nothing", true, nil, nil, nil),
			}}}},
			{Name: "apps", PreferredVersion: "v1", Versions: []discovery.Version{
				{Version: "v1", Resources: []discovery.Resource{
					Res("apps", "v1", "replicasets", "ReplicaSet", true, AllVerbs, []string{"rs"}, []string{"all"}),
					Res("apps", "v1", "deployments", "Deployment", true, AllVerbs, []string{"deploy"}, []string{"all"}),
				}},
				{Version: "v1beta1", Resources: []discovery.Resource{
					Res("apps", "v1beta1", "deployments", "Deployment", true, AllVerbs, []string{"deploy"}, []string{"all"}),
					Res("apps", "v1beta1", "legacythings", "LegacyThing", false, []string{"get", "list"}, nil, nil),
				}},
			}},
			{Name: "example.com", PreferredVersion: "v1", Versions: []discovery.Version{{Version: "v1", Resources: []discovery.Resource{
				Res("example.com", "v1", "widgets", "Widget", true, AllVerbs, []string{"wd"}, []string{"all", "toys"}),
				Res("example.com", "v1", "gadgets", "Gadget", false, []string{"get", "list", "watch"}, nil, []string{"toys"}),
			}}}},
		},
		Failed: &discovery.GroupDiscoveryFailedError{Groups: map[schema.GroupVersion]error{
			{Group: "metrics.k8s.io", Version: "v1beta1"}: discovery.ErrStale,
		}},
	}
}

// Obj is an object with only apiVersion, kind and name.
func Obj(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// Concurrency counts the requests a test server answers at once, for
// tests of a bound on requests in flight.
type Concurrency struct {
	inflight, peak, total atomic.Int32
}

// Hold counts one request as in flight for d, the time a slow server
// takes to answer it.
func (c *Concurrency) Hold(d time.Duration) {
	c.total.Add(1)
	n := c.inflight.Add(1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	time.Sleep(d)
	c.inflight.Add(-1)
}

// Peak is the most requests that were in flight at once.
func (c *Concurrency) Peak() int { return int(c.peak.Load()) }

// Total is the number of requests held.
func (c *Concurrency) Total() int { return int(c.total.Load()) }
