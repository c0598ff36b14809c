package rollout

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

type historyOptions struct {
	revision int64
	selector string
	output   string
	// outputSet: -o was given. --template alone prints the object itself
	// (the history summary's object) with the template, as kubectl does,
	// not its revisions.
	outputSet bool
}

func newHistoryCommand(f *cli.Factory) *cobra.Command {
	o := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history (TYPE NAME | TYPE/NAME) [flags]",
		Short: "View rollout history",
		Long: `View previous rollout revisions and configurations.

A Deployment's revisions are the ReplicaSets it controls, numbered by their
deployment.kubernetes.io/revision annotation; a StatefulSet's or DaemonSet's
are the ControllerRevisions it controls. CHANGE-CAUSE is a revision's
kubernetes.io/change-cause annotation. --revision=N describes that
revision's pod template; with -o, kdyn prints the revisions themselves (a
Deployment's ReplicaSets, or the StatefulSet or DaemonSet as it was at each
revision). --template without -o prints the object itself with the
template, as kubectl does.`,
		Example: `  # View the rollout history of a deployment
  kdyn rollout history deployment/abc

  # View the details of daemonset revision 3
  kdyn rollout history daemonset/abc --revision=3

  # The ReplicaSet of revision 2, as YAML
  kdyn rollout history deployment/abc --revision=2 -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.outputSet = cmd.Flags().Changed("output")
			return runHistory(cmd.Context(), f, o, args)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&o.revision, "revision", 0, "See the details, including podTemplate of the revision specified")
	fl.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	cli.AddOutputFlags(fl, &o.output, "Output format: name, json, yaml (or any object output of get).")
	return cmd
}

func runHistory(ctx context.Context, f *cli.Factory, o *historyOptions, args []string) error {
	if o.revision < 0 {
		return cli.Usagef("revision must be a positive integer: %v", o.revision)
	}
	var out cli.OutputSpec
	if o.output != "" {
		var err error
		if out, _, err = cli.WriteOutput(o.output); err != nil {
			return err
		}
	}
	targets, client, err := prepare(ctx, f, args, o.selector, noHistoryViewer)
	if err != nil {
		return err
	}
	for _, t := range targets {
		obj, err := get(ctx, client, t)
		if err != nil {
			return err
		}
		revs, err := revisions(ctx, client, obj)
		if err != nil {
			return err
		}
		if o.output != "" && !o.outputSet {
			if err := cli.PrintResults(f, out, []*unstructured.Unstructured{obj}, true); err != nil {
				return err
			}
			continue
		}
		if o.output != "" {
			if err := printRevisions(f, out, obj, revs, o.revision); err != nil {
				return err
			}
			continue
		}
		text, err := historyText(revs, o.revision, obj.GroupVersionKind().GroupKind() == deploymentGK)
		if err != nil {
			return err
		}
		withRevision := ""
		if o.revision > 0 {
			withRevision = fmt.Sprintf("with revision #%d", o.revision)
		}
		fmt.Fprintf(f.Streams.Out, "%s %s\n%s\n", t.KindName(), withRevision, text)
	}
	return nil
}

// historyText is kubectl's history view: a REVISION / CHANGE-CAUSE table,
// or the pod template of one revision (a Deployment's with the
// ReplicaSet's change cause among the template's annotations, as kubectl
// shows it).
func historyText(revs []revision, n int64, deployment bool) (string, error) {
	if len(revs) == 0 {
		return "No rollout history found.", nil
	}
	var b strings.Builder
	if n > 0 {
		r, ok := find(revs, n)
		if !ok {
			return "", fmt.Errorf("unable to find the specified revision")
		}
		template := r.template
		if deployment && r.changeCause != "" {
			template = copyMap(template)
			_ = unstructured.SetNestedField(template, r.changeCause, "metadata", "annotations", changeCauseAnnotation)
		}
		describeTemplate(&b, template)
		return b.String(), nil
	}
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "REVISION\tCHANGE-CAUSE\n")
	for _, r := range revs {
		cause := r.changeCause
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(tw, "%d\t%s\n", r.number, cause)
	}
	tw.Flush()
	return b.String(), nil
}

// printRevisions prints the revisions (or revision n) with -o, one object
// after the other as kubectl does (YAML documents apart by "---", nothing
// when there are none) and without managedFields: a Deployment's
// ReplicaSets, or the object as it was at each revision.
func printRevisions(f *cli.Factory, out cli.OutputSpec, obj *unstructured.Unstructured, revs []revision, n int64) error {
	if n > 0 {
		r, ok := find(revs, n)
		if !ok {
			return fmt.Errorf("unable to find the specified revision")
		}
		revs = []revision{r}
	}
	p, err := out.ObjectPrinter(f.Streams.Out, false)
	if err != nil {
		return err
	}
	if err := p.Begin(true); err != nil {
		return err
	}
	for _, r := range revs {
		shown := r.source
		if obj.GroupVersionKind().GroupKind() != deploymentGK {
			shown = withTemplate(obj, r.template)
		}
		if out.HidesManagedFields() {
			shown = kunstructured.StripManagedFields(shown)
		}
		if err := p.Print(printers.ItemFromObject(shown)); err != nil {
			return err
		}
	}
	return p.Finish()
}
