package cluster

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
)

// The resources top measures.
const (
	resourceCPU    = "cpu"
	resourceMemory = "memory"
	resourceSwap   = "swap"
)

// unknownCell is what a table cell holds for a figure top does not have.
const unknownCell = "<unknown>"

// resourceList is a set of quantities by resource name (a node's
// allocatable resources, or what a container uses).
type resourceList map[string]resource.Quantity

// quantity is the list's quantity of name, zero when it has none.
func (l resourceList) quantity(name string) resource.Quantity { return l[name] }

// resourceListAt reads the resource list at fields of obj (nil when there
// is none).
func resourceListAt(obj map[string]any, fields ...string) (resourceList, error) {
	m, ok, _ := unstructured.NestedMap(obj, fields...)
	if !ok || m == nil {
		return nil, nil
	}
	l := make(resourceList, len(m))
	for name, v := range m {
		s := fmt.Sprint(v)
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, s, err)
		}
		l[name] = q
	}
	return l, nil
}

// nodeMetrics is one NodeMetrics object: a node's usage.
type nodeMetrics struct {
	name  string
	usage resourceList
}

// containerMetrics is one container's usage in a PodMetrics object.
type containerMetrics struct {
	name  string
	usage resourceList
}

// podMetrics is one PodMetrics object: its containers' usage.
type podMetrics struct {
	namespace, name string
	containers      []containerMetrics
}

// total is the sum of the containers' usage of each resource in names
// (zero for one they do not use).
func (m *podMetrics) total(names []string) resourceList {
	sum := make(resourceList, len(names))
	for _, name := range names {
		sum[name] = resource.MustParse("0")
	}
	for _, c := range m.containers {
		for _, name := range names {
			q := sum[name]
			q.Add(c.usage.quantity(name))
			sum[name] = q
		}
	}
	return sum
}

// The sorters order as kubectl's top does, with sort.Sort (not stable):
// by name, or with --sort-by the largest CPU (in millicores) or memory (in
// bytes) first. Given the same input order they leave ties in the same
// order as kubectl.

type nodeSorter struct {
	metrics []nodeMetrics
	by      string
}

func (s nodeSorter) Len() int      { return len(s.metrics) }
func (s nodeSorter) Swap(i, j int) { s.metrics[i], s.metrics[j] = s.metrics[j], s.metrics[i] }
func (s nodeSorter) Less(i, j int) bool {
	return lessUsage(s.by, s.metrics[i].usage, s.metrics[j].usage, s.metrics[i].name < s.metrics[j].name)
}

type podSorter struct {
	metrics       []podMetrics
	totals        []resourceList // each pod's total, with --sort-by
	by            string
	withNamespace bool
}

func (s podSorter) Len() int { return len(s.metrics) }
func (s podSorter) Swap(i, j int) {
	s.metrics[i], s.metrics[j] = s.metrics[j], s.metrics[i]
	s.totals[i], s.totals[j] = s.totals[j], s.totals[i]
}
func (s podSorter) Less(i, j int) bool {
	a, b := &s.metrics[i], &s.metrics[j]
	byName := a.name < b.name
	if s.withNamespace && a.namespace != b.namespace {
		byName = a.namespace < b.namespace
	}
	return lessUsage(s.by, s.totals[i], s.totals[j], byName)
}

type containerSorter struct {
	metrics []containerMetrics
	by      string
}

func (s containerSorter) Len() int      { return len(s.metrics) }
func (s containerSorter) Swap(i, j int) { s.metrics[i], s.metrics[j] = s.metrics[j], s.metrics[i] }
func (s containerSorter) Less(i, j int) bool {
	return lessUsage(s.by, s.metrics[i].usage, s.metrics[j].usage, s.metrics[i].name < s.metrics[j].name)
}

// lessUsage orders a before b by --sort-by (the larger CPU or memory
// first), or else as byName says.
func lessUsage(by string, a, b resourceList, byName bool) bool {
	switch by {
	case resourceCPU:
		x, y := a.quantity(resourceCPU), b.quantity(resourceCPU)
		return x.MilliValue() > y.MilliValue()
	case resourceMemory:
		x, y := a.quantity(resourceMemory), b.quantity(resourceMemory)
		return x.Value() > y.Value()
	}
	return byName
}

// topPrinter prints top's tables as kubectl does: cells each followed by
// a tab (the last one too), laid out by a table (kubectl's tab writer),
// CPU in millicores ("250m"), memory and swap in whole mebibytes
// ("128Mi"), and a node's share of its allocatable (or capacity) as a
// truncated integer percentage.
type topPrinter struct {
	out         io.Writer
	measured    []string
	nodeColumns []string
	podColumns  []string
	// missing are the resources a node does not report (its swap), by
	// node name: their cells read <unknown>.
	missing map[string][]string
}

func newTopPrinter(out io.Writer, showSwap bool) *topPrinter {
	p := &topPrinter{
		out:         out,
		measured:    []string{resourceCPU, resourceMemory},
		nodeColumns: []string{"NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"},
		podColumns:  []string{"NAME", "CPU(cores)", "MEMORY(bytes)"},
		missing:     map[string][]string{},
	}
	if showSwap {
		p.measured = append(p.measured, resourceSwap)
		p.nodeColumns = append(p.nodeColumns, "SWAP(bytes)", "SWAP(%)")
		p.podColumns = append(p.podColumns, "SWAP(bytes)")
	}
	return p
}

// registerMissing records that node does not report res.
func (p *topPrinter) registerMissing(node, res string) {
	if !slices.Contains(p.missing[node], res) {
		p.missing[node] = append(p.missing[node], res)
	}
}

// printNodes prints the nodes' usage, then a line of <unknown> for each
// node (of order, the nodes listed) that has no metrics. A node's
// percentages need its entry in available; a node with metrics but no
// entry gets none. Nothing is printed when there are no metrics.
func (p *topPrinter) printNodes(metrics []nodeMetrics, available map[string]resourceList, order []string, noHeaders bool, sortBy string) error {
	if len(metrics) == 0 {
		return nil
	}
	w := printers.NewTabTable(p.out)
	sort.Sort(nodeSorter{metrics: metrics, by: sortBy})
	if !noHeaders {
		cells(w, p.nodeColumns...)
		fmt.Fprint(w, "\n")
	}
	seen := map[string]bool{}
	for _, m := range metrics {
		p.line(w, m.name, m.usage, available[m.name])
		seen[m.name] = true
	}
	// kubectl prints these in its map's (random) order; kdyn in the
	// nodes' list order.
	for _, name := range order {
		if seen[name] {
			continue
		}
		cells(w, name)
		for range p.measured {
			cells(w, unknownCell, unknownCell)
		}
		fmt.Fprint(w, "\n")
	}
	return w.Flush()
}

// printPods prints the pods' usage (each container's with containers),
// with their namespace when withNamespace, and with sum a total line
// under a rule. Nothing is printed when there are no metrics.
func (p *topPrinter) printPods(metrics []podMetrics, containers, withNamespace, noHeaders bool, sortBy string, sum bool) error {
	if len(metrics) == 0 {
		return nil
	}
	w := printers.NewTabTable(p.out)
	// The sum's line is placed by the header's width: kubectl counts the
	// NAMESPACE and POD columns only when it prints the header.
	width := len(p.podColumns)
	if !noHeaders {
		if withNamespace {
			cells(w, "NAMESPACE")
			width++
		}
		if containers {
			cells(w, "POD")
			width++
		}
		cells(w, p.podColumns...)
		fmt.Fprint(w, "\n")
	}
	totals := make([]resourceList, len(metrics))
	if sortBy != "" {
		for i := range metrics {
			totals[i] = metrics[i].total(p.measured)
		}
	}
	sort.Sort(podSorter{metrics: metrics, totals: totals, by: sortBy, withNamespace: withNamespace})
	for i := range metrics {
		m := &metrics[i]
		if !containers {
			if withNamespace {
				cells(w, m.namespace)
			}
			p.line(w, m.name, m.total(p.measured), resourceList{})
			continue
		}
		sort.Sort(containerSorter{metrics: m.containers, by: sortBy})
		for _, c := range m.containers {
			if withNamespace {
				cells(w, m.namespace)
			}
			cells(w, m.name)
			p.line(w, c.name, c.usage, resourceList{})
		}
	}
	if sum {
		total := make(resourceList, len(p.measured))
		for i := range metrics {
			for _, c := range metrics[i].containers {
				for _, res := range p.measured {
					q := total[res]
					q.Add(c.usage.quantity(res))
					total[res] = q
				}
			}
		}
		for i := 0; i < width-2; i++ {
			cells(w, "")
		}
		cells(w, "________", "________")
		fmt.Fprint(w, "\n")
		for i := 0; i < width-3; i++ {
			cells(w, "")
		}
		p.line(w, "", total, resourceList{})
	}
	return w.Flush()
}

// line prints one row: name, then for each measured resource the usage
// and, when available has the resource, the share of it.
func (p *topPrinter) line(w io.Writer, name string, usage, available resourceList) {
	cells(w, name)
	for _, res := range p.measured {
		if slices.Contains(p.missing[name], res) {
			cells(w, unknownCell, unknownCell)
			continue
		}
		q := usage.quantity(res)
		cells(w, formatUsage(res, q))
		if avail, ok := available[res]; ok {
			share := 0.0
			if !avail.IsZero() {
				share = float64(q.MilliValue()) / float64(avail.MilliValue()) * 100
			}
			cells(w, fmt.Sprintf("%d%%", int64(share)))
		}
	}
	fmt.Fprint(w, "\n")
}

// formatUsage writes a usage as top prints it: CPU in millicores, memory
// and swap in whole mebibytes.
func formatUsage(res string, q resource.Quantity) string {
	switch res {
	case resourceCPU:
		return fmt.Sprintf("%dm", q.MilliValue())
	case resourceMemory, resourceSwap:
		return fmt.Sprintf("%dMi", q.Value()/(1024*1024))
	}
	return fmt.Sprintf("%d", q.Value())
}

// cells writes each value followed by a tab.
func cells(w io.Writer, values ...string) {
	for _, v := range values {
		fmt.Fprintf(w, "%s\t", v)
	}
}
