package auth

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file is the pure part of "auth reconcile": RBAC objects in the shape
// of rbac/v1's types (their JSON members in the Go structs' order, which
// kubectl prints) and what reconciling one with the stored one takes, as
// Kubernetes' rbac reconciliation computes it.

// rbacGroup is the API group of Roles, ClusterRoles and their bindings.
const rbacGroup = "rbac.authorization.k8s.io"

// autoUpdateAnnotation set to "false" on a stored object opts it out of
// reconciliation.
const autoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"

// subject is rbac/v1's Subject.
type subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// roleRef is rbac/v1's RoleRef.
type roleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// aggregationRule is rbac/v1's AggregationRule.
type aggregationRule struct {
	ClusterRoleSelectors []metav1.LabelSelector `json:"clusterRoleSelectors,omitempty"`
}

// roleObject is a Role or a ClusterRole (a Role has no aggregation rule).
type roleObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Rules             []rule           `json:"rules"`
	AggregationRule   *aggregationRule `json:"aggregationRule,omitempty"`
}

// bindingObject is a RoleBinding or a ClusterRoleBinding.
type bindingObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Subjects          []subject `json:"subjects,omitempty"`
	RoleRef           roleRef   `json:"roleRef"`
}

// deepCopy returns a copy of r sharing nothing with it.
func (r *roleObject) deepCopy() *roleObject {
	out := &roleObject{TypeMeta: r.TypeMeta}
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Rules = copyRules(r.Rules)
	if r.AggregationRule != nil {
		out.AggregationRule = &aggregationRule{}
		for _, s := range r.AggregationRule.ClusterRoleSelectors {
			out.AggregationRule.ClusterRoleSelectors = append(out.AggregationRule.ClusterRoleSelectors, *s.DeepCopy())
		}
	}
	return out
}

// deepCopy returns a copy of b sharing nothing with it.
func (b *bindingObject) deepCopy() *bindingObject {
	out := &bindingObject{TypeMeta: b.TypeMeta, RoleRef: b.RoleRef}
	b.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if b.Subjects != nil {
		out.Subjects = slices.Clone(b.Subjects)
	}
	return out
}

func copyRules(rules []rule) []rule {
	if rules == nil {
		return nil
	}
	out := make([]rule, len(rules))
	for i, r := range rules {
		out[i] = rule{Verbs: slices.Clone(r.Verbs), APIGroups: slices.Clone(r.APIGroups), Resources: slices.Clone(r.Resources),
			ResourceNames: slices.Clone(r.ResourceNames), NonResourceURLs: slices.Clone(r.NonResourceURLs)}
	}
	return out
}

// reconcileOp is the write a reconciliation needs.
type reconcileOp string

const (
	opNone     reconcileOp = "none"
	opCreate   reconcileOp = "create"
	opUpdate   reconcileOp = "update"
	opRecreate reconcileOp = "recreate" // a binding whose roleRef changed: delete, then create
)

// roleResult is the outcome of reconciling a Role or ClusterRole.
type roleResult struct {
	role      *roleObject // what the object is (or would be) after the write
	missing   []rule      // expected rules the stored object lacked
	extra     []rule      // stored rules beyond the expected ones
	op        reconcileOp
	protected bool // the stored object opted out: nothing is written
}

// bindingResult is the outcome of reconciling a RoleBinding or
// ClusterRoleBinding.
type bindingResult struct {
	binding   *bindingObject
	missing   []subject
	extra     []subject
	op        reconcileOp
	protected bool
}

// reconcileNewRole is the result for a role that is not stored yet.
func reconcileNewRole(expected *roleObject) *roleResult {
	return &roleResult{role: expected, missing: expected.Rules, op: opCreate}
}

// reconcileRole computes what existing (the stored role) must become to
// hold expected's labels, annotations, rules and aggregation selectors;
// with removeExtra, rules and selectors beyond expected's go.
func reconcileRole(existing, expected *roleObject, removeExtra bool) *roleResult {
	res := &roleResult{op: opNone, protected: existing.Annotations[autoUpdateAnnotation] == "false"}
	res.role = existing.deepCopy()

	if mergeMeta(&res.role.ObjectMeta, &expected.ObjectMeta) {
		res.op = opUpdate
	}

	// Extra rules are not counted when both roles aggregate: the
	// controller fills an aggregated role's rules.
	if expected.AggregationRule == nil || existing.AggregationRule == nil {
		res.extra = uncovered(expected.Rules, existing.Rules)
	}
	res.missing = uncovered(existing.Rules, expected.Rules)
	switch {
	case !removeExtra && len(res.missing) > 0:
		res.role.Rules = append(res.role.Rules, res.missing...)
		res.op = opUpdate
	case removeExtra && (len(res.missing) > 0 || len(res.extra) > 0):
		res.role.Rules = expected.Rules
		res.op = opUpdate
	}

	extraSel := uncoveredSelectors(expected.AggregationRule, existing.AggregationRule)
	missingSel := uncoveredSelectors(existing.AggregationRule, expected.AggregationRule)
	switch {
	case expected.AggregationRule == nil && existing.AggregationRule != nil:
		res.role.AggregationRule = nil
		res.op = opUpdate
	case !removeExtra && len(missingSel) > 0:
		agg := res.role.AggregationRule
		if agg == nil {
			agg = &aggregationRule{}
		}
		agg.ClusterRoleSelectors = append(agg.ClusterRoleSelectors, missingSel...)
		res.role.AggregationRule = agg
		res.op = opUpdate
	case removeExtra && (len(missingSel) > 0 || len(extraSel) > 0):
		res.role.AggregationRule = expected.AggregationRule
		res.op = opUpdate
	}
	return res
}

// reconcileNewBinding is the result for a binding that is not stored yet.
func reconcileNewBinding(expected *bindingObject) *bindingResult {
	return &bindingResult{binding: expected, missing: expected.Subjects, op: opCreate}
}

// reconcileBinding computes what existing (the stored binding) must become
// to hold expected's labels, annotations and subjects (with removeExtra,
// only those subjects). A different roleRef, which cannot change, means
// deleting the stored binding and creating expected.
func reconcileBinding(existing, expected *bindingObject, removeExtra bool) *bindingResult {
	res := &bindingResult{op: opNone, protected: existing.Annotations[autoUpdateAnnotation] == "false"}
	if expected.RoleRef != existing.RoleRef {
		res.binding = expected
		res.op = opRecreate
		return res
	}
	res.binding = existing.deepCopy()

	if mergeMeta(&res.binding.ObjectMeta, &expected.ObjectMeta) {
		res.op = opUpdate
	}

	res.missing, res.extra = diffSubjects(expected.Subjects, existing.Subjects)
	switch {
	case !removeExtra && len(res.missing) > 0:
		res.binding.Subjects = append(res.binding.Subjects, res.missing...)
		res.op = opUpdate
	case removeExtra && (len(res.missing) > 0 || len(res.extra) > 0):
		res.binding.Subjects = expected.Subjects
		res.op = opUpdate
	}
	return res
}

// mergeMeta adds expected's annotations and labels to stored (a copy of
// the stored object's metadata), keeping the stored values of the keys
// both have, and reports whether that changed them.
func mergeMeta(stored, expected *metav1.ObjectMeta) bool {
	annotations := mergeMaps(expected.Annotations, stored.Annotations)
	labels := mergeMaps(expected.Labels, stored.Labels)
	changed := !reflect.DeepEqual(annotations, stored.Annotations) || !reflect.DeepEqual(labels, stored.Labels)
	stored.Annotations, stored.Labels = annotations, labels
	return changed
}

// mergeMaps merges maps, later ones winning; nil when every map is nil.
func mergeMaps(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		if m != nil && out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, m)
	}
	return out
}

// uncovered returns the rules of servant, broken down to one verb, group,
// resource and name (or URL) each, that no rule of owner allows.
func uncovered(owner, servant []rule) []rule {
	out := []rule{}
	for _, s := range servant {
		for _, sub := range breakdown(s) {
			if !slices.ContainsFunc(owner, func(o rule) bool { return ruleCovers(o, sub) }) {
				out = append(out, sub)
			}
		}
	}
	return out
}

// ruleCovers reports whether owner allows everything sub (a broken-down
// rule) allows.
func ruleCovers(owner, sub rule) bool {
	verbs := slices.Contains(owner.Verbs, "*") || hasAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, "*") || hasAll(owner.APIGroups, sub.APIGroups)
	resources := resourcesCover(owner.Resources, sub.Resources)
	urls := urlsCover(owner.NonResourceURLs, sub.NonResourceURLs)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && resources && names && urls
}

func hasAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

// resourcesCover: "*" covers everything, "*/status" every status
// subresource.
func resourcesCover(set, want []string) bool {
	if slices.Contains(set, "*") || hasAll(set, want) {
		return true
	}
	for _, r := range want {
		if slices.Contains(set, r) {
			continue
		}
		_, sub, ok := strings.Cut(r, "/")
		if !ok || !slices.Contains(set, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCover: a URL ending in "*" covers the URLs it prefixes.
func urlsCover(set, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(set, func(o string) bool {
			return o == w || (strings.HasSuffix(o, "*") && strings.HasPrefix(w, strings.TrimRight(o, "*")))
		}) {
			return false
		}
	}
	return true
}

// uncoveredSelectors returns the selectors of servant that owner does not
// hold (semantically: a nil map or list equals an empty one).
func uncoveredSelectors(owner, servant *aggregationRule) []metav1.LabelSelector {
	switch {
	case servant == nil:
		return nil
	case owner == nil:
		return servant.ClusterRoleSelectors
	}
	var out []metav1.LabelSelector
	for _, s := range servant.ClusterRoleSelectors {
		if !slices.ContainsFunc(owner.ClusterRoleSelectors, func(o metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(o, s) }) {
			out = append(out, s)
		}
	}
	return out
}

// diffSubjects returns the subjects only in a and those only in b, each
// once, in their lists' order.
func diffSubjects(a, b []subject) (onlyA, onlyB []subject) {
	for _, s := range a {
		if !slices.Contains(b, s) && !slices.Contains(onlyA, s) {
			onlyA = append(onlyA, s)
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) && !slices.Contains(onlyB, s) {
			onlyB = append(onlyB, s)
		}
	}
	return onlyA, onlyB
}

// formatRule prints r as kubectl's reconcile lists rules: Go's %+v of
// rbac/v1's PolicyRule.
func formatRule(r rule) string {
	return fmt.Sprintf("{Verbs:%v APIGroups:%v Resources:%v ResourceNames:%v NonResourceURLs:%v}",
		r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs)
}

// formatSubject prints s as Go's %+v of rbac/v1's Subject.
func formatSubject(s subject) string {
	return fmt.Sprintf("{Kind:%s APIGroup:%s Name:%s Namespace:%s}", s.Kind, s.APIGroup, s.Name, s.Namespace)
}
