package ownergraph

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The graph keeps an object while any resource serves it, follows owner
// changes in both directions, and forgets a resource's objects when the
// resource leaves the set.
func TestGraph(t *testing.T) {
	coreEvents := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	newEvents := schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	obj := func(uid, name string, owners ...string) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{UID: types.UID(uid), Name: name, Namespace: "ns"}
		for _, o := range owners {
			m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o, UID: types.UID(o)})
		}
		return m
	}
	g := New()
	if _, _, added := g.Upsert(cms, schema.GroupVersionKind{}, obj("a", "a")); !added {
		t.Fatal("a new object was not added")
	}
	g.Upsert(cms, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, obj("b", "b", "a"))
	if n, ok := g.Get("a"); !ok || n.GVK.Kind != "ConfigMap" || n.GVR != cms || n.Name != "a" {
		t.Fatalf("a: %+v %v (the resource's kind, once known, applies to every object)", n, ok)
	}
	if deps := g.DependentsOf("a"); !slices.Equal(deps, []types.UID{"b"}) {
		t.Fatalf("dependents of a: %v", deps)
	}
	// b changes owner: a loses it, c gains it.
	if old, _, added := g.Upsert(cms, schema.GroupVersionKind{}, obj("b", "b", "c")); added || len(old) != 1 || old[0].UID != "a" {
		t.Fatalf("update of b: old owners %v, added %v", old, added)
	}
	if deps := g.DependentsOf("a"); len(deps) != 0 {
		t.Fatalf("a still has dependents %v", deps)
	}
	if objects, owners := g.Size(); objects != 2 || owners != 1 {
		t.Fatalf("size %d objects, %d owners", objects, owners)
	}
	// An event served by two groups lives until both have let it go.
	g.Upsert(coreEvents, schema.GroupVersionKind{Version: "v1", Kind: "Event"}, obj("e", "e", "b"))
	g.Upsert(newEvents, schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, obj("e", "e", "b"))
	if gone, _ := g.Remove(coreEvents, "e"); gone {
		t.Fatal("e gone while events.k8s.io still serves it")
	}
	if n, _ := g.Get("e"); n.GVR != newEvents {
		t.Fatalf("e is now served by %v", n.GVR)
	}
	if gone, _ := g.Remove(cms, "e"); gone {
		t.Fatal("a resource that does not serve e removed it")
	}
	if gone, deps := g.Remove(newEvents, "e"); !gone || len(deps) != 0 {
		t.Fatalf("e: gone %v, dependents %v", gone, deps)
	}
	if deps := g.DependentsOf("b"); len(deps) != 0 {
		t.Fatalf("b keeps the removed e as a dependent: %v", deps)
	}
	// configmaps leave the set: a and b are forgotten, b's owner c (never
	// seen) loses its dependent, and a's dependent (a secret) is returned.
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	g.Upsert(secrets, schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, obj("d", "d", "a"))
	if deps := g.ForgetResource(cms); !slices.Equal(deps, []types.UID{"d"}) {
		t.Fatalf("forgetResource returned %v, want a's dependent d", deps)
	}
	if objects, owners := g.Size(); objects != 1 || owners != 1 {
		t.Fatalf("after forgetResource: %d objects, %d owners; want d and its owner a", objects, owners)
	}
	if got := g.WithOwners(); !slices.Equal(got, []types.UID{"d"}) {
		t.Fatalf("withOwners after forgetResource: %v", got)
	}
}

// A node and owner references are named as the collectors print them.
func TestNames(t *testing.T) {
	n := Node{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "ns", Name: "web"}
	if got := n.String(); got != "deployments.apps/ns/web" {
		t.Errorf("unknown kind: %q", got)
	}
	n.GVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	if got := n.String(); got != "Deployment.apps/ns/web" {
		t.Errorf("known kind: %q", got)
	}
	refs := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: "1"}, {APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "2"}}
	if got := DescribeRefs(refs); got != "ConfigMap/a uid=1, Widget.example.com/w uid=2" {
		t.Errorf("DescribeRefs: %q", got)
	}
	if !SameOwners(refs, slices.Clone(refs)) || SameOwners(refs, refs[:1]) || SameOwners(refs, []metav1.OwnerReference{refs[1], refs[0]}) {
		t.Error("SameOwners")
	}
}
