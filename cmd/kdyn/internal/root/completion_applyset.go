package root

import (
	"context"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// applySetParentTypeLabel marks the CRDs whose objects may be ApplySet
// parents.
const applySetParentTypeLabel = "applyset.kubernetes.io/is-parent-type"

// registerApplySetCompletion completes --applyset of apply and diff:
// RESOURCE/NAME with the names of that resource's objects; without a
// slash, the parent types ("secrets/", "configmaps/" and each custom
// resource whose CRD is labelled as a parent type, one list of CRDs) and
// the Secrets of the namespace that already are parents (a bare NAME is a
// Secret).
func registerApplySetCompletion(root *cobra.Command, f *cli.Factory) {
	for _, name := range []string{"apply", "diff"} {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name || c.Flags().Lookup("applyset") == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc("applyset", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			ctx, cancel := context.WithTimeout(commandContext(cmd), completionTimeout)
			defer cancel()
			return applySetCandidates(ctx, f, toComplete)
		})
	}
}

func applySetCandidates(ctx context.Context, f *cli.Factory, toComplete string) ([]string, cobra.ShellCompDirective) {
	if typ, prefix, ok := strings.Cut(toComplete, "/"); ok {
		var out []string
		for _, n := range completeNames(ctx, f, typ, prefix, nil) {
			out = append(out, typ+"/"+n)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	types := []string{"secrets/", "configmaps/"}
	client, err := f.QuietDynamicClient()
	if err == nil {
		crds, err := client.Metadata().Resource(cli.CRDGVR).
			List(ctx, metav1.ListOptions{LabelSelector: applySetParentTypeLabel})
		if err == nil {
			for _, crd := range crds.Items {
				types = append(types, crd.Name+"/")
			}
		}
	}
	var out []string
	for _, t := range types {
		if strings.HasPrefix(t, toComplete) {
			out = append(out, t)
		}
	}
	if ns, _, err := f.Namespace(); err == nil && client != nil {
		if l, err := client.Metadata().Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).
			List(ctx, metav1.ListOptions{LabelSelector: "applyset.kubernetes.io/id"}); err == nil {
			for _, it := range l.Items {
				if strings.HasPrefix(it.Name, toComplete) {
					out = append(out, it.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
