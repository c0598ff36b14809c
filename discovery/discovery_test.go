package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/internal/holdhttp"
	"github.com/kdyn/kdyn/rest"
)

var metricsGV = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

// legacyGroupVersionCount is N in "N+2 requests": the group-versions the
// captured legacy documents list, the core group's included.
func legacyGroupVersionCount(t *testing.T) int {
	t.Helper()
	var core metav1.APIVersions
	var groups metav1.APIGroupList
	for file, into := range map[string]any{"api.json": &core, "apis.json": &groups} {
		b, err := os.ReadFile(filepath.Join("testdata", "legacy", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	n := len(core.Versions)
	for _, g := range groups.Groups {
		n += len(g.Versions)
	}
	return n
}

func findResource(t *testing.T, s *Snapshot, group, version, name string) *Resource {
	t.Helper()
	_, v := s.find(schema.GroupVersion{Group: group, Version: version})
	if v == nil {
		t.Fatalf("group-version %s/%s not in snapshot", group, version)
	}
	for i := range v.Resources {
		if v.Resources[i].Name == name {
			return &v.Resources[i]
		}
	}
	t.Fatalf("resource %s not in %s/%s", name, group, version)
	return nil
}

func TestColdDiscoveryRequestCounts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		aggregated bool
	}{{"aggregated", true}, {"legacy", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, tc.aggregated)
			c, ct := newTestClient(t, f, Options{})
			s, err := c.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := 2
			if !tc.aggregated {
				want = legacyGroupVersionCount(t) + 2
			}
			if got := int(ct.n.Load()); got != want {
				t.Fatalf("cold %s discovery made %d requests, want %d", tc.name, got, want)
			}
			if s.Aggregated != tc.aggregated {
				t.Fatalf("Aggregated = %v", s.Aggregated)
			}
			// A memory-cached client asks nothing more.
			if _, _, err := c.ServerGroupsAndResources(context.Background()); !IsGroupDiscoveryFailed(err) {
				t.Fatalf("ServerGroupsAndResources err = %v, want the metrics group failure", err)
			}
			if got := int(ct.n.Load()); got != want {
				t.Fatalf("memory-cached call made %d more requests", got-want)
			}
		})
	}
}

func TestEverythingDiscoveryCarriesIsKept(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		t.Run(fmt.Sprint("aggregated=", aggregated), func(t *testing.T) {
			c, _ := newTestClient(t, newFakeServer(t, aggregated), Options{})
			s, err := c.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			w := findResource(t, s, "example.com", "v1", "widgets")
			want := metav1.APIResource{Name: "widgets", SingularName: "widget", Namespaced: true, Group: "example.com", Version: "v1",
				Kind: "Widget", Verbs: metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
				ShortNames: []string{"wd"}, Categories: []string{"all", "kdyn"}}
			if diff := cmp.Diff(want, w.APIResource, cmpIgnoreVerbOrder, cmpIgnoreHash); diff != "" {
				t.Errorf("widgets (-want +got):\n%s", diff)
			}
			subs := map[string]Subresource{}
			for _, sr := range w.Subresources {
				subs[sr.Name] = sr
			}
			if sr := subs["scale"]; sr.Kind != (schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}) || len(sr.Verbs) == 0 {
				t.Errorf("scale subresource = %+v", sr)
			}
			if sr := subs["status"]; sr.Kind.Kind != "Widget" {
				t.Errorf("status subresource = %+v", sr)
			}
			deploy := findResource(t, s, "apps", "v1", "deployments")
			if !deploy.HasVerbs("list", "watch", "delete") || deploy.ShortNames[0] != "deploy" || !deploy.HasCategory("all") {
				t.Errorf("deployments = %+v", deploy.APIResource)
			}
			ns := findResource(t, s, "", "v1", "namespaces")
			if ns.Namespaced || ns.Kind != "Namespace" {
				t.Errorf("namespaces = %+v", ns.APIResource)
			}
			if len(s.Groups) == 0 || s.Groups[0].Name != "" {
				t.Fatalf("core group is not first")
			}
		})
	}
}

var cmpIgnoreVerbOrder = cmp.Transformer("sortVerbs", func(v metav1.Verbs) map[string]bool {
	m := map[string]bool{}
	for _, s := range v {
		m[s] = true
	}
	return m
})

var cmpIgnoreHash = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".StorageVersionHash" }, cmp.Ignore())

func TestPartialFailureIsTypedAndWrapped(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		t.Run(fmt.Sprint("aggregated=", aggregated), func(t *testing.T) {
			c, _ := newTestClient(t, newFakeServer(t, aggregated), Options{})
			lists, err := c.ServerPreferredResources(context.Background())
			if len(lists) < 20 {
				t.Fatalf("only %d lists came back beside the failure", len(lists))
			}
			wrapped := fmt.Errorf("while starting: %w", err)
			var gdf *GroupDiscoveryFailedError
			if !errors.As(wrapped, &gdf) {
				t.Fatalf("errors.As failed on %v", wrapped)
			}
			if diff := cmp.Diff([]schema.GroupVersion{metricsGV}, gdf.GroupVersions()); diff != "" {
				t.Fatalf("failed groups (-want +got):\n%s", diff)
			}
			if aggregated && !errors.Is(wrapped, ErrStale) {
				t.Errorf("stale group's cause is not ErrStale: %v", err)
			}
			if !strings.Contains(err.Error(), "metrics.k8s.io/v1beta1") {
				t.Errorf("Error() does not name the group-version: %s", err)
			}
			for _, l := range lists {
				if strings.HasPrefix(l.GroupVersion, "metrics.k8s.io") {
					t.Errorf("failed group %s is in the results", l.GroupVersion)
				}
			}
		})
	}
}

func TestGroupDiscoveryFailedErrorSorted(t *testing.T) {
	e := &GroupDiscoveryFailedError{Groups: map[schema.GroupVersion]error{
		{Group: "z.io", Version: "v1"}:                errors.New("zzz"),
		{Group: "a.io", Version: "v2"}:                errors.New("a2"),
		{Group: "a.io", Version: "v1"}:                errors.New("a1"),
		{Group: "metrics.k8s.io", Version: "v1beta1"}: ErrStale,
	}}
	want := "discovery: unable to retrieve the complete list of server APIs: a.io/v1: a1; a.io/v2: a2; metrics.k8s.io/v1beta1: " + ErrStale.Error() + "; z.io/v1: zzz"
	if e.Error() != want {
		t.Fatalf("Error() =\n%s\nwant\n%s", e.Error(), want)
	}
	if len(e.Unwrap()) != 4 || e.Unwrap()[0].Error() != "a1" {
		t.Fatalf("Unwrap() = %v", e.Unwrap())
	}
}

func TestPreferredVersions(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		t.Run(fmt.Sprint("aggregated=", aggregated), func(t *testing.T) {
			c, _ := newTestClient(t, newFakeServer(t, aggregated), Options{})
			groups, err := c.ServerGroups(context.Background())
			if !IsGroupDiscoveryFailed(err) {
				t.Fatalf("err = %v", err)
			}
			pref := map[string]string{}
			for _, g := range groups.Groups {
				pref[g.Name] = g.PreferredVersion.Version
			}
			for g, v := range map[string]string{"": "v1", "autoscaling": "v2", "other.io": "v2", "example.com": "v1"} {
				if pref[g] != v {
					t.Errorf("preferred version of %q = %q, want %q", g, pref[g], v)
				}
			}
			if _, ok := pref["metrics.k8s.io"]; ok {
				t.Error("the failed metrics group is listed")
			}
			lists, _ := c.ServerPreferredNamespacedResources(context.Background())
			for _, l := range lists {
				for _, r := range l.APIResources {
					if !r.Namespaced || strings.Contains(r.Name, "/") {
						t.Errorf("%s %s: namespaced=%v", l.GroupVersion, r.Name, r.Namespaced)
					}
				}
			}
			all, _ := c.ServerPreferredResources(context.Background())
			seen := map[string]string{}
			for _, l := range all {
				for _, r := range l.APIResources {
					gv, _ := schema.ParseGroupVersion(l.GroupVersion)
					key := gv.Group + "/" + r.Name
					if prev, dup := seen[key]; dup {
						t.Errorf("%s listed twice (%s and %s)", key, prev, l.GroupVersion)
					}
					seen[key] = l.GroupVersion
				}
			}
			if seen["autoscaling/horizontalpodautoscalers"] != "autoscaling/v2" {
				t.Errorf("hpa preferred at %q", seen["autoscaling/horizontalpodautoscalers"])
			}
		})
	}
}

func TestStaleVersionNeverPreferred(t *testing.T) {
	f := newFakeServer(t, true)
	f.override["/apis"] = `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
	 {"metadata":{"name":"x.io"},"versions":[
	   {"version":"v2","freshness":"Stale"},
	   {"version":"v1","resources":[{"resource":"things","responseKind":{"group":"x.io","version":"v1","kind":"Thing"},"scope":"Namespaced","singularResource":"thing","verbs":["get","list"]}]}]}]}`
	c, _ := newTestClient(t, f, Options{})
	s, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var x *Group
	for i := range s.Groups {
		if s.Groups[i].Name == "x.io" {
			x = &s.Groups[i]
		}
	}
	if x == nil || x.PreferredVersion != "v1" || len(x.Versions) != 1 {
		t.Fatalf("x.io = %+v", x)
	}
	if s.Failed == nil || s.Failed.Groups[schema.GroupVersion{Group: "x.io", Version: "v2"}] != ErrStale {
		t.Fatalf("Failed = %v", s.Failed)
	}
}

func TestInvalidateRevalidatesWithETags(t *testing.T) {
	f := newFakeServer(t, true)
	c, ct := newTestClient(t, f, Options{})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Invalidate()
	f.reset()
	before := ct.n.Load()
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ct.n.Load() - before; got != 2 {
		t.Fatalf("revalidation made %d requests, want 2", got)
	}
	if f.notMod.Load() != 2 {
		t.Fatalf("%d answers were 304, want 2", f.notMod.Load())
	}
	if _, err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.notMod.Load() != 4 {
		t.Fatalf("Refresh did not revalidate conditionally: %d 304s", f.notMod.Load())
	}
}

func TestRefreshSeesNewGroup(t *testing.T) {
	f := newFakeServer(t, true)
	c, _ := newTestClient(t, f, Options{})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.addNewGroup(t)
	s, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := findResource(t, s, "new.io", "v1", "news"); r.Kind != "New" || r.Namespaced {
		t.Fatalf("news = %+v", r)
	}
}

func TestDiskCache(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		t.Run(fmt.Sprint("aggregated=", aggregated), func(t *testing.T) {
			f := newFakeServer(t, aggregated)
			dir := filepath.Join(t.TempDir(), "cache", "host")
			now := time.Now()
			clock := func() time.Time { return now }
			c1, ct1 := newTestClient(t, f, Options{CacheDir: dir, now: clock})
			s1, err := c1.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if ct1.n.Load() == 0 {
				t.Fatal("cold start made no requests")
			}
			fi, err := os.Stat(dir)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("cache dir mode = %v, %v", fi.Mode().Perm(), err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) < 2 {
				t.Fatalf("cache holds %d files", len(entries))
			}
			for _, e := range entries {
				info, _ := e.Info()
				if info.Mode().Perm() != 0o600 {
					t.Errorf("%s mode = %v, want 0600", e.Name(), info.Mode().Perm())
				}
				if strings.HasPrefix(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}

			// Warm start within the TTL: zero requests, except that a legacy
			// server is asked again for the group-version that failed (its
			// failure is not cached).
			now = now.Add(5 * time.Hour)
			f.reset()
			c2, ct2 := newTestClient(t, f, Options{CacheDir: dir, now: clock})
			s2, err := c2.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			wantWarm := int32(0)
			if !aggregated {
				wantWarm = 1
				if f.count("/apis/metrics.k8s.io/v1beta1") != 1 {
					t.Fatalf("warm legacy start asked for %v", f.counts)
				}
			}
			if ct2.n.Load() != wantWarm {
				t.Fatalf("warm start within the TTL made %d requests, want %d", ct2.n.Load(), wantWarm)
			}
			if diff := cmp.Diff(s1.ResourceLists(), s2.ResourceLists()); diff != "" {
				t.Fatalf("disk-cached snapshot differs:\n%s", diff)
			}

			// Past the TTL: revalidated with ETags; unchanged documents are 304s.
			now = now.Add(2 * time.Hour)
			f.reset()
			c3, ct3 := newTestClient(t, f, Options{CacheDir: dir, now: clock})
			if _, err := c3.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ct3.n.Load() == 0 || f.notMod.Load() < 2 {
				t.Fatalf("after the TTL: %d requests, %d 304s", ct3.n.Load(), f.notMod.Load())
			}
			// The 304 renewed the TTL: the next start is warm again.
			c4, ct4 := newTestClient(t, f, Options{CacheDir: dir, now: clock})
			if _, err := c4.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
			if ct4.n.Load() != wantWarm {
				t.Fatalf("start after revalidation made %d requests", ct4.n.Load())
			}
		})
	}
}

func TestDiskCacheCorruptFileIsAMiss(t *testing.T) {
	f := newFakeServer(t, true)
	dir := t.TempDir()
	c1, _ := newTestClient(t, f, Options{CacheDir: dir})
	if _, err := c1.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	file := c1.docs.fileFor("/apis")
	good, _ := os.ReadFile(file)
	for name, content := range map[string][]byte{
		"truncated": good[:len(good)/2],
		"garbage":   []byte("\x00\x01not json"),
		"empty":     nil,
		"wrong doc": []byte(`{"path":"/api","body":{}}`),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(file, content, 0o600); err != nil {
				t.Fatal(err)
			}
			c2, ct := newTestClient(t, f, Options{CacheDir: dir})
			s, err := c2.Snapshot(context.Background())
			if err != nil {
				t.Fatalf("a corrupt cache file became an error: %v", err)
			}
			if ct.n.Load() != 1 {
				t.Fatalf("%d requests, want 1 (the corrupt /apis only)", ct.n.Load())
			}
			findResource(t, s, "apps", "v1", "deployments")
			fixed, _ := os.ReadFile(file)
			var d document
			if json.Unmarshal(fixed, &d) != nil || d.Path != "/apis" {
				t.Fatal("the corrupt file was not overwritten")
			}
		})
	}
}

func TestUnsafeCacheDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	f := newFakeServer(t, true)
	core, logs := observer.New(zapcore.InfoLevel)
	c, _ := newTestClient(t, f, Options{CacheDir: dir, Logger: zapr.NewLogger(zap.New(core))})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("wrote %d files into a world-writable directory", len(entries))
	}
	if logs.FilterMessage("discovery disk cache disabled").Len() != 1 {
		t.Fatalf("no warning logged: %v", logs.All())
	}
}

func TestLegacyParallelismBound(t *testing.T) {
	f := newFakeServer(t, false)
	f.delay = 5 * time.Millisecond
	c, _ := newTestClient(t, f, Options{Parallelism: 3})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if peak := f.peak.Load(); peak > 3 || peak < 2 {
		t.Fatalf("peak in flight = %d, want between 2 and the bound 3", peak)
	}
}

// TestLegacyCancelStopsFetching: once the context is cancelled, the legacy
// group-versions still waiting for a slot are not fetched; each of them is
// reported as failed with the context's error, beside the one in flight.
func TestLegacyCancelStopsFetching(t *testing.T) {
	f := newFakeServer(t, false)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var legacy atomic.Int32
	cfg := &rest.Config{Host: f.URL, QPS: -1, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path != "/api" && r.URL.Path != "/apis" && strings.Count(r.URL.Path, "/") >= 2 && legacy.Add(1) == 1 {
				cancel() // the first group-version fetch: cancel while the others wait
			}
			return rt.RoundTrip(r)
		})
	}}
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(rc, Options{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Snapshot(ctx)
	if err == nil && (s.Failed == nil || len(s.Failed.Groups) != legacyGroupVersionCount(t)) {
		t.Fatalf("Snapshot after cancel = %+v, want every legacy group-version failed", s)
	}
	if err == nil {
		for gv, gerr := range s.Failed.Groups {
			if !errors.Is(gerr, context.Canceled) {
				t.Errorf("%s failed with %v, want context.Canceled", gv, gerr)
			}
		}
	} else if !errors.Is(err, context.Canceled) {
		t.Fatalf("Snapshot = %v, want context.Canceled", err)
	}
	if n := legacy.Load(); n != 1 {
		t.Errorf("%d group-version requests were sent after the cancel's, want only the one in flight", n-1)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRefreshGroupLegacyFetchesOnlyThatGroup(t *testing.T) {
	f := newFakeServer(t, false)
	c, _ := newTestClient(t, f, Options{})
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.override["/apis/example.com"] = `{"kind":"APIGroup","apiVersion":"v1","name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}`
	f.reset()
	s, err := c.RefreshGroup(context.Background(), "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if f.total.Load() != 2 || f.count("/apis/example.com") != 1 || f.count("/apis/example.com/v1") != 1 {
		t.Fatalf("RefreshGroup made %d requests: %v", f.total.Load(), f.counts)
	}
	g, _ := s.find(schema.GroupVersion{Group: "example.com", Version: "v1"})
	if g == nil || len(g.Versions) != 1 {
		t.Fatalf("example.com after refresh = %+v", g)
	}
	findResource(t, s, "apps", "v1", "deployments") // the rest is kept
	if s.Failed == nil || s.Failed.Groups[metricsGV] == nil {
		t.Fatal("other groups' failures were dropped")
	}
}

func TestServerResourcesForGroupVersion(t *testing.T) {
	f := newFakeServer(t, true)
	c, ct := newTestClient(t, f, Options{})
	l, err := c.ServerResourcesForGroupVersion(context.Background(), "apps/v1")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range l.APIResources {
		names[r.Name] = true
	}
	if !names["deployments"] || !names["deployments/scale"] || !names["deployments/status"] {
		t.Fatalf("apps/v1 resources: %v", names)
	}
	n := ct.n.Load()
	// Not in the aggregated snapshot: asked of the server directly.
	f.override["/apis/extra.io/v1"] = `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"extra.io/v1","resources":[{"name":"extras","singularName":"extra","namespaced":false,"kind":"Extra","verbs":["get"]}]}`
	l, err = c.ServerResourcesForGroupVersion(context.Background(), "extra.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.APIResources) != 1 || ct.n.Load() != n+1 {
		t.Fatalf("extra.io/v1: %+v after %d requests", l, ct.n.Load()-n)
	}
	if _, err := c.ServerResourcesForGroupVersion(context.Background(), "apps/"); err == nil {
		t.Fatal("a group-version without a version was accepted")
	}
}

func TestDocumentSizeBound(t *testing.T) {
	f := newFakeServer(t, true)
	c, _ := newTestClient(t, f, Options{MaxDocumentBytes: 1024})
	_, err := c.Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want a size-limit error", err)
	}
}

func TestServerVersion(t *testing.T) {
	f := newFakeServer(t, true)
	f.override["/version"] = `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`
	c, ct := newTestClient(t, f, Options{})
	for i := 0; i < 2; i++ {
		v, err := c.ServerVersion(context.Background())
		if err != nil || v.GitVersion != "v1.37.2" {
			t.Fatalf("version = %+v, %v", v, err)
		}
	}
	if ct.n.Load() != 1 {
		t.Fatalf("%d requests, want 1", ct.n.Load())
	}
}

func TestOpenAPIV3(t *testing.T) {
	f := newFakeServer(t, true)
	f.override["/openapi/v3"] = `{"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=ABC"},"apis/example.com/v1":{"serverRelativeURL":"/openapi/v3/apis/example.com/v1?hash=DEF"}}}`
	f.override["/openapi/v3/apis/example.com/v1"] = `{"openapi":"3.0.0","components":{"schemas":{"com.example.v1.Widget":{"type":"object"}}}}`
	dir := t.TempDir()
	c, _ := newTestClient(t, f, Options{CacheDir: dir})
	idx, err := c.OpenAPIV3Index(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"api/v1", "apis/example.com/v1"}, idx.GroupVersionPaths()); diff != "" {
		t.Fatal(diff)
	}
	for i := 0; i < 2; i++ {
		doc, err := c.OpenAPIV3Document(context.Background(), PathForGroupVersion("example.com", "v1"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "com.example.v1.Widget") {
			t.Fatalf("doc = %s", doc)
		}
	}
	if got := f.count("/openapi/v3/apis/example.com/v1"); got != 1 {
		t.Fatalf("document fetched %d times, want 1 (cached by hash)", got)
	}
	if _, err := c.OpenAPIV3Document(context.Background(), "apis/none/v1"); err == nil {
		t.Fatal("missing path accepted")
	}
}

func TestMarkStaleRevalidatesNextStart(t *testing.T) {
	f := newFakeServer(t, true)
	dir := t.TempDir()
	c1, _ := newTestClient(t, f, Options{CacheDir: dir})
	if _, err := c1.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	c1.MarkStale()
	f.reset()
	c2, ct := newTestClient(t, f, Options{CacheDir: dir})
	if _, err := c2.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ct.n.Load() != 2 || f.notMod.Load() != 2 {
		t.Fatalf("after MarkStale: %d requests, %d 304s; want 2 conditional requests", ct.n.Load(), f.notMod.Load())
	}
}

// An Invalidate while a load is in flight is not undone by that load: what
// it fetched before the Invalidate is returned to its caller but not
// cached, and the next call asks the server again.
func TestInvalidateDuringLoadIsNotLost(t *testing.T) {
	f := newFakeServer(t, true)
	g := holdhttp.NewFirst("/apis")
	c := newHeldClient(t, f, g)
	done := make(chan error, 1)
	go func() {
		_, err := c.Snapshot(context.Background())
		done <- err
	}()
	<-g.Held()
	c.Invalidate()
	f.addNewGroup(t)
	// A caller after the Invalidate does not join the load begun before it.
	s, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findResource(t, s, "new.io", "v1", "news")
	g.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The older load ended last; the cache still holds the newer answer.
	s, err = c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findResource(t, s, "new.io", "v1", "news")
}

// A first load still in flight when a Refresh ends does not replace the
// Refresh's newer snapshot when it ends after it.
func TestLoadEndingAfterRefreshKeepsRefresh(t *testing.T) {
	f := newFakeServer(t, true)
	g := holdhttp.NewFirst("/apis")
	c := newHeldClient(t, f, g)
	defer g.Release()
	done := make(chan *Snapshot, 1)
	go func() {
		s, err := c.Snapshot(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	<-g.Held()
	f.addNewGroup(t)
	s, err := c.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findResource(t, s, "new.io", "v1", "news")
	g.Release()
	if s := <-done; s != nil {
		// The older load's caller gets the newer snapshot too.
		findResource(t, s, "new.io", "v1", "news")
	}
	s, err = c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	findResource(t, s, "new.io", "v1", "news")
}

// addNewGroup makes the server's /apis list one more group, new.io/v1
// with the cluster-scoped resource news.
func (f *fakeServer) addNewGroup(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("testdata/aggregated/apis.json")
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	list["items"] = append(list["items"].([]any), map[string]any{"metadata": map[string]any{"name": "new.io"}, "versions": []any{map[string]any{"version": "v1",
		"resources": []any{map[string]any{"resource": "news", "responseKind": map[string]any{"group": "new.io", "version": "v1", "kind": "New"}, "scope": "Cluster", "singularResource": "new", "verbs": []any{"get"}}}}}})
	nb, _ := json.Marshal(list)
	f.mu.Lock()
	f.override["/apis"] = string(nb)
	f.mu.Unlock()
}

// A RefreshGroup after an Invalidate does not join a RefreshGroup begun
// before it: its answer is not built from the snapshot the Invalidate
// dropped.
func TestRefreshGroupAfterInvalidateDoesNotJoinOlderOne(t *testing.T) {
	f := newFakeServer(t, true)
	h := holdhttp.NewFirstArmedLater("/apis")
	c := newHeldClient(t, f, h)
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Arm()
	defer h.Release()
	done := make(chan error, 1)
	go func() {
		_, err := c.RefreshGroup(context.Background(), "metrics.k8s.io")
		done <- err
	}()
	<-h.Held()
	c.Invalidate()
	f.addNewGroup(t)
	if s, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		findResource(t, s, "new.io", "v1", "news")
	}
	got := make(chan *Snapshot, 1)
	go func() {
		s, err := c.RefreshGroup(context.Background(), "metrics.k8s.io")
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	var s *Snapshot
	select {
	case s = <-got:
	case <-time.After(200 * time.Millisecond):
		// Joined the older RefreshGroup: its answer comes once that ends.
		h.Release()
		s = <-got
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s != nil {
		findResource(t, s, "new.io", "v1", "news")
	}
}

// Invalidate does not wait for a GET /version in flight, and that answer,
// begun before it, is not cached after it.
func TestInvalidateDoesNotWaitForServerVersion(t *testing.T) {
	f := newFakeServer(t, true)
	f.override["/version"] = `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`
	g := holdhttp.NewFirst("/version")
	c := newHeldClient(t, f, g)
	defer g.Release()
	done := make(chan error, 1)
	go func() {
		_, err := c.ServerVersion(context.Background())
		done <- err
	}()
	<-g.Held()
	invalidated := make(chan struct{})
	go func() {
		c.Invalidate()
		close(invalidated)
	}()
	select {
	case <-invalidated:
	case <-time.After(5 * time.Second):
		t.Fatal("Invalidate waited for the GET /version in flight")
	}
	g.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	before := f.count("/version")
	if _, err := c.ServerVersion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.count("/version") != before+1 {
		t.Fatal("the answer begun before the Invalidate was cached after it")
	}
}

// newHeldClient returns a Client of f whose requests go through h.
func newHeldClient(t *testing.T, f *fakeServer, h *holdhttp.First) *Client {
	t.Helper()
	rc, err := rest.NewForConfig(&rest.Config{Host: f.URL, QPS: -1, WrapTransport: h.Wrap})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(rc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
