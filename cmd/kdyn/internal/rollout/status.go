package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/readiness"
)

type statusOptions struct {
	watch    bool
	revision int64
	timeout  time.Duration
	selector string
}

func newStatusCommand(f *cli.Factory) *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status (TYPE NAME | TYPE/NAME) [flags]",
		Short: "Show the status of the rollout",
		Long: `Show the status of the rollout.

By default 'rollout status' watches the latest rollout until it's done and
prints kubectl's progress line at each change. The rollout is done when
kubectl's rules say so (all replicas updated and available, old ones gone)
and the object is ready by the rules of 'kdyn wait --for=ready' (for a
Deployment, also its Available and Progressing conditions); while it is
not, kdyn says what it waits for. A Deployment past its progress deadline
fails at once. Use --watch=false to print the status once. --revision pins
a Deployment to a revision: the command fails if another one is rolling.

kdyn lists the object by name, then follows a watch: nothing is polled.`,
		Example: `  # Watch the rollout status of a deployment
  kdyn rollout status deployment/nginx

  # At most 5 minutes, then fail (exit 1, or 7 with --exit-codes)
  kdyn rollout status statefulset/db --timeout=5m

  # Print the status once
  kdyn rollout status daemonset/agent --watch=false`,
		RunE: func(cmd *cobra.Command, args []string) error { return runStatus(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.watch, "watch", "w", true, "Watch the status of the rollout until it's done.")
	fl.Int64Var(&o.revision, "revision", 0, "Pin to a specific revision for showing its status. Defaults to 0 (last revision).")
	fl.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")
	fl.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	return cmd
}

// errDeleted ends a watch whose object went away (kubectl's wording).
var errDeleted = errors.New("object has been deleted")

func runStatus(ctx context.Context, f *cli.Factory, o *statusOptions, args []string) error {
	if o.revision < 0 {
		return cli.Usagef("revision must be a positive integer: %v", o.revision)
	}
	targets, client, err := prepare(ctx, f, args, o.selector, noStatusViewer)
	if err != nil {
		return err
	}
	for _, t := range targets {
		wctx, cancel := ctx, context.CancelFunc(func() {})
		if o.timeout > 0 {
			wctx, cancel = context.WithTimeout(ctx, o.timeout)
		}
		opts := cli.Selection{}.ListOptions()
		opts.FieldSelector = "metadata.name=" + t.Name
		show := func(obj *unstructured.Unstructured) (bool, error) {
			msg, done, err := rolloutStatus(obj, o.revision)
			if err != nil {
				return false, err
			}
			fmt.Fprint(f.Streams.Out, msg)
			return done || !o.watch, nil
		}
		err := cli.Follow(wctx, t.Resource(client), opts, informer.FollowFuncs[*unstructured.Unstructured]{
			Listed: func(items []*unstructured.Unstructured) (bool, error) {
				for _, obj := range items {
					if obj.GetName() == t.Name {
						return show(obj)
					}
				}
				return false, apierrors.NewNotFound(t.Match.GVR.GroupResource(), t.Name)
			},
			Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
				if typ == watch.Deleted {
					return false, errDeleted
				}
				return show(obj)
			},
		})
		timedOut := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case timedOut:
			return fmt.Errorf("%w: timed out waiting for the condition", cli.ErrTimeout)
		case err != nil:
			return err
		}
	}
	return nil
}

// rolloutStatus is kubectl's status line for obj and whether the rollout
// is done, with the readiness package's verdict on top: kubectl's "done"
// stands only once the object is Current.
func rolloutStatus(obj *unstructured.Unstructured, revision int64) (string, bool, error) {
	var (
		msg  string
		done bool
		err  error
	)
	switch obj.GroupVersionKind().GroupKind() {
	case deploymentGK:
		msg, done, err = deploymentStatus(obj, revision)
	case daemonSetGK:
		msg, done, err = daemonSetStatus(obj)
	case statefulSetGK:
		msg, done, err = statefulSetStatus(obj)
	default:
		return "", false, fmt.Errorf("no status viewer has been implemented for %q", obj.GroupVersionKind().GroupKind().String())
	}
	if err != nil || !done {
		return msg, done, err
	}
	res, err := readiness.Compute(obj)
	if err != nil {
		return "", false, err
	}
	if !res.Ready() {
		return fmt.Sprintf("Waiting for %s %q rollout to finish: %s...\n", kindWords(obj), obj.GetName(), strings.TrimSuffix(res.Message, ".")), false, nil
	}
	return msg, true, nil
}

// kindWords is how kubectl's messages name a kind.
func kindWords(obj *unstructured.Unstructured) string {
	switch obj.GroupVersionKind().GroupKind() {
	case daemonSetGK:
		return "daemon set"
	case statefulSetGK:
		return "statefulset"
	}
	return "deployment"
}

// deploymentStatus is kubectl's DeploymentStatusViewer.
func deploymentStatus(d *unstructured.Unstructured, revision int64) (string, bool, error) {
	name := d.GetName()
	if revision > 0 {
		rev, err := annotationRevision(d)
		if err != nil {
			return "", false, fmt.Errorf("cannot get the revision of deployment %q: %w", name, err)
		}
		if rev != revision {
			return "", false, fmt.Errorf("desired revision (%d) is different from the running revision (%d)", revision, rev)
		}
	}
	if d.GetGeneration() > intField(d, "status", "observedGeneration") {
		return "Waiting for deployment spec update to be observed...\n", false, nil
	}
	conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Progressing" && m["reason"] == "ProgressDeadlineExceeded" {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", name)
		}
	}
	updated := intField(d, "status", "updatedReplicas")
	replicas := intField(d, "status", "replicas")
	available := intField(d, "status", "availableReplicas")
	if want, ok := intFieldOK(d, "spec", "replicas"); ok && updated < want {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", name, updated, want), false, nil
	}
	if replicas > updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", name, replicas-updated), false, nil
	}
	if available < updated {
		return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", name, available, updated), false, nil
	}
	return fmt.Sprintf("deployment %q successfully rolled out\n", name), true, nil
}

// daemonSetStatus is kubectl's DaemonSetStatusViewer.
func daemonSetStatus(ds *unstructured.Unstructured) (string, bool, error) {
	if typ := stringField(ds, "spec", "updateStrategy", "type"); typ != "" && typ != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for RollingUpdate strategy type")
	}
	name := ds.GetName()
	if ds.GetGeneration() > intField(ds, "status", "observedGeneration") {
		return "Waiting for daemon set spec update to be observed...\n", false, nil
	}
	desired := intField(ds, "status", "desiredNumberScheduled")
	updated := intField(ds, "status", "updatedNumberScheduled")
	available := intField(ds, "status", "numberAvailable")
	if updated < desired {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", name, updated, desired), false, nil
	}
	if available < desired {
		return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", name, available, desired), false, nil
	}
	return fmt.Sprintf("daemon set %q successfully rolled out\n", name), true, nil
}

// statefulSetStatus is kubectl's StatefulSetStatusViewer. The server
// defaults rollingUpdate.partition to 0, so a RollingUpdate StatefulSet
// read from the server reports its rollout as a partitioned one, as
// kubectl's does.
func statefulSetStatus(sts *unstructured.Unstructured) (string, bool, error) {
	if typ := stringField(sts, "spec", "updateStrategy", "type"); typ != "" && typ != "RollingUpdate" {
		return "", true, fmt.Errorf("rollout status is only available for RollingUpdate strategy type")
	}
	observed := intField(sts, "status", "observedGeneration")
	if observed == 0 || sts.GetGeneration() > observed {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	replicas, hasReplicas := intFieldOK(sts, "spec", "replicas")
	ready := intField(sts, "status", "readyReplicas")
	if hasReplicas && ready < replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", replicas-ready), false, nil
	}
	updated := intField(sts, "status", "updatedReplicas")
	if _, ok, _ := unstructured.NestedMap(sts.Object, "spec", "updateStrategy", "rollingUpdate"); ok {
		if partition, ok := intFieldOK(sts, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && hasReplicas && updated < replicas-partition {
			return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n", updated, replicas-partition), false, nil
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", updated), true, nil
	}
	updateRevision := stringField(sts, "status", "updateRevision")
	if updateRevision != stringField(sts, "status", "currentRevision") {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n", updated, updateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", intField(sts, "status", "currentReplicas"), stringField(sts, "status", "currentRevision")), true, nil
}
