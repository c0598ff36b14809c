package restmapper

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/internal/holdhttp"
)

func gvr(g, v, r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
}

func TestLazy(t *testing.T) {
	f := newFakeServer(t)
	m := newTestMapper(t, f, Options{})
	if f.requests.Load() != 0 {
		t.Fatal("building a mapper made requests")
	}
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load(); got != 2 {
		t.Fatalf("first lookup made %d requests, want 2", got)
	}
}

func TestResolveTypes(t *testing.T) {
	f := newFakeServer(t)
	var warnings []string
	m := newTestMapper(t, f, Options{Warn: func(s string) { warnings = append(warnings, s) }})
	ctx := context.Background()
	deploy := gvr("apps", "v1", "deployments")
	tests := []struct {
		arg  string
		want []schema.GroupVersionResource
	}{
		{"deployments", []schema.GroupVersionResource{deploy}},
		{"deployment", []schema.GroupVersionResource{deploy}},
		{"deploy", []schema.GroupVersionResource{deploy}},
		{"Deployment", []schema.GroupVersionResource{deploy}},
		{"DEPLOYMENTS", []schema.GroupVersionResource{deploy}},
		{"deployments.apps", []schema.GroupVersionResource{deploy}},
		{"deploy.apps", []schema.GroupVersionResource{deploy}},
		{"deployments.v1.apps", []schema.GroupVersionResource{deploy}},
		{"Deployment.v1.apps", []schema.GroupVersionResource{deploy}},
		{"hpa", []schema.GroupVersionResource{gvr("autoscaling", "v2", "horizontalpodautoscalers")}},
		{"hpa.autoscal", []schema.GroupVersionResource{gvr("autoscaling", "v2", "horizontalpodautoscalers")}},
		{"horizontalpodautoscalers.v1.autoscaling", []schema.GroupVersionResource{gvr("autoscaling", "v1", "horizontalpodautoscalers")}},
		{"po", []schema.GroupVersionResource{gvr("", "v1", "pods")}},
		{"pods,svc", []schema.GroupVersionResource{gvr("", "v1", "pods"), gvr("", "v1", "services")}},
		{"pods,po,pod", []schema.GroupVersionResource{gvr("", "v1", "pods")}},
		{"events", []schema.GroupVersionResource{gvr("", "v1", "events")}},
		{"events.events.k8s.io", []schema.GroupVersionResource{gvr("events.k8s.io", "v1", "events")}},
		{"widgets", []schema.GroupVersionResource{gvr("example.com", "v1", "widgets")}},
		{"widgets.v1beta1.example.com", []schema.GroupVersionResource{gvr("example.com", "v1beta1", "widgets")}},
		{"widgets.example.com", []schema.GroupVersionResource{gvr("example.com", "v1", "widgets")}},
		{"gadget", []schema.GroupVersionResource{gvr("other.io", "v2", "gadgets")}},
		{"gd", []schema.GroupVersionResource{gvr("other.io", "v2", "gadgets")}},
		{"kdyn", []schema.GroupVersionResource{gvr("example.com", "v1", "widgets")}},
		{"crd", []schema.GroupVersionResource{gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions")}},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			ms, err := m.ResolveTypes(ctx, tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			var got []schema.GroupVersionResource
			for _, mt := range ms {
				got = append(got, mt.GVR)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if len(warnings) != 0 {
		t.Errorf("unexpected warnings: %v", warnings)
	}
}

func TestCategoryAll(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	ms, err := m.ResolveTypes(context.Background(), "all")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mt := range ms {
		got[mt.GVR.GroupResource().String()] = true
		if mt.Arg != "all" {
			t.Errorf("Arg = %q", mt.Arg)
		}
	}
	for _, want := range []string{"pods", "services", "deployments.apps", "replicasets.apps", "statefulsets.apps", "jobs.batch", "cronjobs.batch", "widgets.example.com"} {
		if !got[want] {
			t.Errorf("all does not include %s (got %v)", want, got)
		}
	}
	if got["configmaps"] || got["gadgets.other.io"] {
		t.Errorf("all includes resources outside the category: %v", got)
	}
}

func TestShortNameClaimedByTwoGroupsWarns(t *testing.T) {
	f := newFakeServer(t)
	var mu sync.Mutex
	var warnings []string
	m := newTestMapper(t, f, Options{Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }})
	ms, err := m.ResolveTypes(context.Background(), "wd")
	if err != nil {
		t.Fatal(err)
	}
	// kubectl resolves to the first group in discovery order.
	if ms[0].GVR != gvr("example.com", "v1", "widgets") {
		t.Fatalf("wd → %v", ms[0].GVR)
	}
	// client-go's shortcut expander's words.
	if len(warnings) != 1 || warnings[0] != `short name "wd" could also match lower priority resource gadgets.other.io` {
		t.Fatalf("warnings = %v", warnings)
	}
	warnings = nil
	if _, err := m.ResourceFor(gvr("", "", "wd")); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 {
		t.Fatalf("ResourceFor warnings = %v", warnings)
	}
}

func TestAmbiguousGroupPrefix(t *testing.T) {
	f := newFakeServer(t)
	f.addGroup("things.alpha.io", []string{"v1"}, "things", "Thing", true)
	f.addGroup("things.beta.io", []string{"v1"}, "things", "Thing", true)
	m := newTestMapper(t, f, Options{})
	_, err := m.ResolveTypes(context.Background(), "things.things")
	if !meta.IsAmbiguousError(err) {
		t.Fatalf("err = %v, want ambiguous", err)
	}
	var amb *meta.AmbiguousResourceError
	if !errors.As(err, &amb) || len(amb.MatchingResources) != 2 {
		t.Fatalf("candidates = %+v", amb)
	}
	if !strings.Contains(err.Error(), "things.alpha.io") || !strings.Contains(err.Error(), "things.beta.io") {
		t.Fatalf("error does not name the candidates: %v", err)
	}
	if ms, err := m.ResolveTypes(context.Background(), "things.things.a"); err != nil || ms[0].GVR.Group != "things.alpha.io" {
		t.Fatalf("unique prefix: %v %v", ms, err)
	}
}

func TestNotFoundSuggests(t *testing.T) {
	f := newFakeServer(t)
	m := newTestMapper(t, f, Options{})
	_, err := m.ResolveTypes(context.Background(), "deploymnets")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %T %v", err, err)
	}
	if !meta.IsNoMatchError(err) {
		t.Fatal("NotFoundError is not a no-match error")
	}
	if len(nf.Suggestions) == 0 || nf.Suggestions[0] != "deployments" {
		t.Fatalf("suggestions = %v", nf.Suggestions)
	}
	if want := `the server doesn't have a resource type "deploymnets"; did you mean`; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("message = %q", err.Error())
	}
	_, err = m.ResolveTypes(context.Background(), "zzzqqq")
	if !errors.As(err, &nf) || len(nf.Suggestions) != 0 || err.Error() != `the server doesn't have a resource type "zzzqqq"` {
		t.Fatalf("err = %v", err)
	}
}

func TestResolveArgs(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	ctx := context.Background()
	ms, err := m.ResolveArgs(ctx, []string{"deploy/web", "svc/api"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "web" || ms[0].GVR.Resource != "deployments" || ms[1].Name != "api" || ms[1].GVR.Resource != "services" {
		t.Fatalf("TYPE/NAME: %+v", ms)
	}
	ms, err = m.ResolveArgs(ctx, []string{"pods,svc", "a", "b"})
	if err != nil || len(ms) != 4 || ms[1].Name != "b" || ms[2].GVR.Resource != "services" {
		t.Fatalf("names: %+v %v", ms, err)
	}
	if _, err := m.ResolveArgs(ctx, []string{"deploy/web", "svc"}); err == nil {
		t.Fatal("mixed TYPE/NAME and TYPE accepted")
	}
	if _, err := m.ResolveArgs(ctx, []string{"all/x"}); err == nil || !strings.Contains(err.Error(), "category") {
		t.Fatalf("category with a name: %v", err)
	}
	if _, err := m.ResolveTypes(ctx, "pods,,svc"); err == nil {
		t.Fatal("empty element accepted")
	}
}

func TestRESTMapperContract(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	hpa := schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	mp, err := m.RESTMapping(hpa)
	if err != nil || mp.Resource != gvr("autoscaling", "v2", "horizontalpodautoscalers") || mp.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("RESTMapping(hpa) = %+v, %v", mp, err)
	}
	mp, err = m.RESTMapping(hpa, "v1")
	if err != nil || mp.GroupVersionKind.Version != "v1" {
		t.Fatalf("RESTMapping(hpa, v1) = %+v, %v", mp, err)
	}
	mps, err := m.RESTMappings(hpa)
	if err != nil || len(mps) != 2 || mps[0].Resource.Version != "v2" || mps[1].Resource.Version != "v1" {
		t.Fatalf("RESTMappings = %+v, %v", mps, err)
	}
	ns, err := m.RESTMapping(schema.GroupKind{Kind: "Namespace"})
	if err != nil || ns.Scope.Name() != meta.RESTScopeNameRoot {
		t.Fatalf("Namespace mapping = %+v, %v", ns, err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "deployment", Group: "apps"}); err != nil {
		t.Fatalf("case-insensitive kind: %v", err)
	}
	if _, err := m.RESTMapping(hpa, "v9"); !meta.IsNoMatchError(err) {
		t.Fatalf("missing version: %v", err)
	}
	k, err := m.KindFor(gvr("", "", "deployments"))
	if err != nil || k != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Fatalf("KindFor = %v, %v", k, err)
	}
	ks, err := m.KindsFor(gvr("autoscaling", "", "horizontalpodautoscalers"))
	if err != nil || len(ks) != 2 || ks[0].Version != "v2" {
		t.Fatalf("KindsFor = %v, %v", ks, err)
	}
	rs, err := m.ResourcesFor(gvr("", "", "events"))
	if err != nil || len(rs) != 2 || rs[0] != gvr("", "v1", "events") || rs[1].Group != "events.k8s.io" {
		t.Fatalf("ResourcesFor(events) = %v, %v", rs, err)
	}
	r, err := m.ResourceFor(gvr("", "", "event"))
	if err != nil || r != gvr("", "v1", "events") {
		t.Fatalf("ResourceFor(event) = %v, %v", r, err)
	}
	s, err := m.ResourceSingularizer("deployments")
	if err != nil || s != "deployment" {
		t.Fatalf("singular = %q, %v", s, err)
	}
	if s, err := m.ResourceSingularizer("nopes"); !meta.IsNoMatchError(err) || s != "nopes" {
		t.Fatalf("singularizer miss: %q, %v; want the name back with a no-match error", s, err)
	}
}

func TestResourcesForGC(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	rs, err := m.Resources(context.Background(), SupportsVerbs("list", "watch", "delete"))
	if !discovery.IsGroupDiscoveryFailed(err) {
		t.Fatalf("err = %v, want the stale metrics group reported", err)
	}
	got := map[string]bool{}
	for _, r := range rs {
		gr := r.GVR().GroupResource().String()
		if got[gr] {
			t.Errorf("%s listed twice", gr)
		}
		got[gr] = true
	}
	for _, want := range []string{"configmaps", "deployments.apps", "widgets.example.com", "gadgets.other.io", "horizontalpodautoscalers.autoscaling"} {
		if !got[want] {
			t.Errorf("missing %s", want)
		}
	}
	for _, not := range []string{"bindings", "tokenreviews.authentication.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io"} {
		if got[not] {
			t.Errorf("%s does not support list+watch+delete", not)
		}
	}
}

func TestMissRefreshesOnceAndFindsNewCRD(t *testing.T) {
	f := newFakeServer(t)
	m := newTestMapper(t, f, Options{})
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}); err != nil {
		t.Fatal(err)
	}
	f.addGroup("late.io", []string{"v1"}, "sprockets", "Sprocket", true, "kdyn")
	before := f.requests.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mp, err := m.RESTMapping(schema.GroupKind{Group: "late.io", Kind: "Sprocket"})
			if err == nil && mp.Resource.Resource != "sprockets" {
				err = errors.New("wrong mapping")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := f.requests.Load() - before; got != 2 {
		t.Fatalf("20 concurrent misses made %d requests, want 2 (one shared refresh)", got)
	}
	// The new CRD's plural and category resolve too, with no refresh.
	before = f.requests.Load()
	ms, err := m.ResolveTypes(context.Background(), "sprockets,kdyn")
	if err != nil || len(ms) != 2 {
		t.Fatalf("ResolveTypes = %v, %v", ms, err)
	}
	if f.requests.Load() != before {
		t.Fatal("hits made requests")
	}
}

func TestNegativeCache(t *testing.T) {
	f := newFakeServer(t)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	m := newTestMapper(t, f, Options{now: clock.now})
	gk := schema.GroupKind{Group: "nope.io", Kind: "Nothing"}
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("err = %v", err)
	}
	after := f.requests.Load() // 2 to load + 2 for the refresh
	if after != 4 {
		t.Fatalf("first miss made %d requests, want 4", after)
	}
	for i := 0; i < 50; i++ {
		if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
			t.Fatalf("err = %v", err)
		}
	}
	if got := f.requests.Load(); got != after {
		t.Fatalf("50 misses inside the negative-cache window made %d requests", got-after)
	}
	clock.add(DefaultNegativeCacheTTL + time.Millisecond)
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("err = %v", err)
	}
	if got := f.requests.Load() - after; got != 2 {
		t.Fatalf("a miss after the window made %d requests, want 2", got)
	}
}

func TestDeletedCRDStopsResolvingAfterRefresh(t *testing.T) {
	f := newFakeServer(t)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	m := newTestMapper(t, f, Options{now: clock.now, MaxAge: time.Minute})
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	if _, err := m.RESTMapping(gk); err != nil {
		t.Fatal(err)
	}
	f.removeGroup("example.com")
	if _, err := m.RESTMapping(gk); err != nil {
		t.Fatalf("within MaxAge the cached mapping is used: %v", err)
	}
	if err := m.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("after refresh: %v, want no match", err)
	}
	// MaxAge: an old index refreshes in the background.
	f.addGroup("example.com", []string{"v1"}, "widgets", "Widget", true)
	clock.add(2 * time.Minute)
	_, _ = m.RESTMapping(schema.GroupKind{Kind: "Pod"}) // starts the background refresh
	deadline := time.Now().Add(5 * time.Second)
	for {
		if idx := m.idx.Load(); idx != nil && idx.byGK[gk] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background refresh did not pick up the group")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNewVersionOfKnownGroupFound(t *testing.T) {
	f := newFakeServer(t)
	m := newTestMapper(t, f, Options{})
	if _, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1"); err != nil {
		t.Fatal(err)
	}
	f.removeGroup("example.com")
	f.addGroup("example.com", []string{"v2", "v1"}, "widgets", "Widget", true)
	mp, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v2")
	if err != nil || mp.Resource.Version != "v2" {
		t.Fatalf("v2 = %+v, %v", mp, err)
	}
}

func TestMissInFailedGroupSaysSo(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	_, err := m.ResourceFor(gvr("metrics.k8s.io", "", "pods"))
	if !meta.IsNoMatchError(err) || !strings.Contains(err.Error(), "discovery failed for metrics.k8s.io/v1beta1") {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, discovery.ErrStale) {
		t.Fatal("the stale cause is not reachable with errors.Is")
	}
}

func TestResetRediscovers(t *testing.T) {
	f := newFakeServer(t)
	m := newTestMapper(t, f, Options{})
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}); err != nil {
		t.Fatal(err)
	}
	m.Reset()
	before := f.requests.Load()
	if _, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}); err != nil {
		t.Fatal(err)
	}
	if f.requests.Load()-before != 2 {
		t.Fatalf("after Reset: %d requests", f.requests.Load()-before)
	}
}

func TestHotLookupAllocatesNothing(t *testing.T) {
	m := newTestMapper(t, newFakeServer(t), Options{})
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	if _, err := m.RESTMapping(gk); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := m.RESTMapping(gk); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("hot RESTMapping allocates %.1f times", allocs)
	}
}

func BenchmarkRESTMappingHot(b *testing.B) {
	f := newFakeServer(&testing.T{})
	defer f.Close()
	m := newTestMapper(&testing.T{}, f, Options{})
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	if _, err := m.RESTMapping(gk); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.RESTMapping(gk)
	}
}

// A Reset while the index is being built is not undone by that build: a
// resource removed before the Reset does not resolve again when the build
// that began before it ends last.
func TestResetDuringLoadIsNotLost(t *testing.T) {
	f := newFakeServer(t)
	h := holdhttp.NewFirst("/apis")
	m := newWrappedTestMapper(t, f, Options{NegativeCacheTTL: -1}, h.Wrap)
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	done := make(chan error, 1)
	go func() {
		_, err := m.RESTMapping(gk)
		done <- err
	}()
	<-h.Held()
	f.removeGroup("example.com")
	m.Reset()
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("after Reset: %v, want no match", err)
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatalf("the lookup begun before Reset: %v", err)
	}
	if _, err := m.RESTMapping(gk); !meta.IsNoMatchError(err) {
		t.Fatalf("once the older build ended: %v, want no match (it replaced the newer index)", err)
	}
}

// A Reset while a miss's refresh is in flight is not undone by that miss:
// the "no match" it found before the Reset is not negatively cached after
// it, so a resource created after the Reset resolves at its first miss.
func TestResetDuringMissRefreshDropsItsNegativeEntry(t *testing.T) {
	f := newFakeServer(t)
	h := holdhttp.NewFirstArmedLater("/apis")
	m := newWrappedTestMapper(t, f, Options{}, h.Wrap)
	pod := schema.GroupKind{Kind: "Pod"}
	if _, err := m.RESTMapping(pod); err != nil {
		t.Fatal(err)
	}
	h.Arm()
	defer h.Release()
	gk := schema.GroupKind{Group: "late.io", Kind: "Sprocket"}
	done := make(chan error, 1)
	go func() {
		_, err := m.RESTMapping(gk)
		done <- err
	}()
	<-h.Held() // the miss's refresh, answered without late.io
	m.Reset()
	if _, err := m.RESTMapping(pod); err != nil { // the index after the Reset
		t.Fatal(err)
	}
	h.Release()
	if err := <-done; !meta.IsNoMatchError(err) {
		t.Fatalf("the miss begun before Reset: %v, want no match", err)
	}
	f.addGroup("late.io", []string{"v1"}, "sprockets", "Sprocket", true)
	if _, err := m.RESTMapping(gk); err != nil {
		t.Fatalf("a resource created after the Reset: %v (the older miss was negatively cached after the Reset)", err)
	}
}
