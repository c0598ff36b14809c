package auth

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// rule is one rule of a SelfSubjectRulesReview's answer or of a Role, in
// the shape of rbac/v1's PolicyRule (its JSON too), which kubectl's can-i
// --list and auth reconcile work on.
type rule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// String is the generated PolicyRule.String of k8s.io/api, by which
// kubectl sorts the rules it prints.
func (r rule) String() string {
	return fmt.Sprintf("&PolicyRule{Verbs:%v,APIGroups:%v,Resources:%v,ResourceNames:%v,NonResourceURLs:%v,}",
		r.Verbs, r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs)
}

// breakdown splits a rule into rules of one verb, group, resource and name
// each (one verb and URL each for non-resource rules).
func breakdown(r rule) []rule {
	var out []rule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					out = append(out, rule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					out = append(out, rule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, rule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// simpleKey identifies a rule of one group, one resource and at most one
// name, whose verbs compact merges.
type simpleKey struct {
	group, resource string
	named           bool
	name            string
}

// simple reports whether r is such a rule, and its key.
func simple(r rule) (simpleKey, bool) {
	if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
		return simpleKey{}, false
	}
	if !reflect.DeepEqual(rule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}, r) {
		return simpleKey{}, false
	}
	k := simpleKey{group: r.APIGroups[0], resource: r.Resources[0]}
	if len(r.ResourceNames) == 1 {
		k.named, k.name = true, r.ResourceNames[0]
	}
	return k, true
}

// compact merges the verbs of simple rules on the same group, resource and
// name (kubectl's rbac.CompactRules), then sorts the rules by String, as
// kubectl does before printing them.
func compact(rules []rule) []rule {
	var out []rule
	merged := map[simpleKey]int{} // index in out
	for _, r := range rules {
		k, ok := simple(r)
		if !ok {
			out = append(out, r)
			continue
		}
		if i, seen := merged[k]; seen {
			for _, v := range r.Verbs {
				if !slices.Contains(out[i].Verbs, v) {
					out[i].Verbs = append(out[i].Verbs, v)
				}
			}
			continue
		}
		merged[k] = len(out)
		r.Verbs = slices.Clone(r.Verbs)
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// resourceGroup is kubectl's describe.CombineResourceGroup: the first
// resource, with ".group" before any "/subresource".
func resourceGroup(resources, groups []string) string {
	if len(resources) == 0 {
		return ""
	}
	res, sub, hasSub := strings.Cut(resources[0], "/")
	if len(groups) > 0 && groups[0] != "" {
		res += "." + groups[0]
	}
	if hasSub {
		res += "/" + sub
	}
	return res
}

// printRules prints kubectl's can-i --list table.
func printRules(w io.Writer, rules []rule, headers bool) error {
	var broken []rule
	for _, r := range rules {
		broken = append(broken, breakdown(r)...)
	}
	tw := newTabWriter(w)
	if headers {
		fmt.Fprintf(tw, "%s\n", strings.Join([]string{"Resources", "Non-Resource URLs", "Resource Names", "Verbs"}, "\t"))
	}
	for _, r := range compact(broken) {
		fmt.Fprintf(tw, "%s\t%v\t%v\t%v\n", resourceGroup(r.Resources, r.APIGroups), r.NonResourceURLs, r.ResourceNames, r.Verbs)
	}
	return tw.Flush()
}
