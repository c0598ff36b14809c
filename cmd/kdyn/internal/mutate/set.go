package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewSetCommand returns "kdyn set" with image, resources, serviceaccount
// and subject.
func NewSetCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Set specific features on objects",
		Long:  "Change a specific feature of existing objects: container images, environment variables, resource requirements, the service account of pods, the subjects of role bindings.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Usagef("set needs a subcommand: image, resources, serviceaccount or subject (see 'kdyn set -h')")
		},
	}
	cmd.AddCommand(newSetImageCommand(f), newSetResourcesCommand(f), newSetServiceAccountCommand(f), newSetSubjectCommand(f), newSetEnvCommand(f), newSetSelectorCommand(f))
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

// eachContainer calls fn on every container and init container
// (containers first, as kubectl's set commands visit them), each a map of
// the object fn may change.
func eachContainer(obj *unstructured.Unstructured, fn func(c map[string]any)) error {
	path, err := podSpecPath(obj)
	if err != nil {
		return err
	}
	for _, field := range []string{"containers", "initContainers"} {
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
			if len(resources) == 0 && !o.Sel.Selecting() && !o.Manifests.Given() {
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
	o.Record = cli.AddRecordFlag(cmd)
	o.AddManifestFlags(cmd)
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
				if reflect.DeepEqual(before.Object, obj.Object) {
					// kubectl skips an empty patch without a word.
					return Result{}, nil
				}
				return Result{Op: "resource requirements updated", Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	o.Record = cli.AddRecordFlag(cmd)
	o.AddManifestFlags(cmd)
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
			if len(args) == 0 || (len(args) < 2 && !o.Sel.Selecting() && !o.Manifests.Given()) {
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
	o.Record = cli.AddRecordFlag(cmd)
	o.AddManifestFlags(cmd)
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
	o.AddManifestFlags(cmd)
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

// envVar is one variable set env writes: a value or a reference.
type envVar map[string]any

// envNameChars are what an environment variable name from --from keeps.
var envNameChars = regexp.MustCompile("[^a-zA-Z0-9_]")

func newSetEnvCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	var envs, keys []string
	var from, prefix, containers string
	var list, overwrite bool
	cmd := &cobra.Command{
		Use:   "env RESOURCE/NAME KEY_1=VAL_1 ... KEY_N=VAL_N",
		Short: "Update environment variables on a pod template",
		Long: `Set, change or remove (KEY-) environment variables of containers (all, or
those -c matches) of pods and pod templates, as kubectl set env does;
--from=configmap/NAME or secret/NAME adds a reference to each of its keys
(--keys to pick some, --prefix before their names); "-" reads KEY=VALUE
lines from stdin. --list prints the variables instead of changing them.`,
		Example: `  kdyn set env deployment/registry STORAGE_DIR=/local
  kdyn set env deployment/registry --from=configmap/settings --prefix=APP_
  kdyn set env deployment/registry STORAGE_DIR-
  kdyn set env deployment/registry --list`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Sel.All && o.Sel.Selector != "" {
				return errors.New("cannot set --all and --selector at the same time")
			}
			var resources, envArgs []string
			for _, a := range args {
				isEnv := strings.Contains(a, "=") || strings.HasSuffix(a, "-")
				switch {
				case isEnv:
					envArgs = append(envArgs, a)
				case len(envArgs) > 0:
					return fmt.Errorf("all resources must be specified before environment changes: %s", strings.Join(args, " "))
				default:
					resources = append(resources, a)
				}
			}
			if len(resources) == 0 && !o.Sel.Selecting() && !o.Manifests.Given() {
				return errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
			}
			if list && o.Output != "" {
				return errors.New("--list and --output may not be specified together")
			}
			if len(keys) > 0 && from == "" {
				return errors.New("when specifying --keys, a configmap or secret must be provided with --from")
			}
			if slices.Contains(o.Manifests.Filenames, "-") && slices.Contains(envArgs, "-") {
				return errors.New("standard input cannot be used for multiple arguments")
			}
			set, remove, err := parseEnvArgs(append(slices.Clone(envs), envArgs...), f)
			if err != nil {
				return err
			}
			if from != "" {
				refs, err := envFrom(cmd.Context(), f, from, keys, f.Streams.ErrOut)
				if err != nil {
					return err
				}
				set = append(set, refs...)
			}
			for _, e := range set {
				if prefix != "" {
					e["name"] = prefix + e["name"].(string)
				}
			}
			return Run(cmd.Context(), f, o, resources, func(obj *unstructured.Unstructured) (Result, error) {
				before := obj.DeepCopy()
				matched := false
				var errs []error
				err := eachContainer(obj, func(c map[string]any) {
					name, _ := c["name"].(string)
					if !selectString(name, containers) {
						return
					}
					matched = true
					existing, _ := c["env"].([]any)
					if !overwrite {
						for _, e := range set {
							for _, x := range existing {
								xm, _ := x.(map[string]any)
								if xm["name"] == e["name"] && xm["value"] != e["value"] {
									errs = append(errs, fmt.Errorf("'%s' already has a value (%v), and --overwrite is false", xm["name"], xm["value"]))
								}
							}
						}
						if len(errs) > 0 {
							return
						}
					}
					updated := updateEnv(existing, set, remove)
					if len(updated) == 0 {
						delete(c, "env")
					} else {
						c["env"] = updated
					}
					if list {
						fmt.Fprintf(f.Streams.Out, "# %s %s, container %s\n", obj.GetKind(), obj.GetName(), name)
						for _, e := range updated {
							m := e.(map[string]any)
							if vf, ok := m["valueFrom"].(map[string]any); ok {
								fmt.Fprintf(f.Streams.Out, "# %s from %s\n", m["name"], envRefString(vf))
								continue
							}
							fmt.Fprintf(f.Streams.Out, "%s=%v\n", m["name"], valueOrEmpty(m["value"]))
						}
					}
				})
				if err != nil {
					return Result{}, err
				}
				if len(errs) > 0 {
					return Result{}, errors.Join(errs...)
				}
				if list {
					return Result{}, nil
				}
				if !matched {
					fmt.Fprintf(f.Streams.ErrOut, "Warning: %s/%s does not have any containers matching %q\n", obj.GetKind(), obj.GetName(), containers)
					return Result{}, nil
				}
				if reflect.DeepEqual(before.Object, obj.Object) {
					return Result{}, nil
				}
				return Result{Op: "env updated", Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	o.AddManifestFlags(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&containers, "containers", "c", "*", "The containers to change, by name; '*' is a wildcard.")
	fl.StringVar(&from, "from", "", "A configmap/NAME or secret/NAME whose keys to add as references.")
	fl.StringVar(&prefix, "prefix", "", "A prefix for the names of the variables added.")
	fl.StringArrayVarP(&envs, "env", "e", nil, "A KEY=VALUE to set (repeatable).")
	fl.StringSliceVar(&keys, "keys", nil, "The keys of --from to add (default all).")
	fl.BoolVar(&list, "list", false, "Print the containers' variables (with the changes given) instead of changing them.")
	fl.BoolVar(&overwrite, "overwrite", true, "Allow changing a variable that has another value.")
	return cmd
}

func valueOrEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// envRefString is kubectl's one-line form of a valueFrom reference.
func envRefString(vf map[string]any) string {
	switch {
	case vf["configMapKeyRef"] != nil:
		r := vf["configMapKeyRef"].(map[string]any)
		return fmt.Sprintf("configmap %v, key %v", r["name"], r["key"])
	case vf["secretKeyRef"] != nil:
		r := vf["secretKeyRef"].(map[string]any)
		return fmt.Sprintf("secret %v, key %v", r["name"], r["key"])
	case vf["fieldRef"] != nil:
		r := vf["fieldRef"].(map[string]any)
		return fmt.Sprintf("field path %v", r["fieldPath"])
	case vf["resourceFieldRef"] != nil:
		r := vf["resourceFieldRef"].(map[string]any)
		return fmt.Sprintf("resource %v", r["resource"])
	}
	return "invalid reference"
}

// parseEnvArgs parses KEY=VALUE and KEY- (and "-", KEY=VALUE lines from
// stdin), with kubectl's checks and words.
func parseEnvArgs(specs []string, f *cli.Factory) ([]envVar, []string, error) {
	var set []envVar
	var remove []string
	seen := map[string]bool{}
	add := func(spec string) error {
		k, v, _ := strings.Cut(spec, "=")
		if errs := validation.IsEnvVarName(k); len(errs) != 0 {
			return fmt.Errorf("%q is not a valid key name: %s", k, strings.Join(errs, ";"))
		}
		seen[k] = true
		set = append(set, envVar{"name": k, "value": v})
		return nil
	}
	for _, spec := range specs {
		switch {
		case spec == "-":
			// kubectl's words for any command reading stdin, which its
			// scripts look for.
			f.ClaimStdin(cli.StdinManifestUse)
			b, err := io.ReadAll(f.Streams.In)
			if err != nil {
				return nil, nil, err
			}
			for _, line := range strings.Split(string(b), "\n") {
				if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if !strings.Contains(line, "=") {
					return nil, nil, fmt.Errorf("invalid environment variable: %v", line)
				}
				if err := add(line); err != nil {
					return nil, nil, err
				}
			}
		case strings.Contains(spec, "="):
			if err := add(spec); err != nil {
				return nil, nil, err
			}
		case strings.HasSuffix(spec, "-"):
			remove = append(remove, strings.TrimSuffix(spec, "-"))
		default:
			return nil, nil, fmt.Errorf("unknown environment variable: %v", spec)
		}
	}
	for _, r := range remove {
		if seen[r] {
			return nil, nil, errors.New("can not both modify and remove the same environment variable in the same command")
		}
	}
	return set, remove, nil
}

// envFrom are references to the keys (or those of keys) of a ConfigMap or
// Secret, named as kubectl names them (characters other than letters,
// digits and '_' made '_', upper case), sorted.
func envFrom(ctx context.Context, f *cli.Factory, from string, keys []string, warn io.Writer) ([]envVar, error) {
	targets, err := cli.ResolveObjects(ctx, f, []string{from}, cli.Selection{})
	if err != nil {
		return nil, err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	var out []envVar
	for _, t := range targets {
		var ref string
		switch t.Match.GVK.GroupKind() {
		case schema.GroupKind{Kind: "ConfigMap"}:
			ref = "configMapKeyRef"
		case schema.GroupKind{Kind: "Secret"}:
			ref = "secretKeyRef"
		default:
			return nil, errors.New("unsupported resource specified in --from")
		}
		obj, err := client.Resource(t.Match.GVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		data, _, _ := unstructured.NestedMap(obj.Object, "data")
		names := make([]string, 0, len(data))
		for k := range data {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if len(keys) > 0 && !slices.Contains(keys, k) {
				continue
			}
			name := strings.ToUpper(envNameChars.ReplaceAllString(k, "_"))
			if name != k {
				fmt.Fprintf(warn, "Warning: key %s transferred to %s\n", k, name)
			}
			out = append(out, envVar{"name": name, "valueFrom": map[string]any{ref: map[string]any{"name": obj.GetName(), "key": k}}})
		}
	}
	return out, nil
}

// updateEnv is kubectl's merge of a container's variables: those set
// replace the ones of the same name in place, new ones are appended,
// removed ones dropped.
func updateEnv(existing []any, set []envVar, remove []string) []any {
	covered := map[string]bool{}
	for _, r := range remove {
		covered[r] = true
	}
	find := func(name string) (envVar, bool) {
		for _, e := range set {
			if e["name"] == name {
				return e, true
			}
		}
		return nil, false
	}
	var out []any
	for _, x := range existing {
		m, _ := x.(map[string]any)
		name, _ := m["name"].(string)
		if covered[name] {
			continue
		}
		if e, ok := find(name); ok {
			covered[name] = true
			out = append(out, map[string]any(e))
			continue
		}
		out = append(out, x)
	}
	for _, e := range set {
		name := e["name"].(string)
		if covered[name] {
			continue
		}
		covered[name] = true
		out = append(out, map[string]any(e))
	}
	return out
}

func newSetSelectorCommand(f *cli.Factory) *cobra.Command {
	o := &Options{}
	var resourceVersion string
	cmd := &cobra.Command{
		Use:   "selector (-f FILENAME | TYPE NAME) EXPRESSIONS [--resource-version=version]",
		Short: "Set the selector on a resource",
		Long: `Replace the selector of Services (the only kind kubectl sets it on) with the
labels given (KEY=VALUE,...), as kubectl set selector does.`,
		Example: `  kdyn set selector service/web app=web,tier=frontend
  kdyn set selector -f service.yaml role=padawan --local -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("one selector is required")
			}
			sel, err := metav1.ParseToLabelSelector(args[len(args)-1])
			if err != nil {
				return err
			}
			if len(sel.MatchExpressions) > 0 {
				return fmt.Errorf("match expression %v not supported on this object", sel.MatchExpressions)
			}
			return Run(cmd.Context(), f, o, args[:len(args)-1], func(obj *unstructured.Unstructured) (Result, error) {
				if gk := obj.GroupVersionKind().GroupKind(); gk != (schema.GroupKind{Kind: "Service"}) {
					return Result{}, errors.New("setting a selector is only supported for Services")
				}
				labels := map[string]any{}
				for k, v := range sel.MatchLabels {
					labels[k] = v
				}
				if len(labels) == 0 {
					unstructured.RemoveNestedField(obj.Object, "spec", "selector")
				} else if err := unstructured.SetNestedMap(obj.Object, labels, "spec", "selector"); err != nil {
					return Result{}, err
				}
				if resourceVersion != "" {
					obj.SetResourceVersion(resourceVersion)
				}
				// kubectl says so even when nothing changes.
				return Result{Op: "selector updated", Changed: true}, nil
			})
		},
	}
	o.AddFlags(cmd, "kubectl-set", true)
	o.Record = cli.AddRecordFlag(cmd)
	o.AddManifestFlags(cmd)
	cmd.Flags().StringVar(&resourceVersion, "resource-version", "", "Update only if this is the object's current resourceVersion (one object).")
	return cmd
}
