package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

type undoOptions struct {
	toRevision int64
	selector   string
	output     string
	dryRun     *cli.DryRunFlag
}

func newUndoCommand(f *cli.Factory) *cobra.Command {
	o := &undoOptions{}
	cmd := &cobra.Command{
		Use:   "undo (TYPE NAME | TYPE/NAME) [flags]",
		Short: "Undo a previous rollout",
		Long: `Roll back to a previous rollout.

As kubectl does: a Deployment gets the pod template of the ReplicaSet of the
revision (without its pod-template-hash label) and that ReplicaSet's
annotations, with a JSON patch; a StatefulSet or DaemonSet gets the data of
the revision's ControllerRevision as a strategic merge patch. Without
--to-revision the revision before the latest is restored. An object whose
template already matches the revision is left alone ("skipped rollback").
With --dry-run=client nothing is sent: kdyn prints the pod template the
rollback would restore, as kubectl does.`,
		Example: `  # Roll back to the previous deployment
  kdyn rollout undo deployment/abc

  # Roll back to daemonset revision 3
  kdyn rollout undo daemonset/abc --to-revision=3

  # Show the pod template a rollback would restore, changing nothing
  kdyn rollout undo --dry-run=client deployment/abc

  # Let the server check the rollback without storing it
  kdyn rollout undo --dry-run=server deployment/abc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUndo(cmd.Context(), f, o, cmd.Root().Name(), args)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&o.toRevision, "to-revision", 0, "The revision to rollback to. Default to 0 (last revision).")
	fl.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	cli.AddOutputFlags(fl, &o.output, "Output format: name, json, yaml (or any object output of get).")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	return cmd
}

// Deployment annotations a rollback keeps from the Deployment rather than
// taking from the ReplicaSet (kubectl's annotationsToSkip).
var keepAnnotations = map[string]bool{
	kunstructured.LastAppliedAnnotation:         true,
	revisionAnnotation:                          true,
	"deployment.kubernetes.io/revision-history": true,
	"deployment.kubernetes.io/desired-replicas": true,
	"deployment.kubernetes.io/max-replicas":     true,
	"deprecated.deployment.rollback.to":         true,
}

// podTemplateHashLabel is the label the deployment controller adds to a
// ReplicaSet's template.
const podTemplateHashLabel = "pod-template-hash"

// runUndo rolls the targets back; tool is the name kdyn runs under ("kdyn",
// or "kubectl" when installed as such), named in the apply warning.
func runUndo(ctx context.Context, f *cli.Factory, o *undoOptions, tool string, args []string) error {
	dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, o.dryRun, o.output, false)
	if err != nil {
		return err
	}
	if o.toRevision < 0 {
		return fmt.Errorf("unable to find specified revision %v in history", o.toRevision)
	}
	targets, read, err := prepare(ctx, f, args, o.selector, noRollbacker)
	if err != nil {
		return err
	}
	write, err := f.WriteClient("kubectl-rollout", dry)
	if err != nil {
		return err
	}
	for _, t := range targets {
		obj, err := get(ctx, read, t)
		if err != nil {
			return err
		}
		if _, ok := obj.GetAnnotations()[kunstructured.LastAppliedAnnotation]; ok {
			fmt.Fprintf(f.Streams.ErrOut, "Warning: resource %[1]s was previously managed with '%[3]s apply'. "+
				"Rolling back will not update the %[2]s annotation, which may cause unexpected behavior on future '%[3]s apply' operations. "+
				"Consider using '%[3]s apply' with your previous configuration file instead.\n", t.Match.GVR.Resource+"/"+t.Name, kunstructured.LastAppliedAnnotation, tool)
		}
		result, res, err := rollback(ctx, read, t.Resource(write), obj, o.toRevision, dry == cli.DryRunClient)
		if err != nil {
			return err
		}
		if res == nil {
			res = obj
		}
		if err := p.Print(t.Match.GVK.GroupKind(), t.Name, result, res); err != nil {
			return err
		}
	}
	return nil
}

// rollback restores revision n (0: the one before the latest) of obj
// through rc, and returns kubectl's word for what happened and the object
// the server returned (nil when nothing was sent). With describeOnly it
// sends nothing and returns the description of the pod template it would
// restore, as kubectl's client dry run does.
func rollback(ctx context.Context, read dynamic.Interface, rc dynamic.ResourceInterface, obj *unstructured.Unstructured, n int64, describeOnly bool) (string, *unstructured.Unstructured, error) {
	revs, err := revisions(ctx, read, obj)
	if err != nil {
		return "", nil, err
	}
	deployment := obj.GroupVersionKind().GroupKind() == deploymentGK
	r, ok := find(revs, n)
	switch {
	case !ok && n > 0:
		return "", nil, fmt.Errorf("unable to find specified revision %v in history", n)
	case !ok && deployment:
		return "", nil, fmt.Errorf("no rollout history found for deployment %q", obj.GetName())
	case !ok:
		return "", nil, fmt.Errorf("no last revision to roll back to")
	}
	if describeOnly {
		var b strings.Builder
		if !deployment {
			b.WriteString("will roll back to ")
		}
		describeTemplate(&b, r.template)
		return b.String(), nil, nil
	}
	if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); deployment && paused {
		return "", nil, fmt.Errorf("you cannot rollback a paused deployment; resume it first with 'kdyn rollout resume' and try again")
	}
	template := copyMap(r.template)
	if deployment {
		unstructured.RemoveNestedField(template, "metadata", "labels", podTemplateHashLabel)
		if labels, _, _ := unstructured.NestedMap(template, "metadata", "labels"); len(labels) == 0 {
			unstructured.RemoveNestedField(template, "metadata", "labels")
		}
	}
	current, _, _ := unstructured.NestedMap(obj.Object, "spec", "template")
	if templatesEqual(current, template) {
		// kubectl names the revision asked for (0 without --to-revision).
		return fmt.Sprintf("skipped rollback (current template already matches revision %d)", n), nil, nil
	}
	var (
		patchType types.PatchType
		patch     []byte
	)
	if deployment {
		annotations := map[string]string{}
		for k, v := range obj.GetAnnotations() {
			if keepAnnotations[k] {
				annotations[k] = v
			}
		}
		for k, v := range r.source.GetAnnotations() {
			if !keepAnnotations[k] {
				annotations[k] = v
			}
		}
		patchType = types.JSONPatchType
		patch, err = json.Marshal([]any{
			map[string]any{"op": "replace", "path": "/spec/template", "value": template},
			map[string]any{"op": "replace", "path": "/metadata/annotations", "value": annotations},
		})
	} else {
		patchType = types.StrategicMergePatchType
		patch, err = controllerRevisionPatch(r.source)
	}
	if err != nil {
		return "", nil, err
	}
	res, err := rc.Patch(ctx, obj.GetName(), patchType, patch, metav1.PatchOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("failed restoring revision %d: %w", r.number, err)
	}
	return "rolled back", res, nil
}

// templatesEqual compares pod templates as kubectl does for Deployments
// (ignoring the pod-template-hash label).
func templatesEqual(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		m = copyMap(m)
		unstructured.RemoveNestedField(m, "metadata", "labels", podTemplateHashLabel)
		unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
		return m
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// copyMap deep-copies a JSON object; nil gives an empty one.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return runtime.DeepCopyJSONValue(m).(map[string]any)
}
