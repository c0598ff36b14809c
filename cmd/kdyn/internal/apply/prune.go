package apply

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

// objKey identifies an object: group-kind, namespace ("" when
// cluster-scoped) and name.
type objKey struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

// String names the object as kdyn's messages do: "configmap/a -n prod".
func (k objKey) String() string {
	s := printers.KindName(k.gk, k.name)
	if k.namespace != "" {
		s += " -n " + k.namespace
	}
	return s
}

func compareKeys(a, b objKey) int {
	return cmp.Or(cmp.Compare(a.gk.Group, b.gk.Group), cmp.Compare(a.gk.Kind, b.gk.Kind),
		cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

// pruneCandidate is a live member of the set that this apply does not
// declare.
type pruneCandidate struct {
	key     objKey
	mapping *meta.RESTMapping
	obj     *unstructured.Unstructured
}

// listTask is one list of members: a resource in a namespace ("" for a
// cluster-scoped resource).
type listTask struct {
	mapping   *meta.RESTMapping
	namespace string
}

// listTasks returns the lists that find every member: each group-kind the
// parent lists or this apply adds, in each namespace of the set when it is
// namespaced. A kind the server no longer serves can have no objects left
// and is skipped (kubectl fails on it instead, and the set is stuck until
// its parent is edited by hand).
func (a *applySet) listTasks(ctx context.Context, mapper *restmapper.Mapper) ([]listTask, []schema.GroupKind, error) {
	var tasks []listTask
	var gone []schema.GroupKind
	gks := make([]schema.GroupKind, 0, len(a.kinds()))
	for gk := range a.kinds() {
		gks = append(gks, gk)
	}
	slices.SortFunc(gks, func(x, y schema.GroupKind) int { return cmp.Compare(x.String(), y.String()) })
	nss := a.namespaces().sorted()
	for _, gk := range gks {
		m, err := mapper.RESTMappingWithContext(ctx, gk)
		if meta.IsNoMatchError(err) {
			gone = append(gone, gk)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("could not find mapping for kind %s of the ApplySet: %w", gk, err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			tasks = append(tasks, listTask{mapping: m})
			continue
		}
		for _, ns := range nss {
			tasks = append(tasks, listTask{mapping: m, namespace: ns})
		}
	}
	return tasks, gone, nil
}

// candidates lists the set's members (the part-of label with this set's
// id, in the set's kinds and namespaces) and returns those not in keep,
// sorted. The lists run concurrently, at most workers at a time. An object
// whose label the server did not filter on (an aggregated API may ignore
// selectors) is checked again here: only members are returned.
func (a *applySet) candidates(ctx context.Context, c dynamic.Interface, tasks []listTask, keep map[objKey]bool, workers int) ([]pruneCandidate, error) {
	id := a.parent.id()
	member := func(obj *unstructured.Unstructured) bool { return obj.GetLabels()[applySetPartOfLabel] == id }
	return listCandidates(ctx, c, tasks, applySetPartOfLabel+"="+id, member, keep, workers)
}

// listCandidates runs the lists of tasks (with the label selector sel) at
// most workers at a time and returns the objects member accepts that keep
// does not hold, sorted.
func listCandidates(ctx context.Context, c dynamic.Interface, tasks []listTask, sel string, member func(*unstructured.Unstructured) bool, keep map[objKey]bool, workers int) ([]pruneCandidate, error) {
	var mu sync.Mutex
	var out []pruneCandidate
	var firstErr error
	cli.ForEach(len(tasks), workers, func(i int) {
		t := tasks[i]
		ri := c.Resource(t.mapping.Resource).Namespace(t.namespace) // "": cluster-scoped or all namespaces
		var found []pruneCandidate
		var err error
		for obj, lerr := range dynamic.Items(ctx, ri, metav1.ListOptions{LabelSelector: sel}, dynamic.PageOptions{}) {
			if lerr != nil {
				err = fmt.Errorf("listing %s objects for pruning: %w", t.mapping.GroupVersionKind.Kind, lerr)
				break
			}
			if !member(obj) {
				continue
			}
			k := objKey{gk: t.mapping.GroupVersionKind.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}
			if keep[k] {
				continue
			}
			found = append(found, pruneCandidate{key: k, mapping: t.mapping, obj: obj})
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil && firstErr == nil {
			firstErr = err
		}
		out = append(out, found...)
	})
	if firstErr != nil {
		return nil, firstErr
	}
	slices.SortFunc(out, func(x, y pruneCandidate) int { return compareKeys(x.key, y.key) })
	return out, nil
}

// pruneResult is the outcome of deleting one candidate.
type pruneResult struct {
	cand pruneCandidate
	err  error
}

// prune deletes the candidates through c (whose decorators add dryRun for
// a server dry run), at most workers at a time, each with its UID as a
// precondition, so that an object replaced since it was listed is not
// deleted. Dependents are deleted in the background, as kubectl's default
// --cascade does. An object already gone counts as pruned. With a
// client-side dry run nothing is sent. Results are in the candidates'
// order.
func prune(ctx context.Context, c dynamic.Interface, cands []pruneCandidate, dry cli.DryRunMode, workers int) []pruneResult {
	out := make([]pruneResult, len(cands))
	background := metav1.DeletePropagationBackground
	cli.ForEach(len(cands), workers, func(i int) {
		cand := cands[i]
		out[i].cand = cand
		if dry == cli.DryRunClient {
			return
		}
		if err := ctx.Err(); err != nil {
			out[i].err = err
			return
		}
		uid := cand.obj.GetUID()
		err := c.Resource(cand.mapping.Resource).Namespace(cand.key.namespace).Delete(ctx, cand.key.name, metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid},
			PropagationPolicy: &background,
		})
		if apierrors.IsNotFound(err) {
			err = nil
		}
		out[i].err = err
	})
	return out
}
