package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

var (
	nodesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	daemonSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	nodeKind      = schema.GroupKind{Kind: "Node"}
	podKind       = schema.GroupKind{Kind: "Pod"}
)

// namespaceTerminating is the cause the server gives for an eviction it
// refuses in a namespace being deleted.
const namespaceTerminating metav1.CauseType = "NamespaceTerminating"

// drainOptions are the flags of kdyn drain.
type drainOptions struct {
	selector         string
	podSelector      string
	force            bool
	ignoreDaemonSets bool
	deleteEmptyDir   bool
	disableEviction  bool
	gracePeriod      int
	timeout          time.Duration
	skipWaitSeconds  int
	chunkSize        int64
	dryRun           *cli.DryRunFlag
}

// NewDrainCommand returns "kdyn drain".
func NewDrainCommand(f *cli.Factory) *cobra.Command {
	o := &drainOptions{gracePeriod: -1, chunkSize: 500}
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Drain node in preparation for maintenance",
		Long: `Drain nodes before maintenance, as kubectl drain does: cordon them (as kdyn
cordon), then evict every pod on them through the policy/v1 Eviction API,
which honours PodDisruptionBudgets (an eviction a budget refuses is retried
every 5 seconds), and wait until the pods are gone. --disable-eviction
deletes the pods instead, bypassing the budgets.

Some pods stop the drain unless a flag allows them: DaemonSet pods (their
controller ignores the cordon and would put them back) need
--ignore-daemonsets, and stay; pods with emptyDir volumes need
--delete-emptydir-data (the data is lost); pods that declare no controller
need --force (nothing recreates them), which also lets pods whose
DaemonSet is gone go. Mirror pods of static pods are left alone. Finished
pods (Succeeded, Failed) always go.

Prints "node/NAME cordoned", "evicting pod NAMESPACE/NAME", "pod/NAME
evicted" and "node/NAME drained", with " (dry run)" or " (server dry run)"
under --dry-run. A node that cannot be drained is reported and the others
go on; the command then fails. Run kdyn uncordon when the node is back.`,
		Example: `  # Drain node "foo", even if it has pods that no controller manages
  kdyn drain foo --force

  # Refuse pods that no controller manages; give each pod 15 minutes to stop
  kdyn drain foo --grace-period=900

  # Every node of a pool, leaving their DaemonSet pods, giving up after 5 minutes
  kdyn drain -l pool=batch --ignore-daemonsets --timeout=5m

  # What would be evicted
  kdyn drain foo --ignore-daemonsets --dry-run=server`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNodeArgs(cmd, args, o.selector); err != nil {
				return err
			}
			return o.run(cmd.Context(), f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.force, "force", false, "Continue even if there are pods that do not declare a controller.")
	fl.BoolVar(&o.ignoreDaemonSets, "ignore-daemonsets", false, "Ignore DaemonSet-managed pods.")
	fl.BoolVar(&o.deleteEmptyDir, "delete-emptydir-data", false, "Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
	fl.IntVar(&o.gracePeriod, "grace-period", -1, "Period of time in seconds given to each pod to terminate gracefully. If negative, the default value specified in the pod will be used.")
	fl.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up, zero means infinite.")
	fl.StringVar(&o.podSelector, "pod-selector", "", "Label selector to filter pods on the node.")
	fl.BoolVar(&o.disableEviction, "disable-eviction", false, "Delete the pods instead of evicting them, even if eviction is supported. This bypasses PodDisruptionBudgets; use with caution.")
	fl.IntVar(&o.skipWaitSeconds, "skip-wait-for-delete-timeout", 0, "Do not wait for a pod whose deletion started more than N seconds ago (0: always wait).")
	fl.Int64Var(&o.chunkSize, "chunk-size", 500, "List nodes and pods in chunks of this size (0: one request).")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	fl.StringVarP(&o.selector, "selector", "l", "", "Label selector of the nodes to drain.")
	return cmd
}

// drainer is one run of kdyn drain.
type drainer struct {
	*drainOptions
	f           *cli.Factory
	dry         cli.DryRunMode
	client      dynamic.Interface // reads, evictions and deletions
	podSelector string            // --pod-selector as kubectl sends it
	out, errOut io.Writer         // safe for the evictions' goroutines
	printer     *cli.ResultPrinter
	// retryDelay is the pause before an eviction refused with 429 (a
	// PodDisruptionBudget) or in a terminating namespace is tried again;
	// interval that between two checks that the pods are gone.
	retryDelay, interval time.Duration
}

// run drains the nodes names (or --selector) picks: reads them all, cordons
// them all, then drains them one by one, going on past a node that fails,
// and ends with kubectl's report of those that did.
func (o *drainOptions) run(ctx context.Context, f *cli.Factory, names []string) error {
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	sel, err := labels.Parse(o.podSelector)
	if err != nil {
		return errors.New("--pod-selector=<pod_selector> must be a valid label selector")
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	out := &cli.LockedWriter{W: f.Streams.Out}
	printer, err := cli.NewResultPrinter(out, "", false)
	if err != nil {
		return err
	}
	printer.SetDryRun(dry)
	d := &drainer{drainOptions: o, f: f, dry: dry, client: client, podSelector: sel.String(),
		out: out, errOut: &cli.LockedWriter{W: f.Streams.ErrOut}, printer: printer,
		retryDelay: 5 * time.Second, interval: time.Second}
	nodes, err := d.nodes(ctx, names)
	if err != nil {
		return err
	}
	if err := d.cordon(ctx, nodes); err != nil {
		return err
	}
	var failed []error
	var pending []string
	drained := map[string]bool{}
	for _, n := range nodes {
		if err := d.drainNode(ctx, n.Name); err != nil {
			fmt.Fprintf(d.errOut, "error: unable to drain node %q due to error: %s, continuing command...\n", n.Name, err)
			if !drained[n.Name] {
				failed = append(failed, err)
				pending = append(pending, n.Name)
			}
			continue
		}
		drained[n.Name] = true
		if err := d.printer.Print(nodeKind, n.Name, "drained", nil); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		fmt.Fprintln(d.errOut, "There are pending nodes to be drained:")
		for _, name := range pending {
			fmt.Fprintf(d.errOut, " %s\n", name)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	msg := finalMessage(failed, cli.ErrorMessage)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	fmt.Fprint(d.errOut, msg)
	last := failed[len(failed)-1]
	return &cli.ExitError{Code: cli.ExitCode(last, f.Flags.ExitCodes), Silent: true, Err: last}
}

// nodes reads the nodes the arguments name (NAME or TYPE/NAME, each read,
// the first failure ending the command), or those --selector finds, listed
// in chunks of --chunk-size.
func (d *drainer) nodes(ctx context.Context, names []string) ([]cli.Target, error) {
	nodeMatch := restmapper.Match{GVR: nodesGVR, GVK: nodesGVR.GroupVersion().WithKind("Node")}
	if len(names) == 0 {
		opts := metav1.ListOptions{LabelSelector: strings.TrimSpace(d.selector), Limit: d.chunkSize}
		items, err := listAll(ctx, d.client.Resource(nodesGVR), opts)
		if err != nil {
			return nil, err
		}
		out := make([]cli.Target, 0, len(items))
		for _, obj := range items {
			out = append(out, cli.Target{Match: nodeMatch, Name: obj.GetName(), Obj: obj})
		}
		return out, nil
	}
	ns, _, err := d.f.Namespace()
	if err != nil {
		return nil, err
	}
	var out []cli.Target
	for _, name := range names {
		m := nodeMatch
		m.Name = name
		if strings.Contains(name, "/") {
			matches, err := d.f.Resolve(ctx, []string{name})
			if err != nil {
				return nil, err
			}
			if len(matches) != 1 || matches[0].Name == "" {
				return nil, fmt.Errorf("expected a node name, got %q", name)
			}
			m = matches[0]
		}
		obj, err := d.client.Resource(m.GVR).Namespace(cli.NamespaceFor(m, ns)).Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if m.GVR.GroupResource() != nodesGVR.GroupResource() {
			return nil, fmt.Errorf("expected resource of type node, got %q", m.GVR.String())
		}
		out = append(out, cli.Target{Match: m, Name: m.Name, Obj: obj})
	}
	return out, nil
}

// cordon marks the nodes unschedulable as kdyn cordon does; a node that
// cannot be cordoned is reported and still drained, as kubectl does.
func (d *drainer) cordon(ctx context.Context, nodes []cli.Target) error {
	if len(nodes) == 0 {
		return nil
	}
	// No field manager of its own: the server records "kubectl" for
	// kubectl's drain.
	w, err := d.f.WriteClient("kubectl", d.dry)
	if err != nil {
		return err
	}
	for _, t := range nodes {
		if err := one(ctx, d.printer, d.dry, w.Resource(t.Match.GVR), t, cordonChange(true), ""); err != nil {
			fmt.Fprintf(d.errOut, "error: unable to cordon node %q: %v\n", t.Name, err)
		}
	}
	return nil
}

// drainNode evicts (or deletes) the pods of one node that the filters let
// go, after printing their warnings; with --dry-run=client it only names
// them. After a failure it names the pods still there.
func (d *drainer) drainNode(ctx context.Context, node string) error {
	judged, err := d.judgePods(ctx, node)
	if err != nil {
		return err
	}
	if w := judged.warnings(); w != "" {
		fmt.Fprintf(d.errOut, "Warning: %s\n", w)
	}
	pods := judged.deletable()
	if d.dry == cli.DryRunClient {
		for _, p := range pods {
			fmt.Fprintf(d.out, "evicting pod %s/%s (dry run)\n", p.GetNamespace(), p.GetName())
		}
		return nil
	}
	err = d.deleteOrEvict(ctx, pods)
	if err == nil {
		return nil
	}
	again, lerr := d.judgePods(ctx, node)
	if again != nil {
		if left := again.deletable(); len(left) > 0 {
			fmt.Fprintf(d.errOut, "There are pending pods in node %q when an error occurred: %v\n", node, err)
			for _, p := range left {
				fmt.Fprintf(d.errOut, "pod/%s\n", p.GetName())
			}
		}
	}
	if lerr != nil {
		fmt.Fprintf(d.errOut, "Following errors occurred while getting the list of pods to delete:\n%s", lerr)
	}
	return err
}

// judgePods lists the node's pods (those --pod-selector picks) and judges
// them. The error is a list: of the listing's failure (and no pods), or
// of the pods that stop the drain.
func (d *drainer) judgePods(ctx context.Context, node string) (*judgedPods, error) {
	opts := metav1.ListOptions{
		LabelSelector: d.podSelector,
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		Limit:         d.chunkSize,
	}
	pods, err := listAll(ctx, d.client.Resource(podsGVR), opts)
	if err != nil {
		return nil, utilerrors.NewAggregate([]error{explainListError(err, opts)})
	}
	daemonSets := map[string]error{}
	filters := podFilters{
		force: d.force, ignoreDaemonSets: d.ignoreDaemonSets, deleteEmptyDir: d.deleteEmptyDir,
		skipWaitSeconds: d.skipWaitSeconds, now: time.Now(),
		daemonSet: func(ns, name string) error {
			key := ns + "/" + name
			if err, ok := daemonSets[key]; ok {
				return err
			}
			_, err := d.client.Resource(daemonSetsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			daemonSets[key] = err
			return err
		},
	}
	judged := filters.judge(pods)
	return &judged, judged.errors()
}

// explainListError adds kubectl's context to a list refused as bad or not
// found: what was listed, with which selectors.
func explainListError(err error, opts metav1.ListOptions) error {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !(apierrors.IsBadRequest(err) || apierrors.IsNotFound(err)) {
		return err
	}
	out := *se
	out.ErrStatus.Message = fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %v",
		podsGVR.String(), opts.LabelSelector, opts.FieldSelector, se.ErrStatus.Message)
	return &out
}

// listAll lists in pages of opts.Limit (all at once when it is 0).
func listAll(ctx context.Context, l dynamic.Lister, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for {
		page, err := l.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			out = append(out, &page.Items[i])
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// deleteOrEvict evicts the pods when the server serves evictions (and
// --disable-eviction is not set), deletes them otherwise.
func (d *drainer) deleteOrEvict(ctx context.Context, pods []*unstructured.Unstructured) error {
	if len(pods) == 0 {
		return nil
	}
	if !d.disableEviction {
		gv, err := d.evictionVersion(ctx)
		if err != nil {
			return err
		}
		if !gv.Empty() {
			return d.evictAll(ctx, pods, gv)
		}
	}
	return d.deleteAll(ctx, pods)
}

// evictionVersion is the group-version of the Eviction that pods/eviction
// takes (policy/v1 on current servers); empty when the server has none.
func (d *drainer) evictionVersion(ctx context.Context) (schema.GroupVersion, error) {
	disc, err := d.f.Discovery()
	if err != nil {
		return schema.GroupVersion{}, err
	}
	list, err := disc.ServerResourcesForGroupVersion(ctx, "v1")
	if err != nil {
		return schema.GroupVersion{}, err
	}
	for _, r := range list.APIResources {
		if r.Name == "pods/eviction" && r.Kind == "Eviction" && r.Group != "" && r.Version != "" {
			return schema.GroupVersion{Group: r.Group, Version: r.Version}, nil
		}
	}
	return schema.GroupVersion{}, nil
}

// withTimeout bounds ctx by --timeout (none when 0).
func (d *drainer) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.timeout == 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d.timeout)
}

// deleteOptions are --grace-period and the server dry run.
func (d *drainer) deleteOptions() metav1.DeleteOptions {
	var opts metav1.DeleteOptions
	if d.gracePeriod >= 0 {
		g := int64(d.gracePeriod)
		opts.GracePeriodSeconds = &g
	}
	if d.dry == cli.DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return opts
}

// evictAll evicts the pods at once, each then waited for, within
// --timeout; the failures are returned together, in the pods' order.
func (d *drainer) evictAll(ctx context.Context, pods []*unstructured.Unstructured, gv schema.GroupVersion) error {
	deadline, cancel := d.withTimeout(ctx)
	defer cancel()
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		wg.Go(func() { errs[i] = d.evictOne(ctx, deadline, pod, gv) })
	}
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}

// evictOne evicts pod, trying again while a PodDisruptionBudget refuses
// (429) or its namespace is being deleted, until deadline; then waits for
// it to be gone. Requests use ctx, so one under way is not cut at the
// deadline.
func (d *drainer) evictOne(ctx, deadline context.Context, pod *unstructured.Unstructured, gv schema.GroupVersion) error {
	ns, name := pod.GetNamespace(), pod.GetName()
	active := pod
evicting:
	for {
		if d.dry == cli.DryRunServer {
			fmt.Fprintf(d.out, "evicting pod %s/%s (server dry run)\n", ns, name)
		} else {
			d.progress(active, "eviction started")
			fmt.Fprintf(d.out, "evicting pod %s/%s\n", ns, name)
		}
		if deadline.Err() != nil {
			return &timeoutError{fmt.Sprintf("error when evicting pods/%q -n %q: global timeout reached: %v", name, ns, d.timeout)}
		}
		err := d.evict(ctx, active, gv)
		terminating := apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, namespaceTerminating)
		switch {
		case err == nil:
			break evicting
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsTooManyRequests(err):
			fmt.Fprintf(d.errOut, "error when evicting pods/%q -n %q (will retry after %v): %v\n", name, ns, d.retryDelay, err)
		case terminating && active.GetDeletionTimestamp() != nil:
			// Never to be evicted, but on its way out: wait for it.
			break evicting
		case terminating:
			fmt.Fprintf(d.errOut, "error when evicting pod %q from terminating namespace %q (will retry after %v): %v\n", name, ns, d.retryDelay, err)
		default:
			return fmt.Errorf("error when evicting pods/%q -n %q: %w", name, ns, err)
		}
		select {
		case <-time.After(d.retryDelay):
		case <-deadline.Done():
		}
		if fresh, err := d.client.Resource(podsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			active = fresh
		}
	}
	if d.dry == cli.DryRunServer {
		return nil
	}
	if err := d.waitGone(ctx, deadline, []*unstructured.Unstructured{active}, true); err != nil {
		return fmt.Errorf("error when waiting for pod %q in namespace %q to terminate: %w", name, ns, err)
	}
	return nil
}

// evict posts pod's Eviction of version gv.
func (d *drainer) evict(ctx context.Context, pod *unstructured.Unstructured, gv schema.GroupVersion) error {
	opts := map[string]any{}
	if o := d.deleteOptions(); o.GracePeriodSeconds != nil {
		opts["gracePeriodSeconds"] = *o.GracePeriodSeconds
	}
	if d.dry == cli.DryRunServer {
		opts["dryRun"] = []any{metav1.DryRunAll}
	}
	ev := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":    gv.String(),
		"kind":          "Eviction",
		"metadata":      map[string]any{"name": pod.GetName(), "namespace": pod.GetNamespace()},
		"deleteOptions": opts,
	}}
	_, err := d.client.Resource(podsGVR).Namespace(pod.GetNamespace()).Create(ctx, ev, metav1.CreateOptions{}, "eviction")
	return err
}

// deleteAll deletes the pods one by one, then waits for them all within
// --timeout.
func (d *drainer) deleteAll(ctx context.Context, pods []*unstructured.Unstructured) error {
	for _, p := range pods {
		err := d.client.Resource(podsGVR).Namespace(p.GetNamespace()).Delete(ctx, p.GetName(), d.deleteOptions())
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if d.dry != cli.DryRunServer {
			d.progress(p, "deletion started")
		}
	}
	if d.dry == cli.DryRunServer {
		return nil
	}
	deadline, cancel := d.withTimeout(ctx)
	defer cancel()
	return d.waitGone(ctx, deadline, pods, false)
}

// waitGone polls the pods every interval until each is gone (or replaced
// by a pod of the same name), printing "pod/NAME evicted" (or "deleted")
// for each, or is deleted for longer than --skip-wait-for-delete-timeout;
// deadline's error when it ends first.
func (d *drainer) waitGone(ctx, deadline context.Context, pods []*unstructured.Unstructured, evicted bool) error {
	done, failed := "deleted", "deletion failed"
	if evicted {
		done, failed = "evicted", "eviction failed"
	}
	for {
		var left []*unstructured.Unstructured
		for _, p := range pods {
			live, err := d.client.Resource(podsGVR).Namespace(p.GetNamespace()).Get(ctx, p.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err) || (err == nil && live.GetUID() != p.GetUID()):
				if perr := d.printer.Print(podKind, p.GetName(), done, nil); perr != nil {
					return perr
				}
			case err != nil:
				_ = d.printer.Print(podKind, p.GetName(), failed, nil)
				return err
			case deletedLongAgo(live, d.skipWaitSeconds, time.Now()):
				fmt.Fprintf(d.out, "pod %q has DeletionTimestamp older than %v seconds, skipping\n", p.GetName(), d.skipWaitSeconds)
			default:
				left = append(left, p)
			}
		}
		if pods = left; len(pods) == 0 {
			return nil
		}
		select {
		case <-deadline.Done():
			return deadline.Err()
		case <-time.After(d.interval):
		}
	}
}

// progress prints "pod/NAME what" at -v 2 and above, as kubectl does when
// an eviction or deletion starts.
func (d *drainer) progress(pod *unstructured.Unstructured, what string) {
	if d.f.Flags.Verbosity >= 2 {
		_ = d.printer.Print(podKind, pod.GetName(), what, nil)
	}
}

// timeoutError is an eviction given up at --timeout; --exit-codes counts
// it a timeout.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }

// Unwrap makes the error a context.DeadlineExceeded.
func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }
