package describe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	resourceQuotasGVR = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	limitRangesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
)

// podStatusLine writes the phases of the pods a controller owns (among
// those its selector matches), as kubectl's "Pods Status" line.
func podStatusLine(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, sel string) {
	running, waiting, succeeded, failed, err := podPhases(ctx, list, obj.GetNamespace(), sel, string(obj.GetUID()))
	if err != nil {
		w.write(0, "Pods Status:\terror in fetching pods: %s\n", err)
		return
	}
	w.write(0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
}

// describeDaemonSet is kubectl's DaemonSet description, with the phases of
// the pods it owns.
func describeDaemonSet(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, ds gjson.Result) {
	sel := selectorOrError(ds.Get("spec.selector"))
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.write(0, "Selector:\t%s\n", sel)
	w.write(0, "Node-Selector:\t%s\n", labels.FormatLabels(stringMap(ds.Get("spec.template.spec.nodeSelector"))))
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	st := ds.Get("status")
	w.write(0, "Desired Number of Nodes Scheduled: %d\n", st.Get("desiredNumberScheduled").Int())
	w.write(0, "Current Number of Nodes Scheduled: %d\n", st.Get("currentNumberScheduled").Int())
	w.write(0, "Number of Nodes Scheduled with Up-to-date Pods: %d\n", st.Get("updatedNumberScheduled").Int())
	w.write(0, "Number of Nodes Scheduled with Available Pods: %d\n", st.Get("numberAvailable").Int())
	w.write(0, "Number of Nodes Misscheduled: %d\n", st.Get("numberMisscheduled").Int())
	podStatusLine(ctx, w, list, obj, sel)
	podTemplate(w, ds.Get("spec.template"))
}

// describeStatefulSet is kubectl's StatefulSet description, with the
// phases of the pods it owns and its volume claim templates.
func describeStatefulSet(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, ss gjson.Result) {
	sel := selectorOrError(ss.Get("spec.selector"))
	spec := ss.Get("spec")
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.write(0, "CreationTimestamp:\t%s\n", obj.GetCreationTimestamp().Format(time.RFC1123Z))
	w.write(0, "Selector:\t%s\n", sel)
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	if s := spec.Get("serviceName").String(); s != "" {
		w.write(0, "Service Name:\t%s\n", s)
	}
	if s := spec.Get("podManagementPolicy").String(); s != "" {
		w.write(0, "Pod Management Policy:\t%s\n", s)
	}
	w.write(0, "Replicas:\t%d desired | %d total\n", spec.Get("replicas").Int(), ss.Get("status.replicas").Int())
	w.write(0, "Update Strategy:\t%s\n", spec.Get("updateStrategy.type").String())
	if ru := spec.Get("updateStrategy.rollingUpdate"); ru.Exists() && ru.Get("partition").Exists() {
		w.write(1, "Partition:\t%d\n", ru.Get("partition").Int())
		if mu := ru.Get("maxUnavailable"); mu.Exists() {
			w.write(1, "MaxUnavailable:\t%s\n", mu.String())
		}
	}
	if p := spec.Get("persistentVolumeClaimRetentionPolicy"); p.Exists() {
		w.write(0, "Persistent Volume Claim Retention Policy:\n")
		w.write(1, "WhenDeleted:\t%s\n", p.Get("whenDeleted").String())
		w.write(1, "WhenScaled:\t%s\n", p.Get("whenScaled").String())
	}
	podStatusLine(ctx, w, list, obj, sel)
	podTemplate(w, spec.Get("template"))
	claims := spec.Get("volumeClaimTemplates").Array()
	if len(claims) == 0 {
		w.write(0, "Volume Claims:\t<none>\n")
		return
	}
	w.write(0, "Volume Claims:\n")
	for _, c := range claims {
		w.write(1, "Name:\t%s\n", c.Get("metadata.name").String())
		w.write(1, "StorageClass:\t%s\n", claimClass(c))
		w.labels("  Labels", stringMap(c.Get("metadata.labels")))
		w.labels("  Annotations", stringMap(c.Get("metadata.annotations")))
		capacity := "<default>"
		if q := c.Get("spec.resources.requests.storage"); q.Exists() {
			capacity = quantity(q.String())
		}
		w.write(1, "Capacity:\t%s\n", capacity)
		var modes []string
		for _, m := range c.Get("spec.accessModes").Array() {
			modes = append(modes, m.String())
		}
		w.write(1, "Access Modes:\t%s\n", fmt.Sprint(modes))
	}
}

// claimClass is a claim's storage class: the field, else the beta
// annotation kubectl still reads.
func claimClass(c gjson.Result) string {
	if s := c.Get("spec.storageClassName"); s.Exists() {
		return s.String()
	}
	return c.Get(`metadata.annotations.volume\.beta\.kubernetes\.io/storage-class`).String()
}

// quantity is a resource quantity in its canonical form, as kubectl
// prints one (the text itself when it does not parse).
func quantity(s string) string {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return s
	}
	return q.String()
}

// describeNamespace is kubectl's Namespace description: its conditions,
// then its resource quotas and limit ranges (listed page by page; a
// server without them shows neither section).
func describeNamespace(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, ns gjson.Result) error {
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "Status:\t%s\n", ns.Get("status.phase").String())
	if conds := ns.Get("status.conditions").Array(); len(conds) > 0 {
		w.write(0, "Conditions:\n")
		w.write(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
		w.write(1, "----\t------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.write(1, "%v\t%v\t%s\t%v\t%v\n", c.Get("type").String(), c.Get("status").String(),
				rfc1123z(c.Get("lastTransitionTime").String()), c.Get("reason").String(), c.Get("message").String())
		}
	}
	// Each section after a blank line; a server that does not serve the
	// resource shows no section.
	for _, sec := range []struct {
		gvr   schema.GroupVersionResource
		write func(*writer, []gjson.Result)
	}{{resourceQuotasGVR, resourceQuotas}, {limitRangesGVR, limitRanges}} {
		items, err := list(ctx, sec.gvr, obj.GetName(), "", "")
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		w.write(0, "\n")
		sec.write(w, items)
	}
	return nil
}

// rfc1123z is a timestamp as kubectl prints a condition's time (the zero
// time for none).
func rfc1123z(s string) string {
	t, _ := time.Parse(time.RFC3339, s)
	return t.Format(time.RFC1123Z)
}

// quotaScopeHelp is kubectl's explanation of a quota scope.
var quotaScopeHelp = map[string]string{
	"Terminating":    "Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.",
	"NotTerminating": "Matches all pods that do not have an active deadline. These pods usually include long running pods whose container command is not expected to terminate.",
	"BestEffort":     "Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.",
	"NotBestEffort":  "Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.",
}

// resourceQuotas is kubectl's section of a namespace's quotas, by name:
// each with its scopes and its resources' use against their limits.
func resourceQuotas(w *writer, quotas []gjson.Result) {
	if len(quotas) == 0 {
		w.write(0, "No resource quota.\n")
		return
	}
	slices.SortFunc(quotas, func(a, b gjson.Result) int {
		return strings.Compare(a.Get("metadata.name").String(), b.Get("metadata.name").String())
	})
	w.write(0, "Resource Quotas\n")
	for _, q := range quotas {
		w.write(1, "Name:\t%s\n", q.Get("metadata.name").String())
		var scopes []string
		for _, s := range q.Get("spec.scopes").Array() {
			scopes = append(scopes, s.String())
		}
		if len(scopes) > 0 {
			slices.Sort(scopes)
			w.write(1, "Scopes:\t%s\n", strings.Join(scopes, ", "))
			for _, s := range scopes {
				if help := quotaScopeHelp[s]; help != "" {
					w.write(1, "* %s\n", help)
				}
			}
		}
		w.write(1, "Resource\tUsed\tHard\n")
		w.write(1, "--------\t---\t---\n")
		hard, used := stringMap(q.Get("status.hard")), stringMap(q.Get("status.used"))
		for _, r := range sortedKeys(hard) {
			u := "0"
			if v, ok := used[r]; ok {
				u = quantity(v)
			}
			w.write(1, "%s\t%s\t%s\n", r, u, quantity(hard[r]))
		}
	}
}

// limitRanges is kubectl's section of a namespace's limit ranges: a row
// per limit type and resource ("-" where a bound is not set). kubectl
// prints a limit's resources in map order; they are sorted here.
func limitRanges(w *writer, ranges []gjson.Result) {
	if len(ranges) == 0 {
		w.write(0, "No LimitRange resource.\n")
		return
	}
	w.write(0, "Resource Limits\n Type\tResource\tMin\tMax\tDefault Request\tDefault Limit\tMax Limit/Request Ratio\n")
	w.write(0, " ----\t--------\t---\t---\t---------------\t-------------\t-----------------------\n")
	for _, lr := range ranges {
		for _, item := range lr.Get("spec.limits").Array() {
			bounds := []map[string]string{
				stringMap(item.Get("min")), stringMap(item.Get("max")), stringMap(item.Get("defaultRequest")),
				stringMap(item.Get("default")), stringMap(item.Get("maxLimitRequestRatio")),
			}
			names := map[string]bool{}
			for _, b := range bounds {
				for k := range b {
					names[k] = true
				}
			}
			for _, r := range sortedKeys(names) {
				vals := make([]any, 0, len(bounds))
				for _, b := range bounds {
					v := "-"
					if q, ok := b[r]; ok {
						v = quantity(q)
					}
					vals = append(vals, v)
				}
				w.write(0, " %s\t%v\t%v\t%v\t%v\t%v\t%v\n", append([]any{item.Get("type").String(), r}, vals...)...)
			}
		}
	}
}

// describePVC is kubectl's PersistentVolumeClaim description, with the
// pods that use the claim (listed page by page).
func describePVC(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, pvc gjson.Result) {
	spec, status := pvc.Get("spec"), pvc.Get("status")
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.write(0, "StorageClass:\t%s\n", claimClass(pvc))
	if d := obj.GetDeletionTimestamp(); d != nil {
		w.write(0, "Status:\tTerminating (lasts %s)\n", since(d.Time))
	} else {
		w.write(0, "Status:\t%v\n", status.Get("phase").String())
	}
	volume := spec.Get("volumeName").String()
	w.write(0, "Volume:\t%s\n", volume)
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "Finalizers:\t%v\n", fmt.Sprint(obj.GetFinalizers()))
	capacity, modes := "", ""
	if volume != "" {
		capacity = quantity(status.Get("capacity.storage").String())
		if !status.Get("capacity.storage").Exists() {
			capacity = "0"
		}
		modes = accessModes(status.Get("accessModes").Array())
	}
	w.write(0, "Capacity:\t%s\n", capacity)
	w.write(0, "Access Modes:\t%s\n", modes)
	if m := spec.Get("volumeMode"); m.Exists() {
		w.write(0, "VolumeMode:\t%v\n", m.String())
	}
	if ds := spec.Get("dataSource"); ds.Exists() {
		w.write(0, "DataSource:\n")
		if g := ds.Get("apiGroup"); g.Exists() {
			w.write(1, "APIGroup:\t%v\n", g.String())
		}
		w.write(1, "Kind:\t%v\n", ds.Get("kind").String())
		w.write(1, "Name:\t%v\n", ds.Get("name").String())
	}
	var users []string
	if pods, err := list(ctx, podsGVR, obj.GetNamespace(), "", ""); err == nil {
		users = claimUsers(pods, obj)
	}
	w.write(0, "Used By:\t")
	if len(users) == 0 {
		w.line("<none>")
	}
	for i, u := range users {
		if i > 0 {
			w.write(0, "\t")
		}
		w.write(0, "%s\n", u)
	}
	if conds := status.Get("conditions").Array(); len(conds) > 0 {
		w.write(0, "Conditions:\n")
		w.write(1, "Type\tStatus\tLastProbeTime\tLastTransitionTime\tReason\tMessage\n")
		w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
		for _, c := range conds {
			w.write(1, "%v \t%v \t%s \t%s \t%v \t%v\n", c.Get("type").String(), c.Get("status").String(),
				rfc1123z(c.Get("lastProbeTime").String()), rfc1123z(c.Get("lastTransitionTime").String()),
				c.Get("reason").String(), c.Get("message").String())
		}
	}
}

// claimUsers names, sorted, the pods that mount the claim and the pods
// that own it, as kubectl finds them (a pod that mounts it twice is
// named twice, as in kubectl).
func claimUsers(pods []gjson.Result, claim *unstructured.Unstructured) []string {
	var users, uids []string
	for _, p := range pods {
		for _, v := range p.Get("spec.volumes").Array() {
			if v.Get("persistentVolumeClaim.claimName").String() == claim.GetName() {
				users = append(users, p.Get("metadata.name").String())
				uids = append(uids, p.Get("metadata.uid").String())
			}
		}
	}
	for _, ref := range claim.GetOwnerReferences() {
		if ref.Kind != "Pod" || slices.Contains(uids, string(ref.UID)) {
			continue
		}
		for _, p := range pods {
			if p.Get("metadata.uid").String() == string(ref.UID) {
				users = append(users, p.Get("metadata.name").String())
				uids = append(uids, string(ref.UID))
				break
			}
		}
	}
	slices.Sort(users)
	return users
}

// accessModes is kubectl's short form of access modes: RWO, ROX, RWX,
// RWOP, in that order, each once.
func accessModes(modes []gjson.Result) string {
	var out []string
	for _, m := range []struct{ mode, short string }{
		{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"},
	} {
		if slices.ContainsFunc(modes, func(r gjson.Result) bool { return r.String() == m.mode }) {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}
