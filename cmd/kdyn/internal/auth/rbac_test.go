package auth

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUncovered(t *testing.T) {
	for _, c := range []struct {
		name           string
		owner, servant []rule
		want           []rule
	}{
		{
			name:    "all covered",
			owner:   []rule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
			servant: []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
			want:    []rule{},
		},
		{
			name:    "broken down to what is missing",
			owner:   []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
			servant: []rule{{Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"}, Resources: []string{"pods"}}},
			want: []rule{
				{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}},
				{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"pods"}},
				{Verbs: []string{"list"}, APIGroups: []string{"apps"}, Resources: []string{"pods"}},
			},
		},
		{
			name:    "wildcards",
			owner:   []rule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
			servant: []rule{{Verbs: []string{"delete"}, APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}, ResourceNames: []string{"web"}}},
			want:    []rule{},
		},
		{
			name:    "a subresource wildcard",
			owner:   []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}},
			servant: []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status", "pods"}}},
			want:    []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}},
		},
		{
			name:    "names: an owner without names covers them, one with names only those",
			owner:   []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}},
			servant: []rule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a", "b"}}, {Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}},
			want: []rule{
				{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"b"}},
				{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}},
			},
		},
		{
			name:    "non-resource URLs and their prefixes",
			owner:   []rule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/*", "/metrics"}}},
			servant: []rule{{Verbs: []string{"get", "post"}, NonResourceURLs: []string{"/healthz/ready", "/metrics", "/version"}}},
			want: []rule{
				{Verbs: []string{"post"}, NonResourceURLs: []string{"/healthz/ready"}},
				{Verbs: []string{"post"}, NonResourceURLs: []string{"/metrics"}},
				{Verbs: []string{"get"}, NonResourceURLs: []string{"/version"}},
				{Verbs: []string{"post"}, NonResourceURLs: []string{"/version"}},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := uncovered(c.owner, c.servant); !reflect.DeepEqual(got, c.want) {
				t.Errorf("uncovered:\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func podsRule(verbs ...string) rule {
	return rule{Verbs: verbs, APIGroups: []string{""}, Resources: []string{"pods"}}
}

func TestReconcileRole(t *testing.T) {
	existing := &roleObject{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"a": "1"}}, Rules: []rule{podsRule("get"), podsRule("delete")}}
	expected := &roleObject{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rule{podsRule("get", "list")}}

	res := reconcileRole(existing, expected, false)
	if res.op != opUpdate || res.protected {
		t.Fatalf("op %s protected %v, want update", res.op, res.protected)
	}
	if want := []rule{podsRule("get"), podsRule("delete"), podsRule("list")}; !reflect.DeepEqual(res.role.Rules, want) {
		t.Errorf("union: rules %v, want %v", res.role.Rules, want)
	}
	if want := []rule{podsRule("list")}; !reflect.DeepEqual(res.missing, want) {
		t.Errorf("missing %v, want %v", res.missing, want)
	}
	if want := []rule{podsRule("delete")}; !reflect.DeepEqual(res.extra, want) {
		t.Errorf("extra %v, want %v", res.extra, want)
	}
	if len(existing.Rules) != 2 {
		t.Errorf("the stored role was changed: %v", existing.Rules)
	}

	res = reconcileRole(existing, expected, true)
	if !reflect.DeepEqual(res.role.Rules, expected.Rules) || res.op != opUpdate {
		t.Errorf("--remove-extra-permissions: rules %v op %s, want the expected rules", res.role.Rules, res.op)
	}
	if want := map[string]string{"a": "1"}; !reflect.DeepEqual(res.role.Labels, want) {
		t.Errorf("labels %v, want the stored ones", res.role.Labels)
	}

	// Nothing to do.
	same := &roleObject{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: []rule{podsRule("get")}}
	if res := reconcileRole(existing, same, false); res.op != opNone {
		t.Errorf("covered rules: op %s, want none", res.op)
	}
	// A new label is an update; the stored labels stay.
	labeled := &roleObject{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"b": "2"}}}
	if res := reconcileRole(existing, labeled, false); res.op != opUpdate || !reflect.DeepEqual(res.role.Labels, map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("labels: op %s labels %v", res.op, res.role.Labels)
	}
	// An opted-out role is reported, not changed.
	prot := existing.deepCopy()
	prot.Annotations = map[string]string{autoUpdateAnnotation: "false"}
	if res := reconcileRole(prot, expected, false); !res.protected || res.op != opUpdate {
		t.Errorf("protected: %v op %s", res.protected, res.op)
	}
}

func TestReconcileAggregatedRole(t *testing.T) {
	sel := func(k string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{k: "true"}}
	}
	existing := &roleObject{AggregationRule: &aggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("a")}}, Rules: []rule{podsRule("get")}}
	expected := &roleObject{AggregationRule: &aggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("b"), {MatchLabels: map[string]string{"a": "true"}, MatchExpressions: []metav1.LabelSelectorRequirement{}}}}}

	res := reconcileRole(existing, expected, false)
	if len(res.extra) != 0 {
		t.Errorf("both aggregated: extra rules %v, want none", res.extra)
	}
	if want := []metav1.LabelSelector{sel("a"), sel("b")}; res.op != opUpdate || !reflect.DeepEqual(res.role.AggregationRule.ClusterRoleSelectors, want) {
		t.Errorf("union: op %s selectors %v", res.op, res.role.AggregationRule.ClusterRoleSelectors)
	}
	res = reconcileRole(existing, &roleObject{AggregationRule: &aggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel("b")}}}, true)
	if want := []metav1.LabelSelector{sel("b")}; !reflect.DeepEqual(res.role.AggregationRule.ClusterRoleSelectors, want) {
		t.Errorf("--remove-extra-permissions: selectors %v", res.role.AggregationRule.ClusterRoleSelectors)
	}
	res = reconcileRole(existing, &roleObject{Rules: []rule{podsRule("get")}}, false)
	if res.op != opUpdate || res.role.AggregationRule != nil {
		t.Errorf("no longer aggregated: op %s rule %v", res.op, res.role.AggregationRule)
	}
}

func TestReconcileBinding(t *testing.T) {
	ann := subject{Kind: "User", APIGroup: rbacGroup, Name: "ann"}
	bob := subject{Kind: "User", APIGroup: rbacGroup, Name: "bob"}
	robot := subject{Kind: "ServiceAccount", Name: "robot", Namespace: "ns"}
	ref := roleRef{APIGroup: rbacGroup, Kind: "ClusterRole", Name: "view"}
	existing := &bindingObject{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "u1"}, Subjects: []subject{ann, bob}, RoleRef: ref}
	expected := &bindingObject{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Subjects: []subject{robot, robot, ann}, RoleRef: ref}

	res := reconcileBinding(existing, expected, false)
	if want := []subject{ann, bob, robot}; res.op != opUpdate || !reflect.DeepEqual(res.binding.Subjects, want) {
		t.Errorf("union: op %s subjects %v", res.op, res.binding.Subjects)
	}
	if !reflect.DeepEqual(res.missing, []subject{robot}) || !reflect.DeepEqual(res.extra, []subject{bob}) {
		t.Errorf("missing %v extra %v", res.missing, res.extra)
	}
	if res.binding.UID != "u1" {
		t.Errorf("the stored binding's metadata was not kept: %+v", res.binding.ObjectMeta)
	}
	res = reconcileBinding(existing, expected, true)
	if !reflect.DeepEqual(res.binding.Subjects, expected.Subjects) {
		t.Errorf("--remove-extra-subjects: subjects %v", res.binding.Subjects)
	}
	if res := reconcileBinding(existing, &bindingObject{Subjects: []subject{bob}, RoleRef: ref}, false); res.op != opNone {
		t.Errorf("covered subjects: op %s", res.op)
	}
	other := &bindingObject{Subjects: []subject{bob}, RoleRef: roleRef{APIGroup: rbacGroup, Kind: "ClusterRole", Name: "edit"}}
	if res := reconcileBinding(existing, other, false); res.op != opRecreate || res.binding != other {
		t.Errorf("another roleRef: op %s, want recreate with the expected binding", res.op)
	}
}

func TestRBACObjectsJSON(t *testing.T) {
	in := `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r","namespace":"ns","creationTimestamp":null,"labels":{"a":"b"},"unknown":1},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}],"extra":true}`
	var r roleObject
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl's typed order, unknown fields gone.
	want := `{"kind":"Role","apiVersion":"rbac.authorization.k8s.io/v1","metadata":{"name":"r","namespace":"ns","labels":{"a":"b"}},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	b, _ := json.Marshal(&bindingObject{RoleRef: roleRef{Kind: "ClusterRole"}})
	if want := `{"metadata":{},"roleRef":{"apiGroup":"","kind":"ClusterRole","name":""}}`; string(b) != want {
		t.Errorf("binding: got %s, want %s", b, want)
	}
}

// TestFormat: the lines name rules and subjects as Go's %+v of rbac/v1's
// structs does.
func TestFormat(t *testing.T) {
	type policyRule struct {
		Verbs, APIGroups, Resources, ResourceNames, NonResourceURLs []string
	}
	r := rule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	if got, want := formatRule(r), fmt.Sprintf("%+v", policyRule{r.Verbs, r.APIGroups, r.Resources, nil, nil}); got != want {
		t.Errorf("rule: %s, want %s", got, want)
	}
	type goSubject struct{ Kind, APIGroup, Name, Namespace string }
	s := subject{Kind: "Group", APIGroup: rbacGroup, Name: "system:masters"}
	if got, want := formatSubject(s), fmt.Sprintf("%+v", goSubject(s)); got != want {
		t.Errorf("subject: %s, want %s", got, want)
	}
}
