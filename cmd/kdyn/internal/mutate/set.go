package mutate

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewSetCommand returns "kdyn set" with image, resources, serviceaccount
// and subject.
func NewSetCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Set specific features on objects",
		Long:  "Change a specific feature of existing objects: container images, resource requirements, the service account of pods, the subjects of role bindings.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Usagef("set needs a subcommand: image, resources, serviceaccount or subject (see 'kdyn set -h')")
		},
	}
	cmd.AddCommand(newSetImageCommand(f), newSetResourcesCommand(f), newSetServiceAccountCommand(f), newSetSubjectCommand(f))
	return cmd
}

// podSpecPath is where an object of kind holds its pod spec, as kubectl's
// set commands find it.
func podSpecPath(obj *unstructured.Unstructured) ([]string, error) {
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "" && gk.Kind == "Pod":
		return []string{"spec"}, nil
	case gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "ReplicaSet" || gk.Kind == "DaemonSet" || gk.Kind == "StatefulSet"),
		gk.Group == "" && gk.Kind == "ReplicationController", gk.Group == "batch" && gk.Kind == "Job":
		return []string{"spec", "template", "spec"}, nil
	case gk.Group == "batch" && gk.Kind == "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}, nil
	}
	return nil, fmt.Errorf("the object is not a pod or does not have a pod template: *v1.%s", gk.Kind)
}

// eachContainer calls fn on every init container and container (init
// containers first), each a map of the object fn may change.
func eachContainer(obj *unstructured.Unstructured, fn func(c map[string]any)) error {
	path, err := podSpecPath(obj)
	if err != nil {
		return err
	}
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(obj.Object, append(path, field)...)
		for _, item := range list {
			if c, ok := item.(map[string]any); ok {
				fn(c)
			}
		}
		if len(list) > 0 {
			if err := unstructured.SetNestedSlice(obj.Object, list, append(path, field)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// selectString is kubectl's container pattern: "*" any, else the name,
// with '*' standing for any run of characters.
func selectString(s, spec string) bool {
	if spec == "*" {
		return true
	}
	if !strings.Contains(spec, "*") {
		return s == spec
	}
	parts := strings.Split(spec, "*")
	if !strings.HasPrefix(s, parts[0]) || !strings.HasSuffix(s[len(parts[0]):], parts[len(parts)-1]) {
		return false
	}
	rest := s[len(parts[0]) : len(s)-len(parts[len(parts)-1])]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

func newSetImageCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		Short: "Update the image of a pod template",
		Long: `Change the images of containers of pods and of the pod templates of
Deployments, ReplicaSets, ReplicationControllers, DaemonSets, StatefulSets,
Jobs and CronJobs; "*" names every container. An object whose images are
already those is left alone and not printed.`,
		Example: `  # The nginx container of a deployment
  kdyn set image deployment/nginx nginx=nginx:1.27

  # Every container of every deployment and replication controller
  kdyn set image deployments,rc nginx=nginx:1.27 --all

  # Every container of a daemon set
  kdyn set image daemonset abc *=nginx:1.27`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var resources []string
			images := map[string]string{}
			var order []string
			for _, a := range args {
				name, image, ok := strings.Cut(a, "=")
				if !ok {
					if len(images) > 0 {
						return cli.Usagef("all resources must be specified before image changes: %s", a)
					}
					resources = append(resources, a)
					continue
				}
				if name == "" || image == "" {
					return cli.Usagef("invalid image update %q: CONTAINER_NAME=IMAGE expected", a)
				}
				if _, dup := images[name]; !dup {
					order = append(order, name)
				}
				images[name] = image
			}
			if len(resources) == 0 && !o.Sel.Selecting() {
				return cli.Usagef("one or more resources must be specified as <resource> <name> or <resource>/<name>")
			}
			if len(images) == 0 {
				return cli.Usagef("at least one image update is required")
			}
			return Run(cmd.Context(), f, o, resources, func(obj *unstructured.Unstructured) (Result, error) {
				before := obj.DeepCopy()
				found := map[string]bool{}
				err := eachContainer(obj, func(c map[string]any) {
					for _, name := range order {
						if name == "*" || c["name"] == name {
							c["image"] = images[name]
							found[name] = true
						}
					}
				})
				if err != nil {
					return Result{}, err
				}
				var errs []error
				for _, name := range order {
					if !found[name] {
						errs = append(errs, fmt.Errorf("unable to find container named %q", name))
					}
				}
				if reflect.DeepEqual(before.Object, obj.Object) {
					return Result{Errs: errs}, nil
				}
				return Result{Op: "image updated", Changed: true, Errs: errs}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	return cmd
}

// parseResourceList parses --limits/--requests: NAME=QUANTITY,...
func parseResourceList(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	for _, stmt := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(stmt, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("invalid argument syntax %v, expected <resource>=<value>", stmt)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, err
		}
		out[name] = q.String()
	}
	return out, nil
}

func newSetResourcesCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	var limits, requests, containers string
	cmd := &cobra.Command{
		Use:   "resources (-f FILENAME | TYPE NAME)  ([--limits=LIMITS & --requests=REQUESTS]",
		Short: "Update resource requests/limits on objects with pod templates",
		Long: `Set resource limits and requests of containers (all, or those -c matches,
'*' a wildcard) of pods and pod templates. The resources given replace
those of the same name; the others stay.`,
		Example: `  # CPU limit and memory request of the nginx container
  kdyn set resources deployment nginx -c=nginx --limits=cpu=200m --requests=memory=256Mi

  # Every container of every deployment with a label
  kdyn set resources deployments -l app=web --limits=cpu=200m,memory=512Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Sel.All && o.Sel.Selector != "" {
				return errors.New("cannot set --all and --selector at the same time")
			}
			if limits == "" && requests == "" {
				return errors.New("you must specify an update to requests or limits (in the form of --requests/--limits)")
			}
			lim, err := parseResourceList(limits)
			if err != nil {
				return err
			}
			req, err := parseResourceList(requests)
			if err != nil {
				return err
			}
			return Run(cmd.Context(), f, o, args, func(obj *unstructured.Unstructured) (Result, error) {
				before := obj.DeepCopy()
				matched := false
				err := eachContainer(obj, func(c map[string]any) {
					name, _ := c["name"].(string)
					if !selectString(name, containers) {
						return
					}
					matched = true
					res, _ := c["resources"].(map[string]any)
					if res == nil {
						res = map[string]any{}
						c["resources"] = res
					}
					for field, values := range map[string]map[string]string{"limits": lim, "requests": req} {
						if len(values) == 0 {
							continue
						}
						m, _ := res[field].(map[string]any)
						if m == nil {
							m = map[string]any{}
							res[field] = m
						}
						for k, v := range values {
							m[k] = v
						}
					}
				})
				if err != nil {
					return Result{}, err
				}
				if !matched {
					return Result{}, fmt.Errorf("unable to find container named %s", containers)
				}
				return Result{Op: "resource requirements updated", Changed: !reflect.DeepEqual(before.Object, obj.Object)}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	fl := cmd.Flags()
	fl.StringVar(&limits, "limits", "", "Resource limits, NAME=QUANTITY,... (cpu=200m,memory=512Mi).")
	fl.StringVar(&requests, "requests", "", "Resource requests, NAME=QUANTITY,...")
	fl.StringVarP(&containers, "containers", "c", "*", "The containers to change, by name; '*' is a wildcard.")
	return cmd
}

func newSetServiceAccountCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:     "serviceaccount (-f FILENAME | TYPE NAME) SERVICE_ACCOUNT",
		Aliases: []string{"sa"},
		Short:   "Update the service account of a resource",
		Long:    "Set the service account of pods and of the pod templates of workloads.",
		Example: `  # The service account of a deployment's pods
  kdyn set serviceaccount deployment nginx-deployment serviceaccount1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 && !(len(args) == 1 && o.Sel.Selecting()) {
				return cli.Usagef("serviceaccount is required")
			}
			sa := args[len(args)-1]
			return Run(cmd.Context(), f, o, args[:len(args)-1], func(obj *unstructured.Unstructured) (Result, error) {
				path, err := podSpecPath(obj)
				if err != nil {
					return Result{}, err
				}
				current, _, _ := unstructured.NestedString(obj.Object, append(path, "serviceAccountName")...)
				if current == sa {
					// kubectl prints it even when nothing changes.
					return Result{Op: "serviceaccount updated"}, nil
				}
				if err := unstructured.SetNestedField(obj.Object, sa, append(path, "serviceAccountName")...); err != nil {
					return Result{}, err
				}
				return Result{Op: "serviceaccount updated", Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	return cmd
}

func newSetSubjectCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	var users, groups, serviceAccounts []string
	cmd := &cobra.Command{
		Use:   "subject (-f FILENAME | TYPE NAME) [--user=username] [--group=groupname] [--serviceaccount=namespace:serviceaccountname] [--dry-run=server|client|none]",
		Short: "Update the user, group, or service account in a role binding or cluster role binding",
		Long:  "Add users, groups and service accounts to the subjects of RoleBindings and ClusterRoleBindings (those already there are kept once).",
		Example: `  # Add a user and a service account to a cluster role binding
  kdyn set subject clusterrolebinding admin --user=user1 --serviceaccount=namespace:serviceaccount1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Sel.All && o.Sel.Selector != "" {
				return errors.New("cannot set --all and --selector at the same time")
			}
			if len(users)+len(groups)+len(serviceAccounts) == 0 {
				return errors.New("you must specify at least one value of user, group or serviceaccount")
			}
			ns, _, err := f.Namespace()
			if err != nil {
				return err
			}
			var subjects []map[string]any
			for _, u := range sortedUnique(users) {
				subjects = append(subjects, map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": u})
			}
			for _, g := range sortedUnique(groups) {
				subjects = append(subjects, map[string]any{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g})
			}
			for _, sa := range sortedUnique(serviceAccounts) {
				saNS, name, ok := strings.Cut(sa, ":")
				if !ok || name == "" || strings.Contains(name, ":") {
					return errors.New("serviceaccount must be <namespace>:<name>")
				}
				if saNS == "" {
					if ns == "" {
						return errors.New("serviceaccount must be <namespace>:<name>, namespace must be specified")
					}
					saNS = ns
				}
				subjects = append(subjects, map[string]any{"kind": "ServiceAccount", "namespace": saNS, "name": name})
			}
			return Run(cmd.Context(), f, o, args, func(obj *unstructured.Unstructured) (Result, error) {
				if gk := obj.GroupVersionKind().GroupKind(); gk.Group != "rbac.authorization.k8s.io" || (gk.Kind != "RoleBinding" && gk.Kind != "ClusterRoleBinding") {
					return Result{}, errors.New("setting subjects is only supported for RoleBinding/ClusterRoleBinding")
				}
				existing, _, _ := unstructured.NestedSlice(obj.Object, "subjects")
				updated := slices.Clone(existing)
				for _, s := range subjects {
					if !slices.ContainsFunc(existing, func(e any) bool { return sameSubject(e, s) }) {
						updated = append(updated, s)
					}
				}
				if len(updated) == len(existing) {
					return Result{}, nil
				}
				if err := unstructured.SetNestedSlice(obj.Object, updated, "subjects"); err != nil {
					return Result{}, err
				}
				return Result{Op: "subjects updated", Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	fl := cmd.Flags()
	fl.StringArrayVar(&users, "user", nil, "A user to add (repeatable).")
	fl.StringArrayVar(&groups, "group", nil, "A group to add (repeatable).")
	fl.StringArrayVar(&serviceAccounts, "serviceaccount", nil, "A service account to add, NAMESPACE:NAME (repeatable).")
	return cmd
}

// sameSubject compares a subject of the object with one to add, field by
// field (kind, apiGroup, name, namespace).
func sameSubject(existing any, s map[string]any) bool {
	e, ok := existing.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"kind", "apiGroup", "name", "namespace"} {
		ev, _ := e[k].(string)
		sv, _ := s[k].(string)
		if ev != sv {
			return false
		}
	}
	return true
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// NewRolloutPauseCommand returns "rollout pause" (pause true) or "rollout
// resume": spec.paused of Deployments, the only kind kubectl pauses.
func NewRolloutPauseCommand(f *cli.Factory, pause bool) *cobra.Command {
	o := &Options{}
	verb, done, refusal := "pause", "paused", "is already paused"
	short := "Mark the provided resource as paused"
	if !pause {
		verb, done, refusal = "resume", "resumed", "is not paused"
		short = "Resume a paused resource"
	}
	cmd := &cobra.Command{
		Use:   verb + " RESOURCE",
		Short: short,
		Long: short + `: set spec.paused of Deployments to ` + fmt.Sprint(pause) + `. A paused
deployment is not rolled out when its template changes, until resumed.`,
		Example: fmt.Sprintf(`  kdyn rollout %s deployment/nginx`, verb),
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(cmd.Context(), f, o, args, func(obj *unstructured.Unstructured) (Result, error) {
				if gk := obj.GroupVersionKind().GroupKind(); gk.Group != "apps" || gk.Kind != "Deployment" {
					return Result{}, fmt.Errorf("%sing is not supported", strings.TrimSuffix(verb, "e"))
				}
				paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused")
				if paused == pause {
					return Result{}, fmt.Errorf("deployments.apps %q %s", obj.GetName(), refusal)
				}
				if pause {
					_ = unstructured.SetNestedField(obj.Object, true, "spec", "paused")
				} else {
					unstructured.RemoveNestedField(obj.Object, "spec", "paused")
				}
				return Result{Op: done, Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-rollout", false)
	cmd.Flags().StringVarP(&o.Sel.Selector, "selector", "l", "", "Label selector of the objects.")
	return cmd
}
