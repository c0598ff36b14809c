package wait

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

func TestSplitJSONPathCond(t *testing.T) {
	for _, tc := range []struct {
		in, expr, value string
		has             bool
	}{
		{"{.status.phase}=Running", "{.status.phase}", "Running", true},
		{"{.status.phase}", "{.status.phase}", "", false},
		{".status.phase=Running", ".status.phase", "Running", true},
		{`{.status.conditions[?(@.type=="Ready")].status}=True`, `{.status.conditions[?(@.type=="Ready")].status}`, "True", true},
		{`.status.conditions[?(@.type=="Ready")].status=True`, `.status.conditions[?(@.type=="Ready")].status`, "True", true},
		{`{.a}=x=y`, "{.a}", "x=y", true},
		{`{.a}=`, "{.a}", "", true},
		{`{.metadata.labels.a\=b}`, `{.metadata.labels.a\=b}`, "", false},
	} {
		expr, value, has := splitJSONPathCond(tc.in)
		if expr != tc.expr || value != tc.value || has != tc.has {
			t.Errorf("splitJSONPathCond(%q) = %q, %q, %v; want %q, %q, %v", tc.in, expr, value, has, tc.expr, tc.value, tc.has)
		}
	}
}

func TestParseWaitConds(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []waitCond // kind and the compared fields only
		err  string
	}{
		{in: []string{"delete"}, want: []waitCond{{kind: waitForDelete}}},
		{in: []string{"Create"}, want: []waitCond{{kind: waitForCreate}}},
		{in: []string{"condition=Ready"}, want: []waitCond{{kind: waitForCondition, condType: "Ready", condStatus: "true"}}},
		{in: []string{"condition=Ready=False"}, want: []waitCond{{kind: waitForCondition, condType: "Ready", condStatus: "False"}}},
		{in: []string{"jsonpath={.status.phase}=Running"}, want: []waitCond{{kind: waitForJSONPath, value: "Running"}}},
		{in: []string{`jsonpath={.status.phase}="Running"`}, want: []waitCond{{kind: waitForJSONPath, value: "Running"}}},
		{in: []string{"jsonpath={.status.phase}"}, want: []waitCond{{kind: waitForJSONPath, anyValue: true}}},
		{in: []string{"create", "condition=Ready", "jsonpath=.spec.x=1"}, want: []waitCond{{kind: waitForCreate}, {kind: waitForCondition, condType: "Ready", condStatus: "true"}, {kind: waitForJSONPath, value: "1"}}},
		{in: nil, err: "--for is required"},
		{in: []string{"Ready"}, want: []waitCond{{kind: waitForReady}}},
		{in: []string{"ready", "condition=Available"}, want: []waitCond{{kind: waitForReady}, {kind: waitForCondition, condType: "Available", condStatus: "true"}}},
		{in: []string{"readiness"}, err: `unrecognized condition: "readiness"`},
		{in: []string{"delete", "ready"}, err: "--for=delete cannot be combined"},
		{in: []string{"condition="}, err: "condition name is empty"},
		{in: []string{"jsonpath="}, err: "jsonpath expression cannot be empty"},
		{in: []string{"jsonpath={.a}="}, err: "jsonpath wait has to have a value after equal sign"},
		{in: []string{"jsonpath={.a"}, err: "unclosed"},
		{in: []string{"jsonpath={.a[}=1"}, err: "jsonpath"},
		{in: []string{"delete", "condition=Ready"}, err: "--for=delete cannot be combined"},
	} {
		got, err := parseWaitConds(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseWaitConds(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseWaitConds(%q): %v", tc.in, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("parseWaitConds(%q) = %d conditions, want %d", tc.in, len(got), len(tc.want))
			continue
		}
		for i, w := range tc.want {
			g := got[i]
			if g.kind != w.kind || g.condType != w.condType || g.condStatus != w.condStatus || g.value != w.value || g.anyValue != w.anyValue {
				t.Errorf("parseWaitConds(%q)[%d] = %+v, want %+v", tc.in, i, g, w)
			}
			if g.kind == waitForJSONPath && g.path == nil {
				t.Errorf("parseWaitConds(%q)[%d]: no parsed path", tc.in, i)
			}
		}
	}
}

func waitObj(generation int64, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.kdyn.io/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g", "generation": generation},
		"spec":     map[string]any{"replicas": int64(3), "enabled": false, "empty": "", "list": []any{"a", "b"}},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestWaitCondMet(t *testing.T) {
	cond := func(typ, st string, observed ...int64) map[string]any {
		c := map[string]any{"type": typ, "status": st}
		if len(observed) > 0 {
			c["observedGeneration"] = observed[0]
		}
		return c
	}
	ready := waitObj(2, map[string]any{"phase": "Running", "conditions": []any{cond("Progressing", "True"), cond("Ready", "True", 2)}})
	stale := waitObj(3, map[string]any{"conditions": []any{cond("Ready", "True", 2)}})
	staleStatus := waitObj(3, map[string]any{"observedGeneration": int64(2), "conditions": []any{cond("Ready", "True")}})
	notReady := waitObj(1, map[string]any{"conditions": []any{cond("Ready", "False")}})
	noStatus := waitObj(1, nil)
	badStatus := waitObj(1, nil)
	badStatus.Object["status"] = "weird"

	for _, tc := range []struct {
		name string
		for_ string
		obj  *unstructured.Unstructured
		want bool
		err  string
	}{
		{"delete absent", "delete", nil, true, ""},
		{"delete present", "delete", ready, false, ""},
		{"create absent", "create", nil, false, ""},
		{"create present", "create", noStatus, true, ""},
		{"condition met", "condition=Ready", ready, true, ""},
		{"condition any case", "condition=ready=TRUE", ready, true, ""},
		{"condition other value", "condition=Ready=False", notReady, true, ""},
		{"condition not met", "condition=Ready", notReady, false, ""},
		{"condition missing", "condition=Available", ready, false, ""},
		{"condition stale generation", "condition=Ready", stale, false, ""},
		{"condition stale status generation", "condition=Ready", staleStatus, false, ""},
		{"condition no status", "condition=Ready", noStatus, false, ""},
		{"condition status not a map", "condition=Ready", badStatus, false, ""},
		{"condition absent object", "condition=Ready", nil, false, ""},
		{"jsonpath value", "jsonpath={.status.phase}=Running", ready, true, ""},
		{"jsonpath other value", "jsonpath={.status.phase}=Failed", ready, false, ""},
		{"jsonpath number", "jsonpath=.spec.replicas=3", ready, true, ""},
		{"jsonpath false value", "jsonpath={.spec.enabled}=false", ready, true, ""},
		{"jsonpath filter", `jsonpath={.status.conditions[?(@.type=="Ready")].status}=True`, ready, true, ""},
		{"jsonpath exists", "jsonpath={.status.phase}", ready, true, ""},
		{"jsonpath exists even false", "jsonpath={.spec.enabled}", ready, true, ""},
		{"jsonpath exists even empty", "jsonpath={.spec.empty}", ready, true, ""},
		{"jsonpath missing", "jsonpath={.status.phase}", noStatus, false, ""},
		{"jsonpath missing with value", "jsonpath={.status.phase}=Running", noStatus, false, ""},
		{"jsonpath nested", "jsonpath={.spec}=x", ready, false, "nested object or list"},
		{"jsonpath nested exists", "jsonpath={.spec.list}", ready, true, ""},
		{"jsonpath several values", "jsonpath={.spec.list[*]}=a", ready, false, "more than one value"},
		{"jsonpath absent object", "jsonpath={.status.phase}", nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds, err := parseWaitConds([]string{tc.for_})
			if err != nil {
				t.Fatal(err)
			}
			got, err := allMet(conds, tc.obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("met = %v, want %v", got, tc.want)
			}
		})
	}

	// Several conditions must all hold.
	conds, err := parseWaitConds([]string{"condition=Ready", "jsonpath={.status.phase}=Running"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := allMet(conds, ready); !ok {
		t.Error("both conditions hold but allMet is false")
	}
	running := waitObj(1, map[string]any{"phase": "Running"})
	if ok, _ := allMet(conds, running); ok {
		t.Error("one condition fails but allMet is true")
	}
}

func TestWaitTimeoutError(t *testing.T) {
	err := &waitTimeoutError{"timed out waiting for the condition on configmaps/x"}
	if got := cli.ExitCode(err, true); got != cli.ExitTimeout {
		t.Errorf("exit code with --exit-codes = %d, want %d", got, cli.ExitTimeout)
	}
	if got := cli.ExitCode(err, false); got != cli.ExitGeneric {
		t.Errorf("exit code = %d, want %d", got, cli.ExitGeneric)
	}
	if got := cli.ErrorMessage(err); got != "error: timed out waiting for the condition on configmaps/x" {
		t.Errorf("message = %q", got)
	}
}

// fakeWaitResource scripts the lists and watches one wait group sees.
type fakeWaitResource struct {
	dynamic.ResourceInterface // unused methods panic

	lists    []*unstructured.UnstructuredList
	watches  [][]watch.Event
	nlist    int
	watchRVs []string
}

func (r *fakeWaitResource) Namespace(string) dynamic.ResourceInterface { return r }

func (r *fakeWaitResource) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if r.nlist >= len(r.lists) {
		return nil, fmt.Errorf("unexpected list %d", r.nlist+1)
	}
	r.nlist++
	return r.lists[r.nlist-1], nil
}

func (r *fakeWaitResource) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.watchRVs = append(r.watchRVs, opts.ResourceVersion)
	if len(r.watchRVs) > len(r.watches) {
		return nil, fmt.Errorf("unexpected watch %d", len(r.watchRVs))
	}
	events := r.watches[len(r.watchRVs)-1]
	w := watch.NewFakeWithChanSize(len(events), false)
	for _, ev := range events {
		w.Action(ev.Type, ev.Object)
	}
	w.Stop() // the stream ends after its events
	return w, nil
}

type fakeWaitClient struct{ r *fakeWaitResource }

func (c fakeWaitClient) Resource(schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return c.r
}

func waitTestGizmo(rv, uid string, ready bool) *unstructured.Unstructured {
	u := waitObj(1, nil)
	u.SetNamespace("ns")
	u.SetResourceVersion(rv)
	u.SetUID(types.UID(uid))
	if ready {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	}
	return u
}

func waitTestList(rv string, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetResourceVersion(rv)
	for _, it := range items {
		l.Items = append(l.Items, *it)
	}
	return l
}

func waitTestBookmark(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "test.kdyn.io/v1", "kind": "Gizmo"}}
	u.SetResourceVersion(rv)
	return u
}

// TestWaitGroupRecovery drives one wait group through scripted lists and
// watches: a watch that ends is resumed from the last resourceVersion seen
// (bookmarks included), and a 410 is answered by a new list.
func TestWaitGroupRecovery(t *testing.T) {
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	for _, tc := range []struct {
		name     string
		forConds []string
		res      *fakeWaitResource
		watchRVs []string
		nlist    int
	}{
		{
			name:     "resume after the stream ends",
			forConds: []string{"condition=Ready"},
			res: &fakeWaitResource{
				lists: []*unstructured.UnstructuredList{waitTestList("10", waitTestGizmo("10", "a", false))},
				watches: [][]watch.Event{
					{{Type: watch.Modified, Object: waitTestGizmo("11", "a", false)}},
					{{Type: watch.Bookmark, Object: waitTestBookmark("15")}},
					{{Type: watch.Modified, Object: waitTestGizmo("16", "a", true)}},
				},
			},
			watchRVs: []string{"10", "11", "15"},
			nlist:    1,
		},
		{
			name:     "relist after 410",
			forConds: []string{"condition=Ready"},
			res: &fakeWaitResource{
				lists: []*unstructured.UnstructuredList{
					waitTestList("10", waitTestGizmo("10", "a", false)),
					waitTestList("30", waitTestGizmo("25", "a", true)),
				},
				watches: [][]watch.Event{{{Type: watch.Error, Object: gone}}},
			},
			watchRVs: []string{"10"},
			nlist:    2,
		},
		{
			name:     "deleted and created again while the watch was down",
			forConds: []string{"delete"},
			res: &fakeWaitResource{
				lists: []*unstructured.UnstructuredList{
					waitTestList("10", waitTestGizmo("10", "a", false)),
					waitTestList("30", waitTestGizmo("29", "b", false)),
				},
				watches: [][]watch.Event{{{Type: watch.Error, Object: gone}}},
			},
			watchRVs: []string{"10"},
			nlist:    2,
		},
		{
			name:     "deleted",
			forConds: []string{"delete"},
			res: &fakeWaitResource{
				lists:   []*unstructured.UnstructuredList{waitTestList("10", waitTestGizmo("10", "a", false))},
				watches: [][]watch.Event{{{Type: watch.Modified, Object: waitTestGizmo("11", "a", true)}, {Type: watch.Deleted, Object: waitTestGizmo("12", "a", true)}}},
			},
			watchRVs: []string{"10"},
			nlist:    1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds, err := parseWaitConds(tc.forConds)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			p, err := cli.NewResultPrinter(&out, "", false)
			if err != nil {
				t.Fatal(err)
			}
			w := &waiter{client: fakeWaitClient{tc.res}, conds: conds, p: p, forDelete: tc.forConds[0] == "delete"}
			m := restmapper.Match{
				GVR:        schema.GroupVersionResource{Group: "test.kdyn.io", Version: "v1", Resource: "gizmos"},
				GVK:        schema.GroupVersionKind{Group: "test.kdyn.io", Version: "v1", Kind: "Gizmo"},
				Namespaced: true,
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			unmet, err := w.runGroup(ctx, waitGroup{match: m, ns: "ns", names: []string{"g"}})
			if err != nil || len(unmet) > 0 {
				t.Fatalf("runGroup = %v, %v", unmet, err)
			}
			if got := out.String(); got != "gizmo.test.kdyn.io/g condition met\n" {
				t.Errorf("output = %q", got)
			}
			if diff := cmp.Diff(tc.watchRVs, tc.res.watchRVs); diff != "" {
				t.Errorf("watch resourceVersions (-want +got):\n%s", diff)
			}
			if tc.res.nlist != tc.nlist {
				t.Errorf("%d lists, want %d", tc.res.nlist, tc.nlist)
			}
		})
	}
}
