package describe

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var (
	podsGVR           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	replicaSetsGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// lister lists the objects of a resource in a namespace ("" for all) that
// a label and a field selector select, page by page.
type lister func(ctx context.Context, gvr schema.GroupVersionResource, ns, selector, fieldSelector string) ([]gjson.Result, error)

func newLister(f *cli.Factory, chunk int64) lister {
	return func(ctx context.Context, gvr schema.GroupVersionResource, ns, selector, fieldSelector string) ([]gjson.Result, error) {
		rc, err := f.RESTClient()
		if err != nil {
			return nil, err
		}
		opts := metav1.ListOptions{LabelSelector: selector, FieldSelector: fieldSelector, Limit: chunk}
		var out []gjson.Result
		for {
			raw, err := cli.ListRaw(ctx, rc, gvr, ns, opts)
			if err != nil {
				return nil, err
			}
			list := gjson.ParseBytes(raw)
			out = append(out, list.Get("items").Array()...)
			if opts.Continue = list.Get("metadata.continue").String(); opts.Continue == "" {
				return out, nil
			}
		}
	}
}

// podPhases counts the pods a controller (by uid) owns, by phase.
func podPhases(ctx context.Context, list lister, ns, selector, uid string) (running, waiting, succeeded, failed int, err error) {
	pods, err := list(ctx, podsGVR, ns, selector, "")
	if err != nil {
		return
	}
	for _, p := range pods {
		owned := false
		for _, ref := range p.Get("metadata.ownerReferences").Array() {
			if ref.Get("controller").Bool() && ref.Get("uid").String() == uid {
				owned = true
			}
		}
		if !owned {
			continue
		}
		switch p.Get("status.phase").String() {
		case "Running":
			running++
		case "Pending":
			waiting++
		case "Succeeded":
			succeeded++
		case "Failed":
			failed++
		}
	}
	return
}

// selectorString is a label selector as kubectl prints it: matchLabels and
// matchExpressions joined.
func selectorString(sel gjson.Result) (string, error) {
	var ls metav1.LabelSelector
	if err := jsonUnmarshal(sel.Raw, &ls); err != nil {
		return "", err
	}
	s, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// selectorOrError is selectorString, or "<error>" (as kubectl prints a
// selector that does not parse).
func selectorOrError(sel gjson.Result) string {
	s, err := selectorString(sel)
	if err != nil {
		return "<error>"
	}
	return s
}

// jsonUnmarshal decodes raw JSON (empty is nothing).
func jsonUnmarshal(raw string, v any) error {
	if raw == "" {
		return nil
	}
	return json.Unmarshal([]byte(raw), v)
}

// workloadConditions writes workload conditions: type, status, reason.
func workloadConditions(w *writer, conds []gjson.Result) {
	if len(conds) == 0 {
		return
	}
	w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
	w.write(1, "----\t------\t------\n")
	for _, c := range conds {
		w.write(1, "%v \t%v\t%v\n", c.Get("type").String(), c.Get("status").String(), c.Get("reason").String())
	}
}

// describeReplicaSet is kubectl's ReplicaSet description.
func describeReplicaSet(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, rs gjson.Result) {
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	sel := selectorOrError(rs.Get("spec.selector"))
	w.write(0, "Selector:\t%s\n", sel)
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			w.write(0, "Controlled By:\t%s/%s\n", ref.Kind, ref.Name)
			break
		}
	}
	w.write(0, "Replicas:\t%d current / %d desired\n", rs.Get("status.replicas").Int(), rs.Get("spec.replicas").Int())
	w.write(0, "Pods Status:\t")
	running, waiting, succeeded, failed, err := podPhases(ctx, list, obj.GetNamespace(), sel, string(obj.GetUID()))
	if err != nil {
		w.write(0, "error in fetching pods: %s\n", err)
	} else {
		w.write(0, "%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	}
	podTemplate(w, rs.Get("spec.template"))
	workloadConditions(w, rs.Get("status.conditions").Array())
}

// describeReplicationController is kubectl's ReplicationController
// description.
func describeReplicationController(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, rc gjson.Result) {
	sel := labels.FormatLabels(stringMap(rc.Get("spec.selector")))
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.write(0, "Selector:\t%s\n", sel)
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "Replicas:\t%d current / %d desired\n", rc.Get("status.replicas").Int(), rc.Get("spec.replicas").Int())
	running, waiting, succeeded, failed, _ := podPhases(ctx, list, obj.GetNamespace(), labels.SelectorFromSet(stringMap(rc.Get("spec.selector"))).String(), string(obj.GetUID()))
	w.write(0, "Pods Status:\t%d Running / %d Waiting / %d Succeeded / %d Failed\n", running, waiting, succeeded, failed)
	podTemplate(w, rc.Get("spec.template"))
	workloadConditions(w, rc.Get("status.conditions").Array())
}

// describeDeployment is kubectl's Deployment description, with its old
// and new ReplicaSets.
func describeDeployment(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, d gjson.Result) {
	sel := selectorOrError(d.Get("spec.selector"))
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.write(0, "CreationTimestamp:\t%s\n", obj.GetCreationTimestamp().Time.Format(time.RFC1123Z))
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "Selector:\t%s\n", sel)
	st := d.Get("status")
	w.write(0, "Replicas:\t%d desired | %d updated | %d total | %d available | %d unavailable\n", d.Get("spec.replicas").Int(),
		st.Get("updatedReplicas").Int(), st.Get("replicas").Int(), st.Get("availableReplicas").Int(), st.Get("unavailableReplicas").Int())
	w.write(0, "StrategyType:\t%s\n", d.Get("spec.strategy.type").String())
	w.write(0, "MinReadySeconds:\t%d\n", d.Get("spec.minReadySeconds").Int())
	if ru := d.Get("spec.strategy.rollingUpdate"); ru.Exists() {
		w.write(0, "RollingUpdateStrategy:\t%s max unavailable, %s max surge\n", ru.Get("maxUnavailable").String(), ru.Get("maxSurge").String())
	}
	podTemplate(w, d.Get("spec.template"))
	workloadConditions(w, st.Get("conditions").Array())
	rss, err := list(ctx, replicaSetsGVR, obj.GetNamespace(), sel, "")
	if err != nil {
		return
	}
	var owned []gjson.Result
	for _, rs := range rss {
		for _, ref := range rs.Get("metadata.ownerReferences").Array() {
			if ref.Get("controller").Bool() && ref.Get("uid").String() == string(obj.GetUID()) {
				owned = append(owned, rs)
			}
		}
	}
	// The new ReplicaSet is the oldest whose template is the deployment's
	// (but for the pod-template-hash label); the others are old.
	sort.SliceStable(owned, func(i, j int) bool {
		return owned[i].Get("metadata.creationTimestamp").Time().Before(owned[j].Get("metadata.creationTimestamp").Time())
	})
	want := templateWithoutHash(d.Get("spec.template"))
	var newRS, oldRS []gjson.Result
	for _, rs := range owned {
		if len(newRS) == 0 && reflect.DeepEqual(templateWithoutHash(rs.Get("spec.template")), want) {
			newRS = append(newRS, rs)
			continue
		}
		oldRS = append(oldRS, rs)
	}
	if len(owned) > 0 {
		w.write(0, "OldReplicaSets:\t%s\n", replicaSetList(oldRS))
		w.write(0, "NewReplicaSet:\t%s\n", replicaSetList(newRS))
	}
}

// templateWithoutHash is a pod template without the pod-template-hash
// label, for comparison.
func templateWithoutHash(t gjson.Result) any {
	var m map[string]any
	if err := jsonUnmarshal(t.Raw, &m); err != nil {
		return nil
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if l, ok := md["labels"].(map[string]any); ok {
			delete(l, "pod-template-hash")
			if len(l) == 0 {
				delete(md, "labels")
			}
		}
	}
	return m
}

func replicaSetList(rss []gjson.Result) string {
	var out []string
	for _, rs := range rss {
		out = append(out, fmt.Sprintf("%s (%d/%d replicas created)", rs.Get("metadata.name").String(), rs.Get("status.replicas").Int(), rs.Get("spec.replicas").Int()))
	}
	if len(out) == 0 {
		return "<none>"
	}
	return strings.Join(out, ", ")
}

// describeService is kubectl's Service description, with the endpoints
// of its EndpointSlices.
func describeService(ctx context.Context, w *writer, list lister, obj *unstructured.Unstructured, svc gjson.Result) {
	spec := svc.Get("spec")
	w.write(0, "Name:\t%s\n", obj.GetName())
	w.write(0, "Namespace:\t%s\n", obj.GetNamespace())
	w.labels("Labels", obj.GetLabels())
	w.annotations("Annotations", obj.GetAnnotations())
	w.write(0, "Selector:\t%s\n", labels.FormatLabels(stringMap(spec.Get("selector"))))
	w.write(0, "Type:\t%s\n", spec.Get("type").String())
	if p := spec.Get("ipFamilyPolicy"); p.Exists() {
		w.write(0, "IP Family Policy:\t%s\n", p.String())
	}
	w.write(0, "IP Families:\t%s\n", joinOrNone(spec.Get("ipFamilies").Array(), ","))
	w.write(0, "IP:\t%s\n", spec.Get("clusterIP").String())
	w.write(0, "IPs:\t%s\n", joinOrNone(spec.Get("clusterIPs").Array(), ","))
	if ips := spec.Get("externalIPs").Array(); len(ips) > 0 {
		w.write(0, "External IPs:\t%v\n", joinOrNone(ips, ","))
	}
	if s := spec.Get("loadBalancerIP").String(); s != "" {
		w.write(0, "Desired LoadBalancer IP:\t%s\n", s)
	}
	if s := spec.Get("externalName").String(); s != "" {
		w.write(0, "External Name:\t%s\n", s)
	}
	if ing := svc.Get("status.loadBalancer.ingress").Array(); len(ing) > 0 {
		var parts []string
		for _, i := range ing {
			if ip := i.Get("ip").String(); ip != "" {
				if mode := i.Get("ipMode").String(); mode != "" {
					ip += " (" + mode + ")"
				}
				parts = append(parts, ip)
			} else {
				parts = append(parts, i.Get("hostname").String())
			}
		}
		w.write(0, "LoadBalancer Ingress:\t%s\n", strings.Join(parts, ", "))
	}
	slices, _ := list(ctx, endpointSlicesGVR, obj.GetNamespace(), "kubernetes.io/service-name="+obj.GetName(), "")
	for _, sp := range spec.Get("ports").Array() {
		name := sp.Get("name").String()
		if name == "" {
			name = "<unset>"
		}
		proto := sp.Get("protocol").String()
		w.write(0, "Port:\t%s\t%d/%s\n", name, sp.Get("port").Int(), proto)
		w.write(0, "TargetPort:\t%s/%s\n", sp.Get("targetPort").String(), proto)
		if ap := sp.Get("appProtocol"); ap.Exists() {
			w.write(0, "AppProtocol:\t%s\n", ap.String())
		}
		if np := sp.Get("nodePort").Int(); np != 0 {
			w.write(0, "NodePort:\t%s\t%d/%s\n", name, np, proto)
		}
		w.write(0, "Endpoints:\t%s\n", endpoints(slices, sp.Get("name").String()))
	}
	w.write(0, "Session Affinity:\t%s\n", spec.Get("sessionAffinity").String())
	if s := spec.Get("externalTrafficPolicy").String(); s != "" {
		w.write(0, "External Traffic Policy:\t%s\n", s)
	}
	if s := spec.Get("internalTrafficPolicy"); s.Exists() {
		w.write(0, "Internal Traffic Policy:\t%s\n", s.String())
	}
	if n := spec.Get("healthCheckNodePort").Int(); n != 0 {
		w.write(0, "HealthCheck NodePort:\t%d\n", n)
	}
	if r := spec.Get("loadBalancerSourceRanges").Array(); len(r) > 0 {
		w.write(0, "LoadBalancer Source Ranges:\t%v\n", joinOrNone(r, ","))
	}
	if t := spec.Get("trafficDistribution"); t.Exists() {
		w.write(0, "Traffic Distribution:\t%s\n", t.String())
	}
}

// endpoints lists up to three ready endpoints of the slices for the port
// named port (host:port), "+ N more..." after them.
func endpoints(slices []gjson.Result, port string) string {
	if len(slices) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	more := false
	add := func(addr string) {
		if len(list) == max {
			more = true
		}
		if !more {
			list = append(list, addr)
		}
		count++
	}
	for _, s := range slices {
		ports := s.Get("ports").Array()
		if len(ports) == 0 {
			for _, e := range s.Get("endpoints").Array() {
				if r := e.Get("conditions.ready"); r.Exists() && !r.Bool() {
					continue
				}
				add(e.Get("addresses.0").String())
			}
			continue
		}
		for _, p := range ports {
			if p.Get("name").String() != port {
				continue
			}
			for _, e := range s.Get("endpoints").Array() {
				if r := e.Get("conditions.ready"); r.Exists() && !r.Bool() {
					continue
				}
				add(net.JoinHostPort(e.Get("addresses.0").String(), strconv.FormatInt(p.Get("port").Int(), 10)))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	return ret
}

func joinOrNone(rs []gjson.Result, sep string) string {
	if len(rs) == 0 {
		return "<none>"
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return strings.Join(out, sep)
}
