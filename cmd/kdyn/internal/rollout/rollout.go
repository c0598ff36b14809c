package rollout

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/mutate"
	"github.com/kdyn/kdyn/dynamic"
)

// The kinds that have rollouts.
var (
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetGK   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
)

// ValidTypes are the resource types rollout takes, for completion.
var ValidTypes = []string{"deployment", "daemonset", "statefulset"}

// NewCommand returns "kdyn rollout" and its subcommands.
func NewCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the rollout of a resource",
		Long: `Manage the rollout of one or many resources.

Valid resource types include:

  * deployments
  * daemonsets
  * statefulsets`,
		Example: `  # Restart a deployment, then follow its rollout
  kdyn rollout restart deployment/abc
  kdyn rollout status deployment/abc --timeout=5m

  # See the revisions of a daemonset, then go back to the previous one
  kdyn rollout history daemonset/abc
  kdyn rollout undo daemonset/abc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStatusCommand(f), newRestartCommand(f), newHistoryCommand(f), newUndoCommand(f),
		mutate.NewRolloutPauseCommand(f, true), mutate.NewRolloutPauseCommand(f, false))
	return cli.GroupCommand(cmd)
}

// resolve returns the objects the arguments name (TYPE NAME..., TYPE/NAME...,
// TYPE -l SELECTOR); each must be a Deployment, StatefulSet or DaemonSet.
// unsupported is the command's error, in kubectl's words, for an object
// of another kind.
func resolve(ctx context.Context, f *cli.Factory, args []string, selector string, unsupported func(cli.Target) error) ([]cli.Target, error) {
	if len(args) == 0 {
		return nil, cli.Usagef("required resource not specified")
	}
	sel := cli.Selection{Selector: selector}
	if len(args) == 1 && selector == "" && !strings.Contains(args[0], "/") {
		// A type alone: every object of it in the namespace, as kubectl's
		// rollout commands take it.
		sel.All = true
	}
	targets, err := cli.ResolveObjects(ctx, f, args, sel)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		switch t.Match.GVK.GroupKind() {
		case deploymentGK, statefulSetGK, daemonSetGK:
		default:
			return nil, unsupported(t)
		}
	}
	if len(targets) == 0 {
		ns, _, _ := f.Namespace()
		fmt.Fprintf(f.Streams.ErrOut, "No resources found in %s namespace.\n", ns)
	}
	return targets, nil
}

// kubectl's errors for a kind without rollouts, which each command words
// its own way (the history and undo ones print the group and kind as Go
// prints kubectl's GroupKindElement).

func noStatusViewer(t cli.Target) error {
	return fmt.Errorf("no status viewer has been implemented for %s", t.Match.GVK.GroupKind())
}

func noHistoryViewer(t cli.Target) error { return noVisitor("history", t) }

func noRollbacker(t cli.Target) error { return noVisitor("rollbacker", t) }

// noVisitor is kubectl's error when it finds no history viewer or
// rollbacker (what) for a kind.
func noVisitor(what string, t cli.Target) error {
	gk := t.Match.GVK.GroupKind()
	return fmt.Errorf("error retrieving %s for %q, no visitor method exists for {%s %s}", what, gk.String(), gk.Group, gk.Kind)
}

func noRestarter(t cli.Target) error {
	return fmt.Errorf("%s %q restarting is not supported", t.Match.GVR.GroupResource(), t.Name)
}

// prepare resolves the arguments (see resolve) and returns the factory's
// client for reads.
func prepare(ctx context.Context, f *cli.Factory, args []string, selector string, unsupported func(cli.Target) error) ([]cli.Target, dynamic.Interface, error) {
	targets, err := resolve(ctx, f, args, selector, unsupported)
	if err != nil {
		return nil, nil, err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return nil, nil, err
	}
	return targets, client, nil
}

// get fetches a target's object.
func get(ctx context.Context, c dynamic.Interface, t cli.Target) (*unstructured.Unstructured, error) {
	return t.Resource(c).Get(ctx, t.Name, metav1.GetOptions{})
}

// Field readers of the status rules.

// intField reads an integer field (0 when absent).
func intField(obj *unstructured.Unstructured, fields ...string) int64 {
	n, _ := intFieldOK(obj, fields...)
	return n
}

func intFieldOK(obj *unstructured.Unstructured, fields ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if !found || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func stringField(obj *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj.Object, fields...)
	return s
}

// revisionAnnotation is where the deployment controller numbers
// Deployments and their ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// annotationRevision reads the revision annotation as kubectl's
// deploymentutil.Revision does: 0 when absent, an error when it is not a
// number.
func annotationRevision(obj *unstructured.Unstructured) (int64, error) {
	v, ok := obj.GetAnnotations()[revisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}
