package cli

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
)

// The -update flag may be registered by another test file of the package;
// register it only once and read it by name.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

// assertGoldenFile compares got with testdata/NAME, or rewrites the file
// with -update.
func assertGoldenFile(t *testing.T, name, got string) {
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

func res(group, version, name, kind string, namespaced bool, verbs []string, short, cats []string) discovery.Resource {
	singular := strings.ToLower(kind)
	return discovery.Resource{APIResource: metav1.APIResource{
		Name: name, SingularName: singular, Namespaced: namespaced, Group: group, Version: version, Kind: kind,
		Verbs: verbs, ShortNames: short, Categories: cats,
	}}
}

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// fixtureSnapshot is a small discovery snapshot: the core group, apps at
// two versions (one resource only at the older one), a CRD group with
// categories, a resource without verbs, and a failed group-version.
func fixtureSnapshot() *discovery.Snapshot {
	return &discovery.Snapshot{
		Aggregated: true,
		Groups: []discovery.Group{
			{Name: "", PreferredVersion: "v1", Versions: []discovery.Version{{Version: "v1", Resources: []discovery.Resource{
				res("", "v1", "pods", "Pod", true, allVerbs, []string{"po"}, []string{"all"}),
				res("", "v1", "bindings", "Binding", true, []string{"create"}, nil, nil),
				res("", "v1", "configmaps", "ConfigMap", true, allVerbs, []string{"cm"}, nil),
				res("", "v1", "namespaces", "Namespace", false, []string{"create", "delete", "get", "list", "patch", "update", "watch"}, []string{"ns"}, nil),
				res("", "v1", "nothing", "Nothing", true, nil, nil, nil),
			}}}},
			{Name: "apps", PreferredVersion: "v1", Versions: []discovery.Version{
				{Version: "v1", Resources: []discovery.Resource{
					res("apps", "v1", "replicasets", "ReplicaSet", true, allVerbs, []string{"rs"}, []string{"all"}),
					res("apps", "v1", "deployments", "Deployment", true, allVerbs, []string{"deploy"}, []string{"all"}),
				}},
				{Version: "v1beta1", Resources: []discovery.Resource{
					res("apps", "v1beta1", "deployments", "Deployment", true, allVerbs, []string{"deploy"}, []string{"all"}),
					res("apps", "v1beta1", "legacythings", "LegacyThing", false, []string{"get", "list"}, nil, nil),
				}},
			}},
			{Name: "example.com", PreferredVersion: "v1", Versions: []discovery.Version{{Version: "v1", Resources: []discovery.Resource{
				res("example.com", "v1", "widgets", "Widget", true, allVerbs, []string{"wd"}, []string{"all", "toys"}),
				res("example.com", "v1", "gadgets", "Gadget", false, []string{"get", "list", "watch"}, nil, []string{"toys"}),
			}}}},
		},
		Failed: &discovery.GroupDiscoveryFailedError{Groups: map[schema.GroupVersion]error{
			{Group: "metrics.k8s.io", Version: "v1beta1"}: discovery.ErrStale,
		}},
	}
}

func TestAPIResourcesGolden(t *testing.T) {
	snap := fixtureSnapshot()
	cases := []struct {
		name string
		opts apiResourcesOptions
	}{
		{"table", apiResourcesOptions{}},
		{"wide", apiResourcesOptions{output: "wide"}},
		{"name", apiResourcesOptions{output: "name"}},
		{"json", apiResourcesOptions{output: "json"}},
		{"yaml", apiResourcesOptions{output: "yaml", apiGroupSet: true, apiGroup: "example.com"}},
		{"cluster-scoped", apiResourcesOptions{namespacedSet: true, namespaced: false}},
		{"core-group-no-headers", apiResourcesOptions{apiGroupSet: true, apiGroup: "", noHeaders: true}},
		{"verbs-watch-sort-kind", apiResourcesOptions{verbs: []string{"list", "watch"}, sortBy: "kind"}},
		{"categories-sort-name", apiResourcesOptions{categories: []string{"all"}, sortBy: "name", output: "wide"}},
		{"categories-none", apiResourcesOptions{categories: []string{"all", "nope"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.opts.validate(); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := printAPIResources(&buf, selectAPIResources(snap, &tc.opts), &tc.opts); err != nil {
				t.Fatal(err)
			}
			assertGoldenFile(t, filepath.Join("api-resources", tc.name+".txt"), buf.String())
		})
	}
}

func TestAPIResourcesValidate(t *testing.T) {
	for _, o := range []apiResourcesOptions{{output: "jsonpath"}, {sortBy: "age"}} {
		var ue *usageError
		if err := o.validate(); !errors.As(err, &ue) {
			t.Errorf("validate(%+v) = %v, want a usage error", o, err)
		}
	}
}

func TestReportPartialDiscovery(t *testing.T) {
	var buf bytes.Buffer
	err := reportPartialDiscovery(&buf, fixtureSnapshot())
	if exitCode(err, true) != exitGeneric {
		t.Fatalf("exit code %d, want %d", exitCode(err, true), exitGeneric)
	}
	var ee *exitError
	if !errors.As(err, &ee) || !ee.silent {
		t.Fatalf("want a silent exit error, got %v", err)
	}
	want := "error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: " + discovery.ErrStale.Error() + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Fatalf("stderr (-want +got):\n%s", diff)
	}
	buf.Reset()
	snap := fixtureSnapshot()
	snap.Failed = nil
	if err := reportPartialDiscovery(&buf, snap); err != nil || buf.Len() != 0 {
		t.Fatalf("complete discovery: %v %q", err, buf.String())
	}
}

func TestAPIVersions(t *testing.T) {
	got := apiVersions(fixtureSnapshot())
	want := []string{"apps/v1", "apps/v1beta1", "example.com/v1", "metrics.k8s.io/v1beta1", "v1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("api-versions (-want +got):\n%s", diff)
	}
}
