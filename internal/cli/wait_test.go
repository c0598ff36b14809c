package cli

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
		{in: []string{"ready"}, err: `unrecognized condition: "ready"`},
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
	if got := exitCode(err, true); got != exitTimeout {
		t.Errorf("exit code with --exit-codes = %d, want %d", got, exitTimeout)
	}
	if got := exitCode(err, false); got != exitGeneric {
		t.Errorf("exit code = %d, want %d", got, exitGeneric)
	}
	if got := errorMessage(err); got != "error: timed out waiting for the condition on configmaps/x" {
		t.Errorf("message = %q", got)
	}
}
