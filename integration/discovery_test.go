package integration_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

// countingConfig returns the admin config with a request counter.
func countingConfig(env *testenv.Env, n *atomic.Int32) *rest.Config {
	cfg := env.RESTConfig(testenv.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

func TestAggregatedDiscoveryCostsTwoRequests(t *testing.T) {
	env := testenv.Shared(t)
	var n atomic.Int32
	dc, err := discovery.NewForConfig(countingConfig(env, &n))
	if err != nil {
		t.Fatal(err)
	}
	s, err := dc.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Aggregated || n.Load() != 2 {
		t.Fatalf("aggregated=%v after %d requests, want aggregated in 2", s.Aggregated, n.Load())
	}
	lists, err := dc.ServerPreferredResources(t.Context())
	if err != nil {
		t.Fatalf("a healthy server reported: %v", err)
	}
	if len(lists) < 15 || n.Load() != 2 {
		t.Fatalf("%d lists, %d requests", len(lists), n.Load())
	}
	// Warm start from the disk cache: zero requests.
	dir := t.TempDir()
	rc, _ := rest.NewForConfig(countingConfig(env, &n))
	d1, _ := discovery.New(rc, discovery.Options{CacheDir: dir})
	if _, err := d1.Snapshot(t.Context()); err != nil {
		t.Fatal(err)
	}
	n.Store(0)
	d2, _ := discovery.New(rc, discovery.Options{CacheDir: dir})
	if _, err := d2.Snapshot(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 0 {
		t.Fatalf("warm disk-cache start made %d requests", n.Load())
	}
	// Revalidation: the real server answers 304 to our ETags.
	if _, err := d2.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 {
		t.Fatalf("refresh made %d requests", n.Load())
	}
	v, err := dc.ServerVersion(t.Context())
	if err != nil || v.GitVersion != "v1.37.2" {
		t.Fatalf("ServerVersion = %v, %v", v, err)
	}
}

func TestMapperFindsCRDCreatedAfterItAndForgetsDeletedOne(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	var n atomic.Int32
	m, err := restmapper.New(mustDiscovery(t, countingConfig(env, &n)), restmapper.Options{MaxAge: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The mapper has loaded before the CRD exists.
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}); err != nil {
		t.Fatal(err)
	}
	group := uniqueGroup("late")
	gk := schema.GroupKind{Group: group, Kind: "Sprocket"}
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("before the CRD: %v", err)
	}
	spec := crdSpec{group: group, kind: "Sprocket", plural: "sprockets", singular: "sprocket", shortNames: []string{"spr"},
		categories: []string{"kdyn-test-cat"}, namespaced: true, versions: []string{"v1"}}
	// Wait out the negative cache of the miss above (5 s by default).
	time.Sleep(restmapper.DefaultNegativeCacheTTL)
	createCRD(t, c, spec)
	// Established comes a moment before the server's discovery documents
	// list the new group (another controller updates them): wait for that
	// with a discovery client of its own, leaving the mapper untouched.
	probe := mustDiscovery(t, countingConfig(env, new(atomic.Int32)))
	waitFor(t, "discovery to serve "+group, func() (bool, error) {
		snap, err := probe.Refresh(t.Context())
		if err != nil {
			return false, err
		}
		_, ok := snap.ResourceList(schema.GroupVersion{Group: group, Version: "v1"})
		return ok, nil
	})
	// First lookup after the CRD is served resolves, with no Reset.
	mp, err := m.RESTMapping(gk)
	if err != nil {
		t.Fatalf("after the CRD is established: %v", err)
	}
	if mp.Resource != (schema.GroupVersionResource{Group: group, Version: "v1", Resource: "sprockets"}) || mp.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("mapping = %+v", mp)
	}
	for _, arg := range []string{"sprockets", "sprocket", "spr", "Sprocket", "sprockets." + group, "kdyn-test-cat"} {
		ms, err := m.ResolveTypes(t.Context(), arg)
		if err != nil || len(ms) != 1 || ms[0].GVR.Group != group {
			t.Fatalf("ResolveTypes(%q) = %v, %v", arg, ms, err)
		}
	}
	// Create an object through the mapping, then delete the CRD.
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Sprocket", "metadata": map[string]any{"name": "s1", "namespace": "default"}}}
	if _, err := c.Resource(mp.Resource).Namespace("default").Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteCRD(t, c, spec.plural+"."+group)
	waitFor(t, "the deleted CRD's kind to stop resolving", func() (bool, error) {
		_, err := m.RESTMapping(gk)
		return meta.IsNoMatchError(err), err
	})
}

func mustDiscovery(t *testing.T, cfg *rest.Config) *discovery.Client {
	t.Helper()
	dc, err := discovery.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

func TestBrokenAggregatedAPIIsAPartialFailure(t *testing.T) {
	env := testenv.New(t, testenv.Options{}) // its own server: the APIService would disturb other tests
	c := adminClient(t, env)
	apiSvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"insecureSkipTLSVerify": true, "service": map[string]any{"name": "metrics-server", "namespace": "kube-system", "port": int64(443)}},
	}}
	if _, err := c.Resource(apiSvcGVR).Create(t.Context(), apiSvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var failed *discovery.GroupDiscoveryFailedError
	waitFor(t, "metrics.k8s.io to be reported as failed", func() (bool, error) {
		dc := mustDiscovery(t, env.RESTConfig(testenv.Admin))
		_, err := dc.ServerPreferredResources(context.Background())
		return errors.As(err, &failed), err
	})
	if _, ok := failed.Groups[schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}]; !ok || len(failed.Groups) != 1 {
		t.Fatalf("failed groups = %v", failed.Groups)
	}
	// Everything else keeps working: the mapper, and a list through it.
	m, err := restmapper.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	mp, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resource(mp.Resource).List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	rs, err := m.Resources(t.Context(), restmapper.SupportsVerbs("list", "watch", "delete"))
	if !errors.As(err, &failed) || len(rs) < 20 {
		t.Fatalf("Resources: %d, %v", len(rs), err)
	}
	_, err = m.ResourceFor(schema.GroupVersionResource{Group: "metrics.k8s.io", Resource: "pods"})
	if !meta.IsNoMatchError(err) || !errors.Is(err, discovery.ErrStale) {
		t.Fatalf("lookup in the broken group: %v", err)
	}
}

func TestCRDCategoriesExpand(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	group := uniqueGroup("cat")
	cat := "kdyn-" + randSuffix()
	createCRD(t, c, crdSpec{group: group, kind: "Alpha", plural: "alphas", singular: "alpha", categories: []string{cat}, namespaced: true, versions: []string{"v1"}})
	createCRD(t, c, crdSpec{group: group, kind: "Beta", plural: "betas", singular: "beta", categories: []string{cat, "all"}, versions: []string{"v1"}})
	m, err := restmapper.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := m.ResolveTypes(t.Context(), cat)
	if err != nil || len(ms) != 2 || ms[0].GVR.Resource != "alphas" || ms[1].GVR.Resource != "betas" || ms[1].Namespaced {
		t.Fatalf("category %s = %+v, %v", cat, ms, err)
	}
	all, err := m.ResolveTypes(t.Context(), "all")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mt := range all {
		if mt.GVR.Resource == "betas" {
			found = true
		}
		if mt.GVR.Resource == "configmaps" {
			t.Fatal("all includes configmaps")
		}
	}
	if !found {
		t.Fatal("all does not include the CRD that declares it")
	}
}
