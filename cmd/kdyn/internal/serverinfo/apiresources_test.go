package serverinfo

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/discovery"
)

func TestAPIResourcesGolden(t *testing.T) {
	snap := clitest.FixtureSnapshot()
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
			clitest.AssertGolden(t, filepath.Join("api-resources", tc.name+".txt"), buf.String())
		})
	}
}

func TestAPIResourcesValidate(t *testing.T) {
	for _, o := range []apiResourcesOptions{{output: "jsonpath"}, {sortBy: "age"}} {
		var ue *cli.UsageError
		if err := o.validate(); !errors.As(err, &ue) {
			t.Errorf("validate(%+v) = %v, want a usage error", o, err)
		}
	}
}

func TestReportPartialDiscovery(t *testing.T) {
	var buf bytes.Buffer
	err := reportPartialDiscovery(&buf, clitest.FixtureSnapshot())
	if cli.ExitCode(err, true) != cli.ExitGeneric {
		t.Fatalf("exit code %d, want %d", cli.ExitCode(err, true), cli.ExitGeneric)
	}
	var ee *cli.ExitError
	if !errors.As(err, &ee) || !ee.Silent {
		t.Fatalf("want a silent exit error, got %v", err)
	}
	want := "error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: " + discovery.ErrStale.Error() + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Fatalf("stderr (-want +got):\n%s", diff)
	}
	buf.Reset()
	snap := clitest.FixtureSnapshot()
	snap.Failed = nil
	if err := reportPartialDiscovery(&buf, snap); err != nil || buf.Len() != 0 {
		t.Fatalf("complete discovery: %v %q", err, buf.String())
	}
}

func TestAPIVersions(t *testing.T) {
	got := apiVersions(clitest.FixtureSnapshot())
	want := []string{"apps/v1", "apps/v1beta1", "example.com/v1", "metrics.k8s.io/v1beta1", "v1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("api-versions (-want +got):\n%s", diff)
	}
}
