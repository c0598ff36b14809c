package auth

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

var (
	accessReviewGVR = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}
	rulesReviewGVR  = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectrulesreviews"}
)

// The verbs kubectl knows, for its "not a known verb" warning.
var (
	// ResourceVerbs are the verbs of resource requests.
	ResourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "use", "bind", "impersonate", "*", "approve", "sign", "escalate", "attest"}
	// NonResourceVerbs are the verbs of non-resource URLs.
	NonResourceVerbs = []string{"get", "put", "post", "head", "options", "delete", "patch", "*"}
	// nonStandardResources are resources no discovery lists that the
	// server authorizes (impersonate users and groups).
	nonStandardResources = []string{"users", "groups"}
)

type canIOptions struct {
	allNamespaces bool
	quiet         bool
	noHeaders     bool
	subresource   string
	list          bool

	verb         string
	resource     schema.GroupVersionResource
	resourceName string
	url          string
	namespace    string
}

func newCanICommand(f *cli.Factory) *cobra.Command {
	o := &canIOptions{}
	cmd := &cobra.Command{
		Use:   "can-i VERB [TYPE | TYPE/NAME | NONRESOURCEURL]",
		Short: "Check whether an action is allowed",
		Long: `Check whether an action is allowed, asking the server with a
SelfSubjectAccessReview; it prints "yes" (exit 0) or "no" (exit 1), with the
authorizer's reason when it gives one.

VERB is a Kubernetes API verb: get, list, watch, create, update, patch,
delete, deletecollection, or another an authorizer knows (use, bind,
impersonate, approve, escalate, ...). TYPE is a resource, named as
everywhere in kdyn (short names and groups are resolved); NAME an object's
name; NONRESOURCEURL a path starting with "/". Impersonation (--as,
--as-group) asks on another user's behalf.

With --list, a SelfSubjectRulesReview lists every action allowed in the
namespace, in kubectl's table.`,
		Example: `  # Can I create pods in any namespace?
  kdyn auth can-i create pods --all-namespaces

  # Can I list deployments in my current namespace?
  kdyn auth can-i list deployments.apps

  # Can service account "foo" of namespace "dev" list pods in "prod"?
  # (you must be allowed to impersonate, for --as)
  kdyn auth can-i list pods --as=system:serviceaccount:dev:foo -n prod

  # Can I do everything in my current namespace ("*" means all)?
  kdyn auth can-i '*' '*'

  # Can I get the job named "bar" in namespace "foo"?
  kdyn auth can-i get jobs.batch/bar -n foo

  # Can I read pod logs?
  kdyn auth can-i get pods --subresource=log

  # Can I access the URL /logs/?
  kdyn auth can-i get /logs/

  # In a script: only the exit code
  if kdyn auth can-i delete widgets.example.com -q; then echo allowed; fi

  # Everything I may do in namespace "foo"
  kdyn auth can-i --list --namespace=foo`,
		RunE: func(cmd *cobra.Command, args []string) error { return runCanI(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Check the action in all namespaces.")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "Print nothing; only the exit code answers (0 yes, 1 no).")
	fl.StringVar(&o.subresource, "subresource", "", "A subresource, such as log for pods or scale for deployments.")
	fl.BoolVar(&o.list, "list", false, "Print every action allowed in the namespace.")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "With --list, print no header line.")
	return cmd
}

func runCanI(ctx context.Context, f *cli.Factory, o *canIOptions, args []string) error {
	warn := func(msg string) { fmt.Fprintf(f.Streams.ErrOut, "Warning: %s\n", msg) }
	out := f.Streams.Out
	if o.list {
		if len(args) != 0 {
			return cli.Usagef("list option must be specified with no arguments")
		}
	} else {
		if o.quiet {
			out = io.Discard
		}
		if len(args) != 2 {
			return cli.Usagef("you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kdyn auth can-i -h' for help and examples.")
		}
		o.verb = args[0]
		if strings.HasPrefix(args[1], "/") {
			o.url = args[1]
		} else {
			typ, name, _ := strings.Cut(args[1], "/")
			o.resourceName = name
			var err error
			if o.resource, err = resolveResource(ctx, f, typ, warn); err != nil {
				return err
			}
		}
	}
	if !o.allNamespaces {
		ns, _, err := f.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
	}
	if err := o.validate(ctx, f, warn); err != nil {
		return err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	if o.list {
		return o.runList(ctx, f, client.Resource(rulesReviewGVR), warn)
	}
	review, err := client.Resource(accessReviewGVR).Create(ctx, o.accessReview(), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	allowed, _, _ := unstructured.NestedBool(review.Object, "status", "allowed")
	if allowed {
		fmt.Fprintln(out, "yes")
		return nil
	}
	reason, _, _ := unstructured.NestedString(review.Object, "status", "reason")
	evalErr, _, _ := unstructured.NestedString(review.Object, "status", "evaluationError")
	fmt.Fprint(out, "no")
	if reason != "" {
		fmt.Fprintf(out, " - %v", reason)
	}
	if evalErr != "" {
		fmt.Fprintf(out, " - %v", evalErr)
	}
	fmt.Fprintln(out)
	return &cli.ExitError{Code: cli.ExitGeneric, Silent: true}
}

// resolveResource finds the resource a TYPE names, as kubectl's can-i
// does: "*" stays, an unknown type is sent as written after a warning
// (users and groups, which no discovery lists, without one).
func resolveResource(ctx context.Context, f *cli.Factory, typ string, warn func(string)) (schema.GroupVersionResource, error) {
	if typ == "*" {
		return schema.GroupVersionResource{Resource: typ}, nil
	}
	m, err := f.RESTMapper()
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	matches, err := m.ResolveTypes(ctx, strings.ToLower(typ))
	if err == nil && len(matches) == 1 {
		return matches[0].GVR, nil
	}
	if ctx.Err() != nil {
		return schema.GroupVersionResource{}, ctx.Err()
	}
	_, gr := schema.ParseResourceArg(strings.ToLower(typ))
	if !slices.Contains(nonStandardResources, gr.String()) {
		if gr.Group == "" {
			warn(fmt.Sprintf("the server doesn't have a resource type '%s'\n", gr.Resource))
		} else {
			warn(fmt.Sprintf("the server doesn't have a resource type '%s' in group '%s'\n", gr.Resource, gr.Group))
		}
	}
	return schema.GroupVersionResource{Resource: typ}, nil
}

// validate checks the flags together and warns, as kubectl does, of a
// cluster-scoped resource asked about in a namespace and of unknown verbs.
func (o *canIOptions) validate(ctx context.Context, f *cli.Factory, warn func(string)) error {
	if o.list {
		if o.quiet || o.allNamespaces || o.subresource != "" {
			return cli.Usagef("list option can't be specified with neither quiet, all-namespaces nor subresource options")
		}
		return nil
	}
	if o.url != "" {
		if o.subresource != "" {
			return cli.Usagef("--subresource can not be used with NonResourceURL")
		}
		if !slices.Contains(NonResourceVerbs, o.verb) {
			warn(fmt.Sprintf("verb '%s' is not a known verb\n", o.verb))
		}
	} else if !o.resource.Empty() && !o.allNamespaces {
		if o.resource.Resource != "*" && o.resource.Version != "" {
			if m, err := f.RESTMapper(); err == nil {
				if info, err := m.ResourceInfo(ctx, o.resource); err == nil && info != nil && !info.Namespaced {
					if o.resource.Group == "" {
						warn(fmt.Sprintf("resource '%s' is not namespace scoped\n", o.resource.Resource))
					} else {
						warn(fmt.Sprintf("resource '%s' is not namespace scoped in group '%s'\n", o.resource.Resource, o.resource.Group))
					}
				}
			}
		}
		if !slices.Contains(ResourceVerbs, o.verb) {
			warn(fmt.Sprintf("verb '%s' is not a known verb\n", o.verb))
		}
	}
	if o.noHeaders {
		return cli.Usagef("--no-headers cannot be set without --list specified")
	}
	return nil
}

// accessReview is the SelfSubjectAccessReview to send.
func (o *canIOptions) accessReview() *unstructured.Unstructured {
	spec := map[string]any{}
	if o.url != "" {
		spec["nonResourceAttributes"] = map[string]any{"verb": o.verb, "path": o.url}
	} else {
		attrs := map[string]any{}
		for k, v := range map[string]string{
			"namespace": o.namespace, "verb": o.verb, "group": o.resource.Group, "resource": o.resource.Resource,
			"subresource": o.subresource, "name": o.resourceName,
		} {
			if v != "" {
				attrs[k] = v
			}
		}
		spec["resourceAttributes"] = attrs
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec,
	}}
}

type creator interface {
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
}

// runList asks for the rules of the namespace and prints them.
func (o *canIOptions) runList(ctx context.Context, f *cli.Factory, rc creator, warn func(string)) error {
	spec := map[string]any{}
	if o.namespace != "" {
		spec["namespace"] = o.namespace
	}
	review, err := rc.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": spec,
	}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if incomplete, _, _ := unstructured.NestedBool(review.Object, "status", "incomplete"); incomplete {
		evalErr, _, _ := unstructured.NestedString(review.Object, "status", "evaluationError")
		warn("the list may be incomplete: " + evalErr)
	}
	return printRules(f.Streams.Out, reviewRules(review), !o.noHeaders)
}

// reviewRules reads the resource rules, then the non-resource rules, of a
// SelfSubjectRulesReview's status.
func reviewRules(review *unstructured.Unstructured) []rule {
	strs := func(m map[string]any, key string) []string {
		v, _, _ := unstructured.NestedStringSlice(m, key)
		return v
	}
	var out []rule
	res, _, _ := unstructured.NestedSlice(review.Object, "status", "resourceRules")
	for _, x := range res {
		if m, ok := x.(map[string]any); ok {
			out = append(out, rule{Verbs: strs(m, "verbs"), APIGroups: strs(m, "apiGroups"), Resources: strs(m, "resources"), ResourceNames: strs(m, "resourceNames")})
		}
	}
	nonRes, _, _ := unstructured.NestedSlice(review.Object, "status", "nonResourceRules")
	for _, x := range nonRes {
		if m, ok := x.(map[string]any); ok {
			out = append(out, rule{Verbs: strs(m, "verbs"), NonResourceURLs: strs(m, "nonResourceURLs")})
		}
	}
	return out
}

// newTabWriter is kubectl's table writer.
var newTabWriter = printers.NewTabWriter
