package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
)

var gadgetMapping = mapping("example.com", "v1", "gadgets", "Gadget", false)

// pruneWorld is a fake server holding the members of one set and objects
// that must never be pruned.
func pruneWorld(t *testing.T, a *applySet) *fake.Client {
	t.Helper()
	id := a.parent.id()
	obj := func(apiVersion, kind, ns, name string, labels map[string]string) runtime.Object {
		u := clitest.Obj(apiVersion, kind, name)
		u.SetNamespace(ns)
		u.SetLabels(labels)
		return u
	}
	member := map[string]string{applySetPartOfLabel: id}
	c := fake.NewClient(
		obj("v1", "ConfigMap", "prod", "kept", member),                                                           // declared again
		obj("v1", "ConfigMap", "prod", "old", member),                                                            // pruned
		obj("v1", "ConfigMap", "team", "old-team", member),                                                       // pruned: the set's namespace
		obj("v1", "ConfigMap", "elsewhere", "outside-ns", member),                                                // a namespace the set does not list
		obj("v1", "ConfigMap", "prod", "other-set", map[string]string{applySetPartOfLabel: "applyset-other-v1"}), // another set
		obj("v1", "ConfigMap", "prod", "unlabelled", nil),                                                        // no set
		obj("v1", "Secret", "prod", "old-secret", member),                                                        // a kind the set does not list
		obj("example.com/v1", "Gadget", "", "old-gadget", member),                                                // cluster-scoped member
		obj("example.com/v1", "Gadget", "", "kept-gadget", member),                                               // declared again
	)
	if err := c.Register(fake.ResourceInfo{GVR: gadgetMapping.Resource, Kind: "Gadget"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func pruneTestSet() *applySet {
	a := newApplySet(parentRef{name: "web", namespace: "prod", mapping: secretMapping})
	a.current = gkSet{{Kind: "ConfigMap"}: {}}
	a.currentNS = nsSet{"prod": {}, "team": {}}
	a.updated = gkSet{{Group: "example.com", Kind: "Gadget"}: {}}
	return a
}

// Only objects with the set's part-of label, of the set's kinds (old and
// new), in its namespaces, and not declared again are pruned.
func TestPruneSelection(t *testing.T) {
	a := pruneTestSet()
	c := pruneWorld(t, a)
	tasks := []listTask{
		{mapping: cmMapping, namespace: "prod"}, {mapping: cmMapping, namespace: "team"},
		{mapping: gadgetMapping},
	}
	keep := map[objKey]bool{
		{gk: schema.GroupKind{Kind: "ConfigMap"}, namespace: "prod", name: "kept"}:        true,
		{gk: schema.GroupKind{Group: "example.com", Kind: "Gadget"}, name: "kept-gadget"}: true,
	}
	cands, err := a.candidates(t.Context(), c, tasks, keep, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cand := range cands {
		got = append(got, cand.key.String())
	}
	want := []string{"configmap/old -n prod", "configmap/old-team -n team", "gadget.example.com/old-gadget"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("candidates (-want +got):\n%s", diff)
	}

	// A server that ignores the label selector (an aggregated API may)
	// still yields only members.
	cands2, err := a.candidates(t.Context(), &selectorIgnoring{c}, tasks, keep, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cands2) != len(cands) {
		t.Fatalf("with selectors ignored: %d candidates, want %d", len(cands2), len(cands))
	}

	// A client-side dry run deletes nothing.
	for _, r := range prune(t.Context(), c, cands, cli.DryRunClient, 2) {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	if n := len(c.Objects(cmMapping.Resource)); n != 6 {
		t.Fatalf("dry run: %d ConfigMaps left, want 6", n)
	}

	// An object replaced since it was listed (another UID) is left alone.
	replaced := cands[0]
	replaced.obj = replaced.obj.DeepCopy()
	replaced.obj.SetUID(types.UID("not-the-listed-one"))
	res := prune(t.Context(), c, []pruneCandidate{replaced}, cli.DryRunNone, 1)
	if !apierrors.IsConflict(res[0].err) {
		t.Fatalf("prune of a replaced object: %v, want a Conflict", res[0].err)
	}

	for _, r := range prune(t.Context(), c, cands, cli.DryRunNone, 2) {
		if r.err != nil {
			t.Fatalf("%s: %v", r.cand.key, r.err)
		}
	}
	var left []string
	for _, gvr := range []schema.GroupVersionResource{cmMapping.Resource, secretMapping.Resource, gadgetMapping.Resource} {
		for _, o := range c.Objects(gvr) {
			left = append(left, o.GetNamespace()+"/"+o.GetName())
		}
	}
	wantLeft := []string{"elsewhere/outside-ns", "prod/kept", "prod/other-set", "prod/unlabelled", "prod/old-secret", "/kept-gadget"}
	if diff := cmp.Diff(wantLeft, left); diff != "" {
		t.Errorf("objects left (-want +got):\n%s", diff)
	}
	// Pruning what is gone already is not an error.
	for _, r := range prune(t.Context(), c, cands[:1], cli.DryRunNone, 1) {
		if r.err != nil {
			t.Errorf("pruning a deleted object again: %v", r.err)
		}
	}
}

// selectorIgnoring drops label selectors from lists.
type selectorIgnoring struct{ dynamic.Interface }

func (s *selectorIgnoring) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &selectorIgnoringNRI{s.Interface.Resource(gvr)}
}

type selectorIgnoringNRI struct {
	dynamic.NamespaceableResourceInterface
}

func (s *selectorIgnoringNRI) Namespace(ns string) dynamic.ResourceInterface {
	return &selectorIgnoringRI{s.NamespaceableResourceInterface.Namespace(ns)}
}

func (s *selectorIgnoringNRI) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	opts.LabelSelector = ""
	return s.NamespaceableResourceInterface.List(ctx, opts)
}

type selectorIgnoringRI struct{ dynamic.ResourceInterface }

func (s *selectorIgnoringRI) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	opts.LabelSelector = ""
	return s.ResourceInterface.List(ctx, opts)
}

// The summary of an apply --prune that did not finish names what was
// applied, not applied, pruned and left.
func TestPruneSummary(t *testing.T) {
	a := pruneTestSet()
	cm := func(ns, name string) objKey {
		return objKey{gk: schema.GroupKind{Kind: "ConfigMap"}, namespace: ns, name: name}
	}
	s := &pruneSummary{
		set: a, reason: "some members could not be pruned",
		applied: []objKey{cm("prod", "b"), cm("prod", "a")},
		pruned:  []pruneCandidate{{key: cm("prod", "old")}},
		pruneFailed: []pruneResult{{cand: pruneCandidate{key: objKey{gk: schema.GroupKind{Kind: "Secret"}, namespace: "prod", name: "s"}},
			err: apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "s", errFake)}},
	}
	var b strings.Builder
	s.write(&b)
	want := `ApplySet secret/web -n prod: apply --prune did not finish: some members could not be pruned
  applied (2):
    configmap/a -n prod
    configmap/b -n prod
  pruned (1):
    configmap/old -n prod
  left in the set, not pruned (1):
    secret/s -n prod: Error from server (Forbidden): secrets "s" is forbidden: no
  The parent lists the kinds and namespaces of the previous apply and of this one, so the next apply --prune that succeeds prunes what is left.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if got := pruneErrorMessage(s.pruneFailed[0]); got != `Error from server (Forbidden): error when pruning secret/s -n prod: secrets "s" is forbidden: no` {
		t.Errorf("prune error: %s", got)
	}
}

type fakeErr string

func (e fakeErr) Error() string { return string(e) }

var errFake = fakeErr("no")
