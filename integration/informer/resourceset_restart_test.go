package informer_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

// A restart of the control plane is not the end of a resource: while the
// server comes back, its discovery may list the built-in groups before it
// serves the custom resources again. A ResourceSet must keep its members
// through that (no Deleted events marked ResourceGone for objects that did
// not go anywhere, no second initial list), and still release a member
// whose CRD is deleted (TestResourceSetFollowsCRDs).
func TestResourceSetKeepsMembersThroughARestart(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	admin := client(t, env.RESTConfig(testenv.Admin))
	group := "restart.kdyn.test"
	const n = 20
	gvr := createThings(t, admin, group, "default", n)
	cfg := env.RESTConfig(testenv.Admin)
	mapper, err := restmapper.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{})
	set, counts := runThingsSet(t, f, mapper, gvr, 0)
	gone, adds := &counts.gone, &counts.adds
	if got := adds.Load(); got != n {
		t.Fatalf("%d adds after the sync, want %d", got, n)
	}
	if err := env.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Until the server serves the resource again, and some refreshes of
	// discovery after that.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := admin.Resource(gvr).Namespace("default").List(t.Context(), metav1.ListOptions{Limit: 1}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the custom resource is not served after the restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(5 * time.Second)
	if !slices.Contains(set.Resources(), gvr) {
		t.Fatalf("the set lost %s after the restart", gvr)
	}
	if g, a := gone.Load(), adds.Load(); g != 0 || a != n {
		t.Fatalf("across the restart: %d Deleted events for a gone resource and %d adds in all (want 0 and %d)", g, a, n)
	}
}
