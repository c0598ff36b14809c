package generate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var (
	roleGVR               = schema.GroupVersionResource{Group: rbacGroup, Version: "v1", Resource: "roles"}
	clusterRoleGVR        = schema.GroupVersionResource{Group: rbacGroup, Version: "v1", Resource: "clusterroles"}
	roleBindingGVR        = schema.GroupVersionResource{Group: rbacGroup, Version: "v1", Resource: "rolebindings"}
	clusterRoleBindingGVR = schema.GroupVersionResource{Group: rbacGroup, Version: "v1", Resource: "clusterrolebindings"}
)

const rbacGroup = "rbac.authorization.k8s.io"

// The verbs kubectl knows: others are allowed with a warning (resources)
// or refused (non-resource URLs).
var (
	resourceVerbs    = []string{"*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy", "deletecollection", "use", "bind", "escalate", "impersonate"}
	nonResourceVerbs = []string{"*", "get", "post", "put", "delete", "patch", "head", "options"}
)

// specialVerbs may be granted only on these resources.
var specialVerbs = map[string][]schema.GroupResource{
	"use":         {{Group: "policy", Resource: "podsecuritypolicies"}, {Group: "extensions", Resource: "podsecuritypolicies"}},
	"bind":        {{Group: rbacGroup, Resource: "roles"}, {Group: rbacGroup, Resource: "clusterroles"}},
	"escalate":    {{Group: rbacGroup, Resource: "roles"}, {Group: rbacGroup, Resource: "clusterroles"}},
	"impersonate": {{Resource: "users"}, {Resource: "serviceaccounts"}, {Resource: "groups"}, {Group: "authentication.k8s.io", Resource: "userextras"}},
}

// ruleFlags are the flags of one policy rule: create role and clusterrole.
type ruleFlags struct {
	verbs, resources, resourceNames, nonResourceURLs []string
	aggregation                                      map[string]string
}

func (r *ruleFlags) addFlags(cmd *cobra.Command, cluster bool) {
	fl := cmd.Flags()
	fl.StringSliceVar(&r.verbs, "verb", nil, "Verb that applies to the resources contained in the rule (repeatable or comma-separated).")
	fl.StringSliceVar(&r.resources, "resource", nil, "Resource that the rule applies to: RESOURCE[.GROUP][/SUBRESOURCE] (repeatable or comma-separated).")
	fl.StringArrayVar(&r.resourceNames, "resource-name", nil, "Name of an object the rule applies to (repeatable).")
	if cluster {
		fl.StringSliceVar(&r.nonResourceURLs, "non-resource-url", nil, "A partial URL the rule grants access to, such as /healthz or /logs/* (repeatable).")
		fl.StringToStringVar(&r.aggregation, "aggregation-rule", nil, "An aggregation label selector for combining ClusterRoles (key=value,...).")
	}
}

// ruleResource is one --resource: RESOURCE[.GROUP][/SUBRESOURCE].
type ruleResource struct{ resource, group, subresource string }

// parse normalizes the flags as kubectl does: verbs, resource names and
// URLs without repeats ("*" alone standing for every verb), and the
// resources split; a bare "*" resource stands for every resource.
func (r *ruleFlags) parse() []ruleResource {
	r.verbs = unique(r.verbs)
	if slices.Contains(r.verbs, "*") {
		r.verbs = []string{"*"}
	}
	r.resourceNames = unique(r.resourceNames)
	r.nonResourceURLs = unique(r.nonResourceURLs)
	var out []ruleResource
	for _, s := range r.resources {
		res, sub, hasSub := strings.Cut(s, "/")
		name, group, hasGroup := strings.Cut(res, ".")
		if name == "*" && !hasGroup && !hasSub {
			return []ruleResource{{resource: "*"}}
		}
		out = append(out, ruleResource{resource: name, group: group, subresource: sub})
	}
	return out
}

// unique keeps the first of each value, in order.
func unique(in []string) []string {
	out := []string{}
	for _, v := range in {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// rules checks the rule's resources and verbs and builds kubectl's policy
// rules: one per API group (groups sorted), its resources in the order
// given, then one for the non-resource URLs. A resource the server knows
// is named by its full plural (a short name is expanded).
func (r *ruleFlags) rules(ctx context.Context, f *cli.Factory, resources []ruleResource, warn func(string)) ([]any, error) {
	if len(resources) > 0 {
		for _, v := range r.verbs {
			if !slices.Contains(resourceVerbs, v) {
				warn(fmt.Sprintf("Warning: '%s' is not a standard resource verb\n", v))
			}
		}
	}
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	for _, res := range resources {
		if res.resource == "" {
			return nil, errors.New("resource must be specified if apiGroup/subresource specified")
		}
		gr := schema.GroupResource{Group: res.group, Resource: res.resource}
		if res.resource != "*" {
			gvr, err := mapper.ResourceForWithContext(ctx, schema.GroupVersionResource{Group: res.group, Resource: res.resource})
			if err == nil {
				gr = gvr.GroupResource()
			}
			for _, v := range r.verbs {
				allowed, special := specialVerbs[v]
				if special {
					if !slices.Contains(allowed, gr) {
						return nil, fmt.Errorf("can not perform '%s' on '%s' in group '%s'", v, gr.Resource, gr.Group)
					}
					err = nil
				}
			}
			if err != nil {
				return nil, err
			}
		}
		name := gr.Resource
		if res.subresource != "" {
			name += "/" + res.subresource
		}
		if !slices.Contains(groups[gr.Group], name) {
			groups[gr.Group] = append(groups[gr.Group], name)
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	rules := []any{}
	for _, g := range names {
		rule := fields{{"verbs", r.verbs}, {"apiGroups", []string{g}}, {"resources", groups[g]}}
		if len(r.resourceNames) > 0 {
			rule = append(rule, field{"resourceNames", r.resourceNames})
		}
		rules = append(rules, rule)
	}
	if len(r.nonResourceURLs) > 0 {
		rules = append(rules, fields{{"verbs", r.verbs}, {"nonResourceURLs", r.nonResourceURLs}})
	}
	return rules, nil
}

// checkNonResourceURLs refuses what kubectl refuses in --non-resource-url
// and its verbs.
func (r *ruleFlags) checkNonResourceURLs() error {
	if len(r.nonResourceURLs) == 0 {
		return nil
	}
	for _, v := range r.verbs {
		if !slices.Contains(nonResourceVerbs, v) {
			return fmt.Errorf("invalid verb: '%s' for nonResourceURL", v)
		}
	}
	for _, u := range r.nonResourceURLs {
		if u == "*" {
			continue
		}
		if !strings.HasPrefix(u, "/") {
			return errors.New("nonResourceURL should start with /")
		}
		if strings.ContainsRune(u[:len(u)-1], '*') {
			return errors.New("nonResourceURL only supports wildcard matches when '*' is at the end")
		}
	}
	return nil
}

func newRoleCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	r := &ruleFlags{}
	cmd := &cobra.Command{
		Use:   "role NAME --verb=verb --resource=resource.group/subresource [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a role with single rule",
		Long: `Create a Role with one rule: the verbs on the resources (one rule per API
group), optionally only on the named objects. A resource's short name is
expanded as the server names it. With --dry-run=client -o yaml (or json)
the output is byte for byte kubectl's.`,
		Example: `  # A role that allows get, watch and list on pods
  kdyn create role pod-reader --verb=get --verb=list --verb=watch --resource=pods

  # Only on two named pods
  kdyn create role pod-reader --verb=get --resource=pods --resource-name=readablepod --resource-name=anotherpod

  # A resource of an API group, and a subresource
  kdyn create role foo --verb=get,list,watch --resource=rs.apps,pods/status`,
		RunE: func(cmd *cobra.Command, args []string) error {
			resources := r.parse()
			switch {
			case len(r.verbs) == 0:
				return errors.New("at least one verb must be specified")
			case len(resources) == 0:
				return errors.New("at least one resource must be specified")
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: roleGVR, kind: "Role", namespaced: true,
				build: func(name, ns string) (*object, error) {
					rules, err := r.rules(cmd.Context(), f, resources, func(s string) { fmt.Fprint(f.Streams.ErrOut, s) })
					if err != nil {
						return nil, err
					}
					return &object{gvr: roleGVR, kind: "Role", name: name, namespace: ns, body: fields{{"rules", rules}}}, nil
				},
			})
		},
	}
	r.addFlags(cmd, false)
	o.addFlags(cmd)
	return cmd
}

func newClusterRoleCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	r := &ruleFlags{}
	cmd := &cobra.Command{
		Use:   "clusterrole NAME --verb=verb --resource=resource.group [--resource-name=resourcename] [--dry-run=server|client|none]",
		Short: "Create a cluster role",
		Long: `Create a ClusterRole with one rule (verbs on resources, one rule per API group,
and on non-resource URLs), or one that aggregates the ClusterRoles an
--aggregation-rule selects. With --dry-run=client -o yaml (or json) the
output is byte for byte kubectl's.`,
		Example: `  # A cluster role that allows get, watch and list on pods
  kdyn create clusterrole pod-reader --verb=get,list,watch --resource=pods

  # Access to non-resource URLs
  kdyn create clusterrole "foo" --verb=get --non-resource-url=/logs/*

  # An aggregated cluster role
  kdyn create clusterrole monitoring --aggregation-rule="rbac.example.com/aggregate-to-monitoring=true"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			resources := r.parse()
			if len(r.aggregation) > 0 {
				if len(r.nonResourceURLs) > 0 || len(r.verbs) > 0 || len(resources) > 0 || len(r.resourceNames) > 0 {
					return errors.New("aggregation rule must be specified without nonResourceURLs, verbs, resources or resourceNames")
				}
			} else {
				switch {
				case len(r.verbs) == 0:
					return errors.New("at least one verb must be specified")
				case len(resources) == 0 && len(r.nonResourceURLs) == 0:
					return errors.New("one of resource or nonResourceURL must be specified")
				}
				if err := r.checkNonResourceURLs(); err != nil {
					return err
				}
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: clusterRoleGVR, kind: "ClusterRole",
				build: func(name, _ string) (*object, error) {
					obj := &object{gvr: clusterRoleGVR, kind: "ClusterRole", name: name}
					if len(r.aggregation) > 0 {
						// The typed ClusterRole's rules are null without a rule.
						obj.body = fields{{"rules", nil}, {"aggregationRule", fields{{"clusterRoleSelectors", []any{fields{{"matchLabels", r.aggregation}}}}}}}
						return obj, nil
					}
					rules, err := r.rules(cmd.Context(), f, resources, func(s string) { fmt.Fprint(f.Streams.ErrOut, s) })
					if err != nil {
						return nil, err
					}
					obj.body = fields{{"rules", rules}}
					return obj, nil
				},
			})
		},
	}
	r.addFlags(cmd, true)
	o.addFlags(cmd)
	return cmd
}

// subjectFlags are the subjects of a binding.
type subjectFlags struct {
	users, groups, serviceAccounts []string
}

func (s *subjectFlags) addFlags(cmd *cobra.Command, what string) {
	fl := cmd.Flags()
	fl.StringArrayVar(&s.users, "user", nil, "A user name to bind to the "+what+" (repeatable).")
	fl.StringArrayVar(&s.groups, "group", nil, "A group to bind to the "+what+" (repeatable).")
	fl.StringArrayVar(&s.serviceAccounts, "serviceaccount", nil, "A service account to bind to the "+what+", as NAMESPACE:NAME (repeatable).")
}

// subjects are kubectl's: users, then groups, then service accounts.
func (s *subjectFlags) subjects() ([]any, error) {
	var out []any
	for _, u := range s.users {
		out = append(out, fields{{"kind", "User"}, {"apiGroup", rbacGroup}, {"name", u}})
	}
	for _, g := range s.groups {
		out = append(out, fields{{"kind", "Group"}, {"apiGroup", rbacGroup}, {"name", g}})
	}
	for _, sa := range s.serviceAccounts {
		ns, name, ok := strings.Cut(sa, ":")
		if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
			return nil, errors.New("serviceaccount must be <namespace>:<name>")
		}
		out = append(out, fields{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", ns}})
	}
	return out, nil
}

// binding builds a RoleBinding or ClusterRoleBinding: subjects (when
// any), then the reference to the role.
func binding(gvr schema.GroupVersionResource, kind, name, ns string, s *subjectFlags, refKind, ref string) (*object, error) {
	subjects, err := s.subjects()
	if err != nil {
		return nil, err
	}
	obj := &object{gvr: gvr, kind: kind, name: name, namespace: ns}
	if len(subjects) > 0 {
		obj.body = append(obj.body, field{"subjects", subjects})
	}
	obj.body = append(obj.body, field{"roleRef", fields{{"apiGroup", rbacGroup}, {"kind", refKind}, {"name", ref}}})
	return obj, nil
}

func newRoleBindingCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	s := &subjectFlags{}
	var role, clusterRole string
	cmd := &cobra.Command{
		Use:   "rolebinding NAME --clusterrole=NAME|--role=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Create a role binding for a particular role or cluster role",
		Long: `Create a RoleBinding of users, groups and service accounts to a Role or a
ClusterRole. With --dry-run=client -o yaml (or json) the output is byte for
byte kubectl's.`,
		Example: `  # Bind the "admin" cluster role to user1, user2 and group1
  kdyn create rolebinding admin --clusterrole=admin --user=user1 --user=user2 --group=group1

  # Bind the "admin" role to a service account
  kdyn create rolebinding admin-binding --role=admin --serviceaccount=monitoring:sa-dev`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (role == "") == (clusterRole == "") {
				return errors.New("exactly one of clusterrole or role must be specified")
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: roleBindingGVR, kind: "RoleBinding", namespaced: true, failure: "failed to create rolebinding: ",
				build: func(name, ns string) (*object, error) {
					if role != "" {
						return binding(roleBindingGVR, "RoleBinding", name, ns, s, "Role", role)
					}
					return binding(roleBindingGVR, "RoleBinding", name, ns, s, "ClusterRole", clusterRole)
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&clusterRole, "clusterrole", "", "The ClusterRole this RoleBinding references.")
	fl.StringVar(&role, "role", "", "The Role this RoleBinding references.")
	s.addFlags(cmd, "role")
	o.addFlags(cmd)
	return cmd
}

func newClusterRoleBindingCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	s := &subjectFlags{}
	var clusterRole string
	cmd := &cobra.Command{
		Use:   "clusterrolebinding NAME --clusterrole=NAME [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Create a cluster role binding for a particular cluster role",
		Long: `Create a ClusterRoleBinding of users, groups and service accounts to a
ClusterRole. With --dry-run=client -o yaml (or json) the output is byte for
byte kubectl's.`,
		Example: `  # Bind the "cluster-admin" cluster role to user1, user2 and group1
  kdyn create clusterrolebinding cluster-admin --clusterrole=cluster-admin --user=user1 --user=user2 --group=group1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: clusterRoleBindingGVR, kind: "ClusterRoleBinding", failure: "failed to create clusterrolebinding: ",
				build: func(name, _ string) (*object, error) {
					return binding(clusterRoleBindingGVR, "ClusterRoleBinding", name, "", s, "ClusterRole", clusterRole)
				},
			})
		},
	}
	cmd.Flags().StringVar(&clusterRole, "clusterrole", "", "The ClusterRole this ClusterRoleBinding references.")
	_ = cmd.MarkFlagRequired("clusterrole")
	s.addFlags(cmd, "cluster role")
	o.addFlags(cmd)
	return cmd
}
