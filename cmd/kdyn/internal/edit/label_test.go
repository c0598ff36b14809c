package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSplitMetaArgs(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		res, pairs []string
		err        string
	}{
		{args: []string{"cm", "x", "a=b", "c-"}, res: []string{"cm", "x"}, pairs: []string{"a=b", "c-"}},
		{args: []string{"cm/x", "cm/y", "a="}, res: []string{"cm/x", "cm/y"}, pairs: []string{"a="}},
		{args: []string{"cm", "a=b", "x"}, err: "all resources must be specified before label changes: x"},
		{args: []string{"cm", "-"}, res: []string{"cm", "-"}},
	} {
		res, pairs, err := splitMetaArgs(tc.args, labelsField)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("splitMetaArgs(%q) error = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(res, tc.res, cmpopts.EquateEmpty()) || !cmp.Equal(pairs, tc.pairs, cmpopts.EquateEmpty()) {
			t.Errorf("splitMetaArgs(%q) = %q, %q, %v", tc.args, res, pairs, err)
		}
	}
}

func TestParseMetaPairs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mf     metaField
		pairs  []string
		set    map[string]string
		remove []string
		err    string
	}{
		{name: "set and remove", mf: labelsField, pairs: []string{"app=web", "example.com/tier=front", "old-"}, set: map[string]string{"app": "web", "example.com/tier": "front"}, remove: []string{"old"}},
		{name: "empty value", mf: labelsField, pairs: []string{"app="}, set: map[string]string{"app": ""}},
		{name: "two equals", mf: labelsField, pairs: []string{"a=b=c"}, err: "invalid label spec: a=b=c"},
		{name: "bad key", mf: labelsField, pairs: []string{"bad key=x"}, err: `invalid label key "bad key": name part must consist of alphanumeric characters`},
		{name: "bad prefix", mf: labelsField, pairs: []string{"Ex_ample/a=x"}, err: `invalid label key "Ex_ample/a": prefix part`},
		{name: "empty key", mf: labelsField, pairs: []string{"=x"}, err: `invalid label key ""`},
		{name: "bad value", mf: labelsField, pairs: []string{"a=-x"}, err: `invalid label value: "a=-x": a valid label must be`},
		{name: "long value", mf: labelsField, pairs: []string{"a=" + strings.Repeat("x", 64)}, err: "must be no more than 63"},
		{name: "bad removed key", mf: labelsField, pairs: []string{"a b-"}, err: `invalid label key "a b"`},
		{name: "both", mf: labelsField, pairs: []string{"a=1", "a-"}, err: "can not both modify and remove a label in the same command"},
		{name: "annotation value with =", mf: annotationsField, pairs: []string{"note=a=b c", "x-"}, set: map[string]string{"note": "a=b c"}, remove: []string{"x"}},
		{name: "annotation bad key", mf: annotationsField, pairs: []string{"no spaces=1"}, err: `invalid annotation key "no spaces"`},
		{name: "annotation both", mf: annotationsField, pairs: []string{"a=1", "a-", "b=2", "b-"}, err: "can not both modify and remove the following annotation(s) in the same command: a, b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, remove, err := parseMetaPairs(tc.pairs, tc.mf)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.set, set, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("set (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.remove, remove, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("remove (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeMetaChange(t *testing.T) {
	cur := map[string]string{"app": "web", "tier": "front", "keep": "1"}
	for _, tc := range []struct {
		name      string
		mf        metaField
		set       map[string]string
		remove    []string
		overwrite bool
		patch     map[string]any
		result    map[string]string
		missing   []string
		msg       string
		err       string
	}{
		{name: "add", mf: labelsField, set: map[string]string{"new": "x"}, patch: map[string]any{"new": "x"},
			result: map[string]string{"app": "web", "tier": "front", "keep": "1", "new": "x"}, msg: msgLabeled},
		{name: "same value needs no overwrite", mf: labelsField, set: map[string]string{"app": "web"}, patch: map[string]any{},
			result: cur, msg: msgNotLabeled},
		{name: "refuse", mf: labelsField, set: map[string]string{"app": "api"}, err: "'app' already has a value (web), and --overwrite is false"},
		{name: "refuse two", mf: labelsField, set: map[string]string{"app": "api", "tier": "back"},
			err: "['app' already has a value (web), and --overwrite is false, 'tier' already has a value (front), and --overwrite is false]"},
		{name: "overwrite", mf: labelsField, set: map[string]string{"app": "api"}, overwrite: true, patch: map[string]any{"app": "api"},
			result: map[string]string{"app": "api", "tier": "front", "keep": "1"}, msg: msgLabeled},
		{name: "remove", mf: labelsField, remove: []string{"tier", "absent"}, patch: map[string]any{"tier": nil},
			result: map[string]string{"app": "web", "keep": "1"}, missing: []string{"absent"}, msg: msgUnlabeled},
		{name: "add and remove", mf: labelsField, set: map[string]string{"n": "1"}, remove: []string{"tier"}, patch: map[string]any{"n": "1", "tier": nil},
			result: map[string]string{"app": "web", "keep": "1", "n": "1"}, msg: msgLabelsChanged},
		{name: "annotation refuse", mf: annotationsField, set: map[string]string{"app": "x", "tier": "y"},
			err: "--overwrite is false but found the following declared annotation(s): 'app' already has a value (web); 'tier' already has a value (front)"},
		{name: "change-cause may change", mf: annotationsField, set: map[string]string{"kubernetes.io/change-cause": "b"},
			patch: map[string]any{"kubernetes.io/change-cause": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			current := cur
			if tc.name == "change-cause may change" {
				current = map[string]string{"kubernetes.io/change-cause": "a"}
				tc.result = map[string]string{"kubernetes.io/change-cause": "b"}
			}
			ch, err := computeMetaChange(current, tc.set, tc.remove, tc.overwrite, tc.mf)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v\nwant    %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.patch, ch.patch, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.result, ch.result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.missing, ch.missing, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if tc.msg != "" {
				if got := labelMessage(current, ch.result); got != tc.msg {
					t.Errorf("labelMessage = %q, want %q", got, tc.msg)
				}
			}
		})
	}
	if cur["app"] != "web" || len(cur) != 3 {
		t.Errorf("computeMetaChange modified its input: %v", cur)
	}
}

func TestMetaPatch(t *testing.T) {
	for _, tc := range []struct {
		field   string
		changes map[string]any
		rv      string
		cause   string
		want    string
	}{
		{"labels", map[string]any{"a": "1", "b": nil}, "", "", `{"metadata":{"labels":{"a":"1","b":null}}}`},
		{"labels", map[string]any{}, "42", "", `{"metadata":{"resourceVersion":"42"}}`},
		{"labels", map[string]any{"a": "1"}, "42", "", `{"metadata":{"labels":{"a":"1"},"resourceVersion":"42"}}`},
		{"labels", map[string]any{"a": "1"}, "", "kubectl label pods p a=1 --record=true", `{"metadata":{"annotations":{"kubernetes.io/change-cause":"kubectl label pods p a=1 --record=true"},"labels":{"a":"1"}}}`},
		{"annotations", map[string]any{"a": "1"}, "", "kubectl annotate pods p a=1 --record=true", `{"metadata":{"annotations":{"a":"1","kubernetes.io/change-cause":"kubectl annotate pods p a=1 --record=true"}}}`},
	} {
		got, err := metaPatch(tc.field, tc.changes, tc.rv, tc.cause)
		if err != nil || string(got) != tc.want {
			t.Errorf("metaPatch(%s, %v, %q, %q) = %s, %v; want %s", tc.field, tc.changes, tc.rv, tc.cause, got, err, tc.want)
		}
	}
}
