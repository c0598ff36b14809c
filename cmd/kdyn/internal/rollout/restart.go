package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// restartedAtAnnotation is the pod template annotation restart sets.
const restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// now is restart's clock (a variable for tests).
var now = time.Now

type restartOptions struct {
	selector     string
	fieldManager string
	output       string
}

func newRestartCommand(f *cli.Factory) *cobra.Command {
	o := &restartOptions{}
	cmd := &cobra.Command{
		Use:   "restart RESOURCE",
		Short: "Restart a resource",
		Long: `Restart a resource.

Resource rollout will be restarted: kdyn sets the pod template annotation
kubectl.kubernetes.io/restartedAt to the current time (RFC 3339), as kubectl
does, and the controller replaces every pod. A paused deployment is not
restarted.`,
		Example: `  # Restart all deployments in the test-namespace namespace
  kdyn rollout restart deployment -n test-namespace

  # Restart a deployment
  kdyn rollout restart deployment/nginx

  # Restart a daemon set, then follow the new rollout
  kdyn rollout restart daemonset/abc && kdyn rollout status daemonset/abc

  # Restart deployments with the app=nginx label
  kdyn rollout restart deployment --selector=app=nginx`,
		RunE: func(cmd *cobra.Command, args []string) error { return runRestart(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-rollout", "Name of the manager used to track field ownership.")
	cli.AddOutputFlags(fl, &o.output, "Output format: name, json, yaml (or any object output of get).")
	return cmd
}

func runRestart(ctx context.Context, f *cli.Factory, o *restartOptions, args []string) error {
	p, err := cli.NewResultPrinter(f.Streams.Out, o.output, false)
	if err != nil {
		return err
	}
	targets, read, err := prepare(ctx, f, args, o.selector, noRestarter)
	if err != nil {
		return err
	}
	// The patch goes through the REST client so that -o json can print
	// the answer in the server's member order, as kubectl does.
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		obj, err := get(ctx, read, t)
		if err != nil {
			errs.Add(err)
			continue
		}
		if t.Match.GVK.GroupKind() == deploymentGK {
			if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
				errs.Add(fmt.Errorf("%s %q can't restart paused deployment (run rollout resume first)", t.Match.GVR.GroupResource().String(), t.Name))
				continue
			}
		}
		stamp := now().Format(time.RFC3339)
		if old, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "annotations", restartedAtAnnotation); old == stamp {
			errs.Add(fmt.Errorf("failed to create patch for %v: if restart has already been triggered within the past second, please wait before attempting to trigger another", t.Name))
			continue
		}
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]string{restartedAtAnnotation: stamp}}}}})
		raw, err := cli.ResourceRequest(rc.Patch(string(types.StrategicMergePatchType)), t.Match.GVR, t.Namespace).Name(t.Name).
			VersionedParams(&metav1.PatchOptions{FieldManager: o.fieldManager}).Body(patch).DoRaw(ctx)
		if err != nil {
			errs.Add(fmt.Errorf("failed to patch: %w", err))
			continue
		}
		if err := p.PrintRaw(t.Match.GVK.GroupKind(), t.Name, "restarted", raw); err != nil {
			return err
		}
	}
	return errs.Result()
}
