package auth

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPrintRules: kubectl's own test case for can-i --list (its
// TestRunAccessList), and verbs merged back per resource in the order
// they came, rules sorted as kubectl's generated String sorts them.
func TestPrintRules(t *testing.T) {
	review := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"resourceRules": []any{map[string]any{
			"verbs": []any{"get", "list"}, "apiGroups": []any{"*"}, "resources": []any{"pod", "job"}, "resourceNames": []any{"test-resource"},
		}},
		"nonResourceRules": []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/apis/*", "/version"}}},
	}}}
	var buf bytes.Buffer
	if err := printRules(&buf, reviewRules(review), true); err != nil {
		t.Fatal(err)
	}
	want := "Resources   Non-Resource URLs   Resource Names    Verbs\n" +
		"job.*       []                  [test-resource]   [get list]\n" +
		"pod.*       []                  [test-resource]   [get list]\n" +
		"            [/apis/*]           []                [get]\n" +
		"            [/version]          []                [get]\n"
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	rules := []rule{
		{Verbs: []string{"watch"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}},
		{Verbs: []string{"get", "watch"}, APIGroups: []string{"", "apps"}, Resources: []string{"configmaps"}},
		{Verbs: []string{"list", "get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	}
	buf.Reset()
	if err := printRules(&buf, rules, false); err != nil {
		t.Fatal(err)
	}
	want = "*.*                      []    []    [*]\n" +
		"configmaps               []    []    [get watch list]\n" +
		"configmaps.apps          []    []    [get watch]\n" +
		"deployments.apps/scale   []    []    [watch]\n"
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestResourceGroup(t *testing.T) {
	for _, tc := range []struct {
		res, groups []string
		want        string
	}{
		{nil, nil, ""},
		{[]string{"pods"}, []string{""}, "pods"},
		{[]string{"pods/log"}, []string{""}, "pods/log"},
		{[]string{"deployments/scale"}, []string{"apps"}, "deployments.apps/scale"},
		{[]string{"*"}, []string{"*"}, "*.*"},
	} {
		if got := resourceGroup(tc.res, tc.groups); got != tc.want {
			t.Errorf("resourceGroup(%v, %v) = %q, want %q", tc.res, tc.groups, got, tc.want)
		}
	}
}

func TestPrintUserInfo(t *testing.T) {
	raw := []byte(`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{},"status":{"userInfo":{"username":"jane","uid":"42","groups":["dev","system:authenticated"],"extra":{"scopes":["b","a"],"at":["x"]}}}}`)
	var buf bytes.Buffer
	if err := printUserInfo(&buf, raw); err != nil {
		t.Fatal(err)
	}
	want := "ATTRIBUTE       VALUE\n" +
		"Username        jane\n" +
		"UID             42\n" +
		"Groups          [dev system:authenticated]\n" +
		"Extra: at       [x]\n" +
		"Extra: scopes   [b a]\n"
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
