package describe

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var leasesGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// getter reads one object.
type getter func(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (gjson.Result, error)

// describeNode is kubectl's Node description: roles, taints, its kubelet's
// Lease, conditions, addresses, capacity, system info, and the pods bound
// to it that have not terminated (listed page by page) with what they
// request of it.
func describeNode(ctx context.Context, w *writer, list lister, get getter, obj *unstructured.Unstructured, node gjson.Result) error {
	spec, status := node.Get("spec"), node.Get("status")
	w.write(0, "Name:\t%s\n", obj.GetName())
	if roles := nodeRoles(obj.GetLabels()); len(roles) > 0 {
		w.write(0, "Roles:\t%s\n", strings.Join(roles, ","))
	} else {
		w.write(0, "Roles:\t%s\n", "<none>")
	}
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "CreationTimestamp:\t%s\n", obj.GetCreationTimestamp().Format(time.RFC1123Z))
	nodeTaints(w, spec.Get("taints").Array())
	w.write(0, "Unschedulable:\t%v\n", spec.Get("unschedulable").Bool())
	if lease, err := get(ctx, leasesGVR, "kube-node-lease", obj.GetName()); err != nil {
		w.write(0, "Lease:\tFailed to get lease: %s\n", err)
	} else {
		w.write(0, "Lease:\n")
		w.write(1, "HolderIdentity:\t%s\n", orUnset(lease.Get("spec.holderIdentity")))
		w.write(1, "AcquireTime:\t%s\n", timeOrUnset(lease.Get("spec.acquireTime")))
		w.write(1, "RenewTime:\t%s\n", timeOrUnset(lease.Get("spec.renewTime")))
	}
	if conds := status.Get("conditions").Array(); len(conds) > 0 {
		w.write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
		w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.write(1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Get("type").String(), c.Get("status").String(),
				rfc1123z(c.Get("lastHeartbeatTime").String()), rfc1123z(c.Get("lastTransitionTime").String()),
				c.Get("reason").String(), c.Get("message").String())
		}
	}
	w.write(0, "Addresses:\n")
	for _, a := range status.Get("addresses").Array() {
		w.write(1, "%s:\t%s\n", a.Get("type").String(), a.Get("address").String())
	}
	for _, sec := range []struct{ title, field string }{{"Capacity", "capacity"}, {"Allocatable", "allocatable"}} {
		rl := stringMap(status.Get(sec.field))
		if len(rl) == 0 {
			continue
		}
		w.write(0, "%s:\n", sec.title)
		for _, r := range sortedKeys(rl) {
			w.write(0, "  %s:\t%s\n", r, quantity(rl[r]))
		}
	}
	info := status.Get("nodeInfo")
	w.write(0, "System Info:\n")
	for _, f := range []struct{ title, field string }{
		{"Machine ID", "machineID"}, {"System UUID", "systemUUID"}, {"Boot ID", "bootID"},
		{"Kernel Version", "kernelVersion"}, {"OS Image", "osImage"}, {"Operating System", "operatingSystem"},
		{"Architecture", "architecture"}, {"Container Runtime Version", "containerRuntimeVersion"},
		{"Kubelet Version", "kubeletVersion"},
	} {
		w.write(0, "  %s:\t%s\n", f.title, info.Get(f.field).String())
	}
	if s := spec.Get("podCIDR").String(); s != "" {
		w.write(0, "PodCIDR:\t%s\n", s)
	}
	if cidrs := spec.Get("podCIDRs").Array(); len(cidrs) > 0 {
		var ss []string
		for _, c := range cidrs {
			ss = append(ss, c.String())
		}
		w.write(0, "PodCIDRs:\t%s\n", strings.Join(ss, ","))
	}
	if s := spec.Get("providerID").String(); s != "" {
		w.write(0, "ProviderID:\t%s\n", s)
	}
	pods, err := list(ctx, podsGVR, "", "", "spec.nodeName="+obj.GetName()+",status.phase!=Succeeded,status.phase!=Failed")
	switch {
	case apierrors.IsForbidden(err):
		w.write(0, "Pods:\tnot authorized\n")
	case err != nil:
		return err
	default:
		nodePods(w, pods, status)
	}
	return nil
}

// nodeRoles are the roles the node's labels give it, sorted:
// node-role.kubernetes.io/ROLE, and kubernetes.io/role.
func nodeRoles(labels map[string]string) []string {
	var roles []string
	for k, v := range labels {
		role := ""
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			role = strings.TrimPrefix(k, "node-role.kubernetes.io/")
		case k == "kubernetes.io/role":
			role = v
		}
		if role != "" && !slices.Contains(roles, role) {
			roles = append(roles, role)
		}
	}
	slices.Sort(roles)
	return roles
}

// nodeTaints writes the Taints line, sorted by effect and key, each as
// KEY[=VALUE]:EFFECT.
func nodeTaints(w *writer, taints []gjson.Result) {
	w.write(0, "Taints:\t")
	if len(taints) == 0 {
		w.line("<none>")
		return
	}
	slices.SortFunc(taints, func(a, b gjson.Result) int {
		return strings.Compare(a.Get("effect").String()+","+a.Get("key").String(), b.Get("effect").String()+","+b.Get("key").String())
	})
	for i, t := range taints {
		if i > 0 {
			w.write(0, "\t")
		}
		s := t.Get("key").String()
		if v := t.Get("value").String(); v != "" {
			s += "=" + v
		}
		w.write(0, "%s:%s\n", s, t.Get("effect").String())
	}
}

func orUnset(r gjson.Result) string {
	if !r.Exists() || r.Type == gjson.Null {
		return "<unset>"
	}
	return r.String()
}

func timeOrUnset(r gjson.Result) string {
	if !r.Exists() || r.Type == gjson.Null {
		return "<unset>"
	}
	return rfc1123z(r.String())
}

// nodePods writes the non-terminated pods on a node and what they
// request and limit of its allocatable resources (its capacity, when it
// reports none allocatable), as kubectl does.
func nodePods(w *writer, pods []gjson.Result, status gjson.Result) {
	allocatable := quantities(status.Get("allocatable"))
	if len(allocatable) == 0 {
		allocatable = quantities(status.Get("capacity"))
	}
	pct := func(q resource.Quantity, name string, milli bool) int64 {
		total := allocatable[name]
		if milli {
			return int64(float64(q.MilliValue()) / float64(total.MilliValue()) * 100)
		}
		return int64(float64(q.Value()) / float64(total.Value()) * 100)
	}
	w.write(0, "Non-terminated Pods:\t(%d in total)\n", len(pods))
	w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
	w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
	totalReqs, totalLimits := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for _, p := range pods {
		reqs, limits := podResources(p, "requests"), podResources(p, "limits")
		addTo(totalReqs, reqs)
		addTo(totalLimits, limits)
		cpuReq, cpuLim, memReq, memLim := reqs["cpu"], limits["cpu"], reqs["memory"], limits["memory"]
		w.write(1, "%s\t%s\t\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s (%d%%)\t%s\n",
			p.Get("metadata.namespace").String(), p.Get("metadata.name").String(),
			cpuReq.String(), pct(cpuReq, "cpu", true), cpuLim.String(), pct(cpuLim, "cpu", true),
			memReq.String(), pct(memReq, "memory", false), memLim.String(), pct(memLim, "memory", false),
			since(p.Get("metadata.creationTimestamp").Time()))
	}
	w.write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
	w.write(1, "Resource\tRequests\tLimits\n")
	w.write(1, "--------\t--------\t------\n")
	// The totals' shares: 0 where the node has none of a resource.
	share := func(q resource.Quantity, name string, milli bool) int64 {
		total := allocatable[name]
		if (milli && total.MilliValue() == 0) || (!milli && total.Value() == 0) {
			return 0
		}
		return pct(q, name, milli)
	}
	for _, r := range []struct {
		name  string
		milli bool
	}{{"cpu", true}, {"memory", false}, {"ephemeral-storage", false}} {
		req, lim := totalReqs[r.name], totalLimits[r.name]
		w.write(1, "%s\t%s (%d%%)\t%s (%d%%)\n", r.name, req.String(), share(req, r.name, r.milli), lim.String(), share(lim, r.name, r.milli))
	}
	var huge, ext []string
	for name := range allocatable {
		switch {
		case strings.HasPrefix(name, "hugepages-"):
			huge = append(huge, name)
		case !standardResource(name) && name != "pods":
			ext = append(ext, name)
		}
	}
	slices.Sort(huge)
	slices.Sort(ext)
	for _, name := range huge {
		req, lim := totalReqs[name], totalLimits[name]
		w.write(1, "%s\t%s (%d%%)\t%s (%d%%)\n", name, req.String(), share(req, name, false), lim.String(), share(lim, name, false))
	}
	for _, name := range ext {
		req, lim := totalReqs[name], totalLimits[name]
		w.write(1, "%s\t%s\t%s\n", name, req.String(), lim.String())
	}
}

// standardResource is kubectl's list of standard container resources
// (what a node's extended resources are not).
func standardResource(name string) bool {
	switch name {
	case "cpu", "memory", "ephemeral-storage", "storage",
		"requests.cpu", "requests.memory", "requests.ephemeral-storage", "requests.storage",
		"limits.cpu", "limits.memory", "limits.ephemeral-storage":
		return true
	}
	return strings.HasPrefix(name, "hugepages-")
}

// quantities parses a resource list (entries that do not parse are left
// out).
func quantities(r gjson.Result) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	for k, v := range stringMap(r) {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[k] = q
		}
	}
	return out
}

func addTo(total, add map[string]resource.Quantity) {
	for k, v := range add {
		t := total[k]
		t.Add(v)
		total[k] = t
	}
}

// podResources is what a pod requests (or limits, for field "limits") as
// the scheduler counts it: its containers' sum, or, when more, what an
// init container needs beside the sidecars started before it; the
// pod-level resources where set (cpu and memory); plus the pod overhead.
func podResources(pod gjson.Result, field string) map[string]resource.Quantity {
	spec := pod.Get("spec")
	sum := map[string]resource.Quantity{}
	for _, c := range spec.Get("containers").Array() {
		addTo(sum, quantities(c.Get("resources."+field)))
	}
	sidecars, initMax := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for _, c := range spec.Get("initContainers").Array() {
		own := quantities(c.Get("resources." + field))
		var need map[string]resource.Quantity
		if c.Get("restartPolicy").String() == "Always" {
			addTo(sum, own)
			addTo(sidecars, own)
			need = sidecars
		} else {
			need = map[string]resource.Quantity{}
			addTo(need, own)
			addTo(need, sidecars)
		}
		maxInto(initMax, need)
	}
	maxInto(sum, initMax)
	for _, name := range []string{"cpu", "memory"} {
		if q := spec.Get("resources." + field + "." + name); q.Exists() {
			if v, err := resource.ParseQuantity(q.String()); err == nil {
				sum[name] = v
			}
		}
	}
	addTo(sum, quantities(spec.Get("overhead")))
	return sum
}

// maxInto raises each of dst's quantities to src's where src's is larger.
func maxInto(dst, src map[string]resource.Quantity) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v.Cmp(cur) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
