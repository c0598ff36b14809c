package discovery

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
)

// fuzzMaxBody bounds one fuzzed discovery document of FuzzSnapshot. A
// legacy /apis lists the group-versions fetched next, so this also bounds
// the requests a Snapshot makes. fuzzMaxDecode bounds the documents of
// FuzzDecoders, large enough for the captured ones.
const (
	fuzzMaxBody   = 16 << 10
	fuzzMaxDecode = 128 << 10
)

// FuzzDecoders gives arbitrary bytes to every discovery decoder: the
// aggregated one and the three legacy ones. They must return a value or an
// error without panicking, and what decodeAggregated and legacyResources
// return must hold together (see checkGroups and checkResources).
//
// Seeds are in testdata/fuzz/FuzzDecoders.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[{"resource":"deployments","responseKind":{"kind":"Deployment"},"scope":"Namespaced","verbs":["get"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"}}]}]},{"version":"v2","freshness":"Stale"}]}]}`,
		`{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","namespaced":true,"kind":"Pod","verbs":["get"]},{"name":"pods/log","kind":"Pod"},{"name":"nothing/status"}]}`,
		`{"kind":"APIVersions","versions":["v1"]}`,
		`{"kind":"APIGroupList","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"version":"v1"}}]}`,
	} {
		f.Add([]byte(s), "apps", "v1")
	}
	f.Fuzz(func(t *testing.T, body []byte, group, version string) {
		if len(body) > fuzzMaxDecode {
			t.Skip("document larger than the fuzz bound")
		}
		failed := map[schema.GroupVersion]error{}
		if groups, err := decodeAggregated(body, failed); err == nil {
			checkGroups(t, "decodeAggregated", groups, nil)
			for gv, cause := range failed {
				if cause != ErrStale || gv.Version == "" {
					t.Fatalf("decodeAggregated recorded %v as failed with %v", gv, cause)
				}
			}
		} else if len(failed) != 0 {
			t.Fatalf("decodeAggregated failed (%v) but recorded failures %v", err, failed)
		}
		gv := schema.GroupVersion{Group: group, Version: version}
		if res, err := legacyResources(body, gv); err == nil {
			checkResources(t, "legacyResources", gv, res)
		}
		_, _ = legacyCoreVersions(body)
		_, _ = legacyGroups(body)
	})
}

// checkGroups checks what the snapshot and decodeAggregated promise about
// groups: each has a version, no version is empty, the preferred version
// is one of them (and never a failed one), and every resource has a name
// and carries its group and version.
func checkGroups(t *testing.T, what string, groups []Group, failed *GroupDiscoveryFailedError) {
	t.Helper()
	for _, g := range groups {
		if len(g.Versions) == 0 {
			t.Fatalf("%s: group %q has no versions", what, g.Name)
		}
		preferred := false
		for _, v := range g.Versions {
			if v.Version == "" {
				t.Fatalf("%s: group %q has an empty version", what, g.Name)
			}
			if v.Version == g.PreferredVersion {
				preferred = true
			}
			checkResources(t, what, schema.GroupVersion{Group: g.Name, Version: v.Version}, v.Resources)
		}
		if !preferred {
			t.Fatalf("%s: group %q prefers %q, which is not one of its versions", what, g.Name, g.PreferredVersion)
		}
		if failed != nil {
			if _, bad := failed.Groups[schema.GroupVersion{Group: g.Name, Version: g.PreferredVersion}]; bad {
				t.Fatalf("%s: group %q prefers %q, which failed discovery", what, g.Name, g.PreferredVersion)
			}
		}
	}
}

func checkResources(t *testing.T, what string, gv schema.GroupVersion, res []Resource) {
	t.Helper()
	for _, r := range res {
		if r.Name == "" {
			t.Fatalf("%s: %v has a resource without a name", what, gv)
		}
		if r.Group != gv.Group || r.Version != gv.Version {
			t.Fatalf("%s: resource %q of %v says it is in %s/%s", what, r.Name, gv, r.Group, r.Version)
		}
		if r.GVR() != gv.WithResource(r.Name) {
			t.Fatalf("%s: resource %q of %v has GVR %v", what, r.Name, gv, r.GVR())
		}
	}
}

// fuzzServer answers discovery requests in memory: /api and /apis with
// their fuzzed bodies (in the aggregated form when aggregated), every other
// path (the legacy group-versions) with gvBody and gvStatus.
type fuzzServer struct {
	api, apis, gvBody []byte
	aggregated        bool
	gvStatus          int
}

func (s *fuzzServer) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	agg := s.aggregated && strings.Contains(r.Header.Get("Accept"), "g=apidiscovery.k8s.io")
	switch r.URL.Path {
	case "/api", "/apis":
		body := s.api
		if r.URL.Path == "/apis" {
			body = s.apis
		}
		if agg {
			rec.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		} else {
			rec.Header().Set("Content-Type", "application/json")
		}
		_, _ = rec.Write(body)
	default:
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(s.gvStatus)
		_, _ = rec.Write(s.gvBody)
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// failingTransport fails every request, to prove an answer came from the
// disk cache.
type failingTransport struct{}

func (failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("no request expected: %s %s", r.Method, r.URL.Path)
}

func fuzzClient(t *testing.T, rt http.RoundTripper, opts Options) *Client {
	t.Helper()
	rc, err := rest.NewForConfig(&rest.Config{Host: "http://discovery.fuzz", QPS: -1, Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzSnapshot runs a whole Client.Snapshot against a server answering
// fuzzed documents: /api, /apis, and one body (with one of a few status
// codes) for every legacy group-version. Snapshot must return a snapshot or
// an error, never panic, and a snapshot must keep the package's promises
// (checkGroups; Failed set only with failures; every accessor works). With
// useCache, the documents go through the disk cache and a second Client
// reading only that cache must see the same groups.
//
// Seeds are in testdata/fuzz/FuzzSnapshot.
func FuzzSnapshot(f *testing.F) {
	f.Add([]byte(`{"kind":"APIVersions","versions":["v1"]}`), []byte(`{"kind":"APIGroupList","groups":[{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"version":"v1"}}]}`),
		[]byte(`{"kind":"APIResourceList","resources":[{"name":"things","kind":"Thing","verbs":["get"]},{"name":"things/status"}]}`), false, uint8(0), true)
	f.Add([]byte(`{"items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[{"resource":"pods","scope":"Namespaced","responseKind":{"kind":"Pod"}}]}]}]}`),
		[]byte(`{"items":[{"metadata":{"name":"apps"},"versions":[{"version":"v2","freshness":"Stale"},{"version":"v1","resources":[]}]}]}`), []byte(`{}`), true, uint8(2), false)
	statuses := []int{http.StatusOK, http.StatusNotFound, http.StatusServiceUnavailable, http.StatusForbidden}
	f.Fuzz(func(t *testing.T, api, apis, gvBody []byte, aggregated bool, status uint8, useCache bool) {
		if len(api) > fuzzMaxBody || len(apis) > fuzzMaxBody || len(gvBody) > fuzzMaxBody {
			t.Skip("document larger than the fuzz bound")
		}
		srv := &fuzzServer{api: api, apis: apis, gvBody: gvBody, aggregated: aggregated, gvStatus: statuses[int(status)%len(statuses)]}
		opts := Options{}
		if useCache {
			opts.CacheDir = t.TempDir()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := fuzzClient(t, srv, opts)
		s, err := c.Snapshot(ctx)
		if err != nil {
			if s != nil {
				t.Fatalf("Snapshot returned a snapshot and the error %v", err)
			}
			return
		}
		if s == nil {
			t.Fatal("Snapshot returned neither a snapshot nor an error")
		}
		checkSnapshot(t, s)
		if _, err := c.ServerPreferredResources(ctx); err != nil && !IsGroupDiscoveryFailed(err) {
			t.Fatalf("ServerPreferredResources after a good snapshot: %v", err)
		}
		if !useCache {
			return
		}
		cached := fuzzClient(t, failingTransport{}, opts)
		s2, err := cached.Snapshot(ctx)
		if err != nil {
			t.Fatalf("a Client reading the disk cache failed: %v", err)
		}
		if d := cmp.Diff(s.Groups, s2.Groups); d != "" {
			t.Fatalf("the disk cache changed the snapshot (-fetched +cached):\n%s", d)
		}
	})
}

func checkSnapshot(t *testing.T, s *Snapshot) {
	t.Helper()
	checkGroups(t, "Snapshot", s.Groups, s.Failed)
	if s.Failed != nil {
		if len(s.Failed.Groups) == 0 {
			t.Fatal("Snapshot.Failed is set without failures")
		}
		if s.Failed.Error() == "" || len(s.Failed.Unwrap()) != len(s.Failed.Groups) {
			t.Fatalf("Snapshot.Failed is not well formed: %v", s.Failed)
		}
	}
	gl := s.APIGroupList()
	if len(gl.Groups) != len(s.Groups) {
		t.Fatalf("APIGroupList has %d groups, the snapshot %d", len(gl.Groups), len(s.Groups))
	}
	n := 0
	for _, g := range s.Groups {
		for _, v := range g.Versions {
			n++
			if _, ok := s.ResourceList(schema.GroupVersion{Group: g.Name, Version: v.Version}); !ok {
				t.Fatalf("ResourceList does not find %s/%s of the snapshot", g.Name, v.Version)
			}
		}
	}
	if got := len(s.ResourceLists()); got != n {
		t.Fatalf("ResourceLists has %d lists for %d group-versions", got, n)
	}
	_ = s.PreferredResources(true)
	_ = s.PreferredResources(false)
}
