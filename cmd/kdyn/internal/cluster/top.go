package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// metricsGroup is the API group of the resource metrics.
const metricsGroup = "metrics.k8s.io"

// metricsVersions are the versions of metricsGroup top reads, as kubectl
// does: the first of the group's versions (in discovery's order) that is
// one of these.
var metricsVersions = []string{"v1", "v1beta1"}

// metricsCreationDelay is how long a new pod may have no metrics before
// top pod says they are missing rather than not there yet.
const metricsCreationDelay = 2 * time.Minute

var (
	nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// errMetricsNotAvailable is kubectl's error when the server does not serve
// the metrics API (no metrics-server, or its APIService is down). With
// --exit-codes it exits as a resource type the server lacks does.
//
//lint:ignore ST1005 kubectl's words, capital included
var errMetricsNotAvailable = &cli.ExitError{Code: cli.ExitNotFound, Err: errors.New("Metrics API not available")}

// NewTopCommand returns "kdyn top" with its node and pod subcommands.
func NewTopCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display resource (CPU/memory) usage",
		Long: `Display resource (CPU/memory) usage.

The numbers come from the resource metrics API (metrics.k8s.io), which the
Metrics Server serves after gathering them from each node's kubelet: it
must be installed and running for top to work. They are the figures the
Horizontal and Vertical Pod Autoscalers act on, smoothed for that purpose,
so they need not agree with what tools such as 'top' show inside a node.

Use top for a quick look at which nodes or pods are busiest and how
resources are spent now, or to see what an autoscaler sees; for history,
dashboards or alerts, use a monitoring system.`,
		SuggestFor: []string{"stats"},
	}
	cmd.AddCommand(newTopNodeCommand(f), newTopPodCommand(f))
	return cli.GroupCommand(cmd)
}

type topNodeOptions struct {
	selector     string
	sortBy       string
	noHeaders    bool
	protobuf     bool
	showCapacity bool
	showSwap     bool
}

func newTopNodeCommand(f *cli.Factory) *cobra.Command {
	o := &topNodeOptions{protobuf: true}
	cmd := &cobra.Command{
		Use:                   "node [NAME | -l label]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"nodes", "no"},
		Short:                 "Display resource (CPU/memory) usage of nodes",
		Long: `Display resource (CPU/memory) usage of nodes.

Each node's CPU and memory in use, and what share they are of the node's
allocatable resources (of its capacity with --show-capacity).`,
		Example: `  # Show the usage of every node
  kdyn top node

  # Show the usage of one node
  kdyn top node NODE_NAME

  # The nodes of a pool, busiest CPU first
  kdyn top node -l pool=workers --sort-by=cpu`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopNode(cmd.Context(), f, o, cmd, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.selector, "selector", "l", "", "Label selector of the nodes to show (e.g. -l pool=workers,zone!=a).")
	fl.StringVar(&o.sortBy, "sort-by", "", "Sort the nodes by 'cpu' or 'memory', the largest first (by name otherwise).")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "Print no header line.")
	fl.BoolVar(&o.protobuf, "use-protocol-buffers", true, "Accepted for kubectl compatibility; kdyn reads the metrics API as JSON.")
	fl.BoolVar(&o.showCapacity, "show-capacity", false, "Compute the percentages against the nodes' capacity instead of their allocatable resources.")
	fl.BoolVar(&o.showSwap, "show-swap", false, "Add the nodes' swap usage.")
	return cmd
}

type topPodOptions struct {
	selector      string
	fieldSelector string
	sortBy        string
	containers    bool
	allNamespaces bool
	noHeaders     bool
	protobuf      bool
	sum           bool
	showSwap      bool
}

func newTopPodCommand(f *cli.Factory) *cobra.Command {
	o := &topPodOptions{protobuf: true}
	cmd := &cobra.Command{
		Use:                   "pod [NAME | -l label]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"pods", "po"},
		Short:                 "Display resource (CPU/memory) usage of pods",
		Long: `Display resource (CPU/memory) usage of pods.

Each pod's CPU and memory in use (the sum of its containers', or each
container's with --containers). The metrics pipeline needs a little time
after a pod starts: a new pod may have no metrics yet for a few minutes.`,
		Example: `  # Show the usage of the pods in the current namespace
  kdyn top pod

  # Show the usage of the pods in another namespace
  kdyn top pod --namespace=NAMESPACE

  # Show one pod's containers
  kdyn top pod POD_NAME --containers

  # The pods labelled name=myLabel, with their total
  kdyn top pod -l name=myLabel --sum`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopPod(cmd.Context(), f, o, cmd, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.selector, "selector", "l", "", "Label selector of the pods to show (e.g. -l app=web,tier!=db).")
	fl.StringVar(&o.fieldSelector, "field-selector", "", "Field selector of the pods to show (e.g. --field-selector spec.nodeName=n1); '=', '==' and '!=' are supported.")
	fl.StringVar(&o.sortBy, "sort-by", "", "Sort the pods by 'cpu' or 'memory', the largest first (by name otherwise).")
	fl.BoolVar(&o.containers, "containers", false, "Show each container of the pods.")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Show the pods of every namespace (the current one, and -n, are then ignored).")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "Print no header line.")
	fl.BoolVar(&o.protobuf, "use-protocol-buffers", true, "Accepted for kubectl compatibility; kdyn reads the metrics API as JSON.")
	fl.BoolVar(&o.sum, "sum", false, "Add a line with the total of the pods' usage.")
	fl.BoolVar(&o.showSwap, "show-swap", false, "Add the pods' swap usage.")
	return cmd
}

// usageError is kubectl's refusal of more than one NAME.
func usageError(cmd *cobra.Command) error {
	return cli.Usagef("%s\nSee '%s -h' for help and examples", cmd.Use, cmd.CommandPath())
}

func checkSortBy(sortBy string) error {
	if sortBy != "" && sortBy != "cpu" && sortBy != "memory" {
		return cli.Usagef("--sort-by accepts only cpu or memory")
	}
	return nil
}

func runTopNode(ctx context.Context, f *cli.Factory, o *topNodeOptions, cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usageError(cmd)
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	if err := checkSortBy(o.sortBy); err != nil {
		return err
	}
	if name != "" && o.selector != "" {
		return cli.Usagef("only one of NAME or --selector can be provided")
	}
	selector, err := labels.Parse(o.selector)
	if err != nil {
		return err
	}
	version, err := metricsVersion(ctx, f)
	if err != nil {
		return err
	}
	objs, err := getOrList(ctx, client.Resource(metricsGVR(version, "nodes")), name, selector.String(), "")
	if err != nil {
		return err
	}
	metrics := make([]nodeMetrics, 0, len(objs))
	for _, obj := range objs {
		u, err := resourceListAt(obj.Object, "usage")
		if err != nil {
			return err
		}
		metrics = append(metrics, nodeMetrics{name: obj.GetName(), usage: u})
	}
	if len(metrics) == 0 {
		return errors.New("metrics not available yet")
	}
	nodes, err := getOrList(ctx, client.Resource(nodesGVR), name, selector.String(), "")
	if err != nil {
		return err
	}
	p := newTopPrinter(f.Streams.Out, o.showSwap)
	available := make(map[string]resourceList, len(nodes))
	order := make([]string, 0, len(nodes))
	field := "allocatable"
	if o.showCapacity {
		field = "capacity"
	}
	for _, n := range nodes {
		l, err := resourceListAt(n.Object, "status", field)
		if err != nil {
			return err
		}
		if swap, ok, _ := kunstructured.GetInt64(n.Object, "status.nodeInfo.swap.capacity"); ok {
			if l == nil {
				l = resourceList{}
			}
			l["swap"] = *resource.NewQuantity(swap, resource.BinarySI)
		} else {
			p.registerMissing(n.GetName(), resourceSwap)
		}
		if _, dup := available[n.GetName()]; !dup {
			order = append(order, n.GetName())
		}
		available[n.GetName()] = l
	}
	return p.printNodes(metrics, available, order, o.noHeaders, o.sortBy)
}

func runTopPod(ctx context.Context, f *cli.Factory, o *topPodOptions, cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usageError(cmd)
	}
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	namespace, _, err := f.Namespace()
	if err != nil {
		return err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	if err := checkSortBy(o.sortBy); err != nil {
		return err
	}
	if name != "" && (o.selector != "" || o.fieldSelector != "") {
		return cli.Usagef("only one of NAME or selector can be provided")
	}
	labelSel, err := labels.Parse(o.selector)
	if err != nil {
		return err
	}
	fieldSel := fields.Everything()
	if o.fieldSelector != "" {
		if fieldSel, err = fields.ParseSelector(o.fieldSelector); err != nil {
			return err
		}
	}
	version, err := metricsVersion(ctx, f)
	if err != nil {
		return err
	}
	ns := namespace
	if o.allNamespaces {
		ns = metav1.NamespaceAll
	}
	objs, err := getOrList(ctx, client.Resource(metricsGVR(version, "pods")), name, labelSel.String(), ns)
	if err != nil {
		return err
	}
	metrics := make([]podMetrics, 0, len(objs))
	for _, obj := range objs {
		m, err := podMetricsOf(obj)
		if err != nil {
			return err
		}
		metrics = append(metrics, m)
	}
	if len(metrics) > 0 && o.fieldSelector != "" {
		if metrics, err = selectPods(ctx, client, ns, labelSel.String(), fieldSel.String(), metrics); err != nil {
			return err
		}
	}
	if len(metrics) == 0 {
		// Why there is nothing: pods too new to have metrics yet, or
		// old enough that they should.
		if err := checkEmptyMetrics(ctx, client, namespace, name, labelSel.String(), fieldSel.String()); err != nil {
			return err
		}
		if o.allNamespaces {
			fmt.Fprintln(f.Streams.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(f.Streams.ErrOut, "No resources found in %s namespace.\n", namespace)
		}
	}
	p := newTopPrinter(f.Streams.Out, o.showSwap)
	return p.printPods(metrics, o.containers, o.allNamespaces, o.noHeaders, o.sortBy, o.sum)
}

// metricsVersion is the version of the metrics API top reads, or
// errMetricsNotAvailable. A cached discovery that lacks the group is
// revalidated first, so that a metrics server installed since is found.
func metricsVersion(ctx context.Context, f *cli.Factory) (string, error) {
	dc, err := f.Discovery()
	if err != nil {
		return "", err
	}
	snap, err := dc.Snapshot(ctx)
	if err != nil {
		return "", err
	}
	if v := servedMetricsVersion(snap.APIGroupList()); v != "" {
		return v, nil
	}
	if snap, err = dc.Refresh(ctx); err != nil {
		return "", err
	}
	if v := servedMetricsVersion(snap.APIGroupList()); v != "" {
		return v, nil
	}
	return "", errMetricsNotAvailable
}

// servedMetricsVersion is the first version of the metrics group that
// groups lists and top reads ("" when there is none).
func servedMetricsVersion(groups *metav1.APIGroupList) string {
	for _, g := range groups.Groups {
		if g.Name != metricsGroup {
			continue
		}
		for _, v := range g.Versions {
			if slices.Contains(metricsVersions, v.Version) {
				return v.Version
			}
		}
	}
	return ""
}

func metricsGVR(version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: metricsGroup, Version: version, Resource: resource}
}

// getOrList gets the object name, or lists those selector selects, in
// namespace ns ("" for all, or for a cluster-scoped resource).
func getOrList(ctx context.Context, r dynamic.NamespaceableResourceInterface, name, selector, ns string) ([]unstructured.Unstructured, error) {
	ri := dynamic.ResourceInterface(r)
	if ns != "" {
		ri = r.Namespace(ns)
	}
	if name != "" {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return []unstructured.Unstructured{*obj}, nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// podMetricsOf reads a PodMetrics object.
func podMetricsOf(obj unstructured.Unstructured) (podMetrics, error) {
	m := podMetrics{namespace: obj.GetNamespace(), name: obj.GetName()}
	containers, _, _ := unstructured.NestedSlice(obj.Object, "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		u, err := resourceListAt(cm, "usage")
		if err != nil {
			return m, err
		}
		name, _ := cm["name"].(string)
		m.containers = append(m.containers, containerMetrics{name: name, usage: u})
	}
	return m, nil
}

// selectPods keeps the metrics of the pods that the label and field
// selectors select, as the server lists them (the metrics API does not
// take field selectors).
func selectPods(ctx context.Context, client dynamic.Interface, ns, labelSel, fieldSel string, metrics []podMetrics) ([]podMetrics, error) {
	list, err := client.Resource(podsGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel})
	if err != nil {
		return nil, err
	}
	selected := make(map[string]bool, len(list.Items))
	for _, p := range list.Items {
		selected[p.GetNamespace()+"/"+p.GetName()] = true
	}
	kept := make([]podMetrics, 0, len(metrics))
	for _, m := range metrics {
		if selected[m.namespace+"/"+m.name] {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// checkEmptyMetrics explains, as kubectl does, why no pod has metrics:
// nil when no pod matches (or every match is new), an error naming the
// first pod old enough to have metrics, or "metrics not available yet".
// Like kubectl, it looks in the current namespace even with -A.
func checkEmptyMetrics(ctx context.Context, client dynamic.Interface, ns, name, labelSel, fieldSel string) error {
	pods := client.Resource(podsGVR).Namespace(ns)
	var items []unstructured.Unstructured
	if name != "" {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		items = []unstructured.Unstructured{*pod}
	} else {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: labelSel, FieldSelector: fieldSel})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		items = list.Items
	}
	for _, pod := range items {
		age := time.Since(pod.GetCreationTimestamp().Time)
		if age > metricsCreationDelay {
			//lint:ignore ST1005 kubectl's words, capital included
			return fmt.Errorf("Metrics not available for pod %s/%s, age: %s", pod.GetNamespace(), pod.GetName(), age.String())
		}
	}
	return errors.New("metrics not available yet")
}
