package root

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/auth"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/rollout"
	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/restmapper"
)

// completionTimeout bounds the server requests of one completion: a shell
// waiting on a Tab must not hang on a slow server. A variable for tests.
var completionTimeout = 5 * time.Second

// completionMaxNames bounds the object names listed for one completion.
const completionMaxNames = 5000

func newCompletionCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or powershell",
		Long: `Print a script that makes the shell complete kdyn's commands and flags, resource
types (plural, singular and short names, and TYPE.GROUP) and the names of
objects in the current namespace, which kdyn asks the server for when Tab
is pressed (a metadata-only list, at most 5 seconds; nothing is printed on
errors). Resource types come from the discovery cache, so they cost no
request while it is warm.

bash needs the bash-completion package (version 2).`,
		Example: `  # bash, now and in every new shell
  source <(kdyn completion bash)
  echo 'source <(kdyn completion bash)' >> ~/.bashrc

  # zsh
  kdyn completion zsh > "${fpath[1]}/_kdyn"

  # fish
  kdyn completion fish | source`,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return cli.Usagef("unsupported shell %q", args[0])
		},
	}
}

// resourceArgCommands are the commands whose arguments are
// TYPE [NAME...] or TYPE/NAME..., with the number of names each takes
// (-1: any).
var resourceArgCommands = map[string]int{
	"get": -1, "describe": -1, "delete": -1, "edit": -1, "patch": 1, "label": -1, "annotate": -1,
	"wait": -1, "scale": -1, "tree": 1, "explain": 0,
}

// registerCompletions sets the dynamic completion of every command of root
// that takes resource arguments and has none yet, and of the global flags
// that name namespaces and kubeconfig entries. It sees the commands added
// to root before it runs.
func registerCompletions(root *cobra.Command, f *cli.Factory) {
	for _, c := range root.Commands() {
		names, ok := resourceArgCommands[c.Name()]
		if !ok || c.ValidArgsFunction != nil {
			continue
		}
		c.ValidArgsFunction = resourceCompletion(f, names)
	}
	if ro, _, err := root.Find([]string{"rollout"}); err == nil && ro.Name() == "rollout" {
		for _, sub := range ro.Commands() {
			if sub.ValidArgsFunction == nil {
				sub.ValidArgsFunction = rolloutCompletion(f)
			}
		}
	}
	if cfg, _, err := root.Find([]string{"config", "use-context"}); err == nil && cfg.Name() == "use-context" && cfg.ValidArgsFunction == nil {
		cfg.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return kubeconfigNames(f, "context", toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	if ev, _, err := root.Find([]string{"events"}); err == nil && ev.Name() == "events" {
		_ = ev.RegisterFlagCompletionFunc("for", forCompletion(f))
	}
	// top node and top pod take one NAME: a node's, a pod's of the
	// current namespace
	for typ, path := range map[string][]string{"nodes": {"top", "node"}, "pods": {"top", "pod"}} {
		if c, _, err := root.Find(path); err == nil && c.Name() == path[1] && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
				defer cancel()
				return completeNames(ctx, f, typ, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
			}
		}
	}
	if canI, _, err := root.Find([]string{"auth", auth.CanICommandName}); err == nil && canI.Name() == auth.CanICommandName && canI.ValidArgsFunction == nil {
		canI.ValidArgsFunction = canICompletion(f)
	}
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
		defer cancel()
		return listNames(ctx, f, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	})
	registerApplySetCompletion(root, f)
	for _, flag := range []string{"context", "cluster", "user"} {
		_ = root.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return kubeconfigNames(f, flag, toComplete), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// canICompletion completes auth can-i's VERB, then its TYPE.
func canICompletion(f *cli.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		const nofile = cobra.ShellCompDirectiveNoFileComp
		switch len(args) {
		case 0:
			var out []string
			for _, v := range auth.ResourceVerbs {
				if strings.HasPrefix(v, toComplete) {
					out = append(out, v)
				}
			}
			return out, nofile
		case 1:
			ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
			defer cancel()
			return completeTypes(ctx, f, toComplete, false), nofile
		}
		return nil, nofile
	}
}

func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// forCompletion completes the TYPE/NAME of events --for: a type followed
// by "/", then the names of that type's objects.
func forCompletion(f *cli.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	complete := resourceCompletion(f, 1)
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		out, directive := complete(cmd, nil, toComplete)
		if !strings.Contains(toComplete, "/") {
			for i := range out {
				out[i] += "/"
			}
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return out, directive
	}
}

// resourceCompletion completes a resource type first (comma lists and
// TYPE/NAME too), then up to maxNames object names of that type (-1: any).
func resourceCompletion(f *cli.Factory, maxNames int) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		const nofile = cobra.ShellCompDirectiveNoFileComp
		ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
		defer cancel()
		slashed := len(args) > 0 && strings.Contains(args[0], "/")
		switch {
		case maxNames != 0 && (len(args) == 0 || slashed) && strings.Contains(toComplete, "/"):
			if slashed && maxNames >= 0 && len(args) >= maxNames {
				return nil, nofile
			}
			typ, prefix, _ := strings.Cut(toComplete, "/")
			var out []string
			for _, n := range completeNames(ctx, f, typ, prefix, nil) {
				out = append(out, typ+"/"+n)
			}
			return out, nofile
		case len(args) == 0:
			return completeTypes(ctx, f, toComplete, maxNames != 0), nofile
		case slashed:
			return nil, nofile
		case maxNames < 0 || len(args)-1 < maxNames:
			return completeNames(ctx, f, args[0], toComplete, args[1:]), nofile
		}
		return nil, nofile
	}
}

// rolloutCompletion completes the types rollout takes (deployment,
// daemonset, statefulset), then object names as resourceCompletion does.
func rolloutCompletion(f *cli.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	names := resourceCompletion(f, -1)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 && !strings.Contains(toComplete, "/") {
			var out []string
			for _, t := range rollout.ValidTypes {
				if strings.HasPrefix(t, toComplete) {
					out = append(out, t)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// completeTypes returns the resource type names starting with the last
// element of a comma list: plural, singular, short names and plural.group
// of every resource that supports get.
func completeTypes(ctx context.Context, f *cli.Factory, toComplete string, commas bool) []string {
	m, err := f.RESTMapper()
	if err != nil {
		return nil
	}
	resources, _ := m.Resources(ctx, restmapper.SupportsVerbs("get"))
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 && commas {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	return typeCandidates(resources, prefix, last)
}

// typeCandidates lists the names of resources that start with last, each
// after prefix, sorted and without duplicates.
func typeCandidates(resources []*discovery.Resource, prefix, last string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && !seen[name] && strings.HasPrefix(name, last) {
			seen[name] = true
			out = append(out, prefix+name)
		}
	}
	for _, r := range resources {
		add(r.Name)
		if r.SingularName != r.Name {
			add(r.SingularName)
		}
		for _, s := range r.ShortNames {
			add(s)
		}
		if r.Group != "" {
			add(r.Name + "." + r.Group)
		}
	}
	sort.Strings(out)
	return out
}

// completeNames returns the names of the objects of typ (one resource
// type) in the current namespace that start with prefix, except those in
// exclude. Errors give no names.
func completeNames(ctx context.Context, f *cli.Factory, typ, prefix string, exclude []string) []string {
	m, err := f.RESTMapper()
	if err != nil || typ == "" {
		return nil
	}
	matches, err := m.ResolveTypes(ctx, typ)
	if err != nil || len(matches) != 1 {
		return nil
	}
	ns := ""
	if matches[0].Namespaced {
		if ns, _, err = f.Namespace(); err != nil {
			return nil
		}
	}
	return listNames(ctx, f, matches[0].GVR, ns, prefix, exclude)
}

// listNames lists the metadata of gvr in ns (at most completionMaxNames
// objects) and returns the sorted names starting with prefix.
func listNames(ctx context.Context, f *cli.Factory, gvr schema.GroupVersionResource, ns, prefix string, exclude []string) []string {
	client, err := f.QuietDynamicClient()
	if err != nil {
		return nil
	}
	skip := map[string]bool{}
	for _, e := range exclude {
		skip[e] = true
	}
	lister := client.Metadata().Resource(gvr).Namespace(ns)
	opts := metav1.ListOptions{Limit: 500}
	var out []string
	for seen := 0; seen < completionMaxNames; {
		l, err := lister.List(ctx, opts)
		if err != nil {
			return nil
		}
		for _, it := range l.Items {
			if strings.HasPrefix(it.Name, prefix) && !skip[it.Name] {
				out = append(out, it.Name)
			}
		}
		seen += len(l.Items)
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	sort.Strings(out)
	return out
}

// kubeconfigNames returns the kubeconfig's context, cluster or user names
// that start with prefix.
func kubeconfigNames(f *cli.Factory, what, prefix string) []string {
	cfg, err := kubeconfig.Load(f.LoadingRules())
	if err != nil {
		return nil
	}
	var names []string
	switch what {
	case "context":
		for n := range cfg.Contexts {
			names = append(names, n)
		}
	case "cluster":
		for n := range cfg.Clusters {
			names = append(names, n)
		}
	case "user":
		for n := range cfg.AuthInfos {
			names = append(names, n)
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
