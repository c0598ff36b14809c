package generate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// exposeFlags are kubectl expose's own flags.
type exposeFlags struct {
	manifests                                                           cli.ManifestFlags
	protocol, port, typ, lbIP, selector, labels, targetPort, externalIP string
	name, sessionAffinity, clusterIP                                    string
}

// NewExposeCommand returns "kdyn expose": a Service for a pod, service,
// replication controller, deployment or replica set, as kubectl expose.
func NewExposeCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	e := &exposeFlags{}
	cmd := &cobra.Command{
		Use:   "expose (-f FILENAME | TYPE NAME) [--port=port] [--protocol=TCP|UDP|SCTP] [--target-port=number-or-name] [--name=name] [--external-ip=external-ip-of-service] [--type=type]",
		Short: "Take a replication controller, service, deployment or pod and expose it as a new Kubernetes service",
		Long: `Create a Service that selects the pods of a pod, service, replication
controller, deployment or replica set (its selector, or the pod's labels),
on the ports it declares unless --port says otherwise, as kubectl expose
does. With -f, the object of the file is exposed as written. With
--dry-run=client -o yaml (or json) the output is byte for byte kubectl's.`,
		Example: `  # A service for a deployment's pods, port 80 to their 8000
  kdyn expose deployment nginx --port=80 --target-port=8000

  # A second service for a service, on another port
  kdyn expose service nginx --port=443 --target-port=8443 --name=nginx-https`,
		RunE: func(cmd *cobra.Command, args []string) error { return e.run(cmd.Context(), f, o, args) },
	}
	e.manifests.AddFlags(cmd, "with the objects to expose")
	fl := cmd.Flags()
	fl.StringVar(&e.protocol, "protocol", "", "The network protocol for the service to be created. Default is 'TCP'.")
	fl.StringVar(&e.port, "port", "", "The port that the service should serve on. Copied from the resource being exposed, if unspecified.")
	fl.StringVar(&e.typ, "type", "", "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'.")
	fl.StringVar(&e.lbIP, "load-balancer-ip", "", "IP to assign to the LoadBalancer.")
	fl.StringVar(&e.selector, "selector", "", "A label selector (KEY=VALUE,...) for this service; by default the exposed object's.")
	fl.StringVarP(&e.labels, "labels", "l", "", "Labels to apply to the service created by this call.")
	fl.StringVar(&e.targetPort, "target-port", "", "Name or number for the port on the container that the service should direct traffic to.")
	fl.StringVar(&e.externalIP, "external-ip", "", "Additional external IP address (not managed by Kubernetes) to accept for the service.")
	fl.StringVar(&e.name, "name", "", "The name for the newly created object.")
	fl.StringVar(&e.sessionAffinity, "session-affinity", "", "If non-empty, set the session affinity for the service to this; legal values: 'None', 'ClientIP'.")
	fl.StringVar(&e.clusterIP, "cluster-ip", "", "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service.")
	o.addFlagsFor(cmd, "kubectl-expose")
	o.record = cli.AddRecordFlag(cmd)
	return cmd
}

// run exposes each object the arguments or -f name.
func (e *exposeFlags) run(ctx context.Context, f *cli.Factory, o *options, args []string) error {
	objs, err := e.objects(ctx, f, args)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		switch gk {
		case schema.GroupKind{Kind: "ReplicationController"}, schema.GroupKind{Kind: "Service"}, schema.GroupKind{Kind: "Pod"},
			schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		default:
			return fmt.Errorf("cannot expose a %s", gk)
		}
		svc, err := e.service(obj)
		if err != nil {
			return err
		}
		name := e.name
		if name == "" {
			name = obj.GetName()
			if len(name) > 63 {
				name = name[:63]
			}
		}
		err = o.runNamed(ctx, f, name, generator{gvr: serviceGVR, kind: "Service", namespaced: true, done: "exposed",
			build: func(name, ns string) (*object, error) {
				svc.name, svc.namespace = name, ns
				return svc, nil
			}})
		if err != nil {
			return err
		}
	}
	return nil
}

// objects are the live objects the arguments name, or those of -f as
// written.
func (e *exposeFlags) objects(ctx context.Context, f *cli.Factory, args []string) ([]*unstructured.Unstructured, error) {
	if e.manifests.Given() {
		entries, err := cli.ReadEntries(f, &e.manifests, "expose")
		if err != nil {
			return nil, err
		}
		var out []*unstructured.Unstructured
		for _, en := range entries {
			if err := en.Err(); err != nil {
				return nil, fmt.Errorf("%s: %w", en.Where(), err)
			}
			out = append(out, en.Object())
		}
		return out, nil
	}
	if len(args) == 0 {
		return nil, cli.Usagef("You must provide one or more resources by argument or filename.")
	}
	targets, err := cli.ResolveObjects(ctx, f, args, cli.Selection{})
	if err != nil {
		return nil, err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, t := range targets {
		obj, err := client.Resource(t.Match.GVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// service builds the Service for obj, as kubectl expose's generator.
func (e *exposeFlags) service(obj *unstructured.Unstructured) (*object, error) {
	selector := e.selector
	if selector == "" {
		s, err := selectorOf(obj)
		if err != nil {
			return nil, fmt.Errorf("couldn't retrieve selectors via --selector flag or introspection: %v", err)
		}
		selector = s
	}
	ports, protocols := portsOf(obj)
	portList := []string{e.port}
	if e.port == "" {
		switch {
		case len(ports) == 0 && e.clusterIP != "None":
			return nil, errors.New("couldn't find port via --port flag or introspection")
		case len(ports) == 0:
			portList = nil
		default:
			portList = ports
		}
	}
	labels := e.labels
	if labels == "" {
		labels = joinLabels(obj.GetLabels())
	}
	sel, err := parseExposeLabels(selector)
	if err != nil {
		return nil, err
	}
	var lab map[string]string
	if labels != "" {
		if lab, err = parseExposeLabels(labels); err != nil {
			return nil, err
		}
	}
	var target any
	if e.targetPort != "" {
		target = intOrString(e.targetPort)
	}
	var svcPorts []any
	for i, ps := range portList {
		n, err := strconv.Atoi(ps)
		if err != nil {
			return nil, err
		}
		t := target
		if t == nil {
			t = n
		}
		name := ""
		if len(portList) > 1 {
			name = fmt.Sprintf("port-%d", i+1)
		}
		proto := e.protocol
		if proto == "" {
			proto = "TCP"
			// kubectl's rule: a port declared with several protocols (or
			// by several containers) gets one service port per
			// declaration, named port-N-PROTOCOL.
			if list := protocols[ps]; len(list) > 1 {
				for _, pr := range list {
					svcPorts = append(svcPorts, fields{{"name", fmt.Sprintf("port-%d-%s", i+1, strings.ToLower(pr))}, {"protocol", pr}, {"port", n}, {"targetPort", t}})
				}
				continue
			} else if len(list) == 1 {
				proto = list[0]
			}
		}
		p := fields{}
		if name != "" {
			p = append(p, field{"name", name})
		}
		svcPorts = append(svcPorts, append(p, field{"protocol", proto}, field{"port", n}, field{"targetPort", t}))
	}
	spec := fields{}
	if len(svcPorts) > 0 {
		spec = append(spec, field{"ports", svcPorts})
	}
	spec = append(spec, field{"selector", sel})
	if e.clusterIP != "" {
		spec = append(spec, field{"clusterIP", e.clusterIP})
	}
	if e.typ != "" {
		spec = append(spec, field{"type", e.typ})
	}
	if e.externalIP != "" {
		spec = append(spec, field{"externalIPs", []string{e.externalIP}})
	}
	switch e.sessionAffinity {
	case "", "None", "ClientIP":
		if e.sessionAffinity != "" {
			spec = append(spec, field{"sessionAffinity", e.sessionAffinity})
		}
	default:
		return nil, fmt.Errorf("unknown session affinity: %s", e.sessionAffinity)
	}
	if e.typ == "LoadBalancer" && e.lbIP != "" {
		spec = append(spec, field{"loadBalancerIP", e.lbIP})
	}
	return &object{gvr: serviceGVR, kind: "Service", labels: lab,
		body: fields{{"spec", spec}, {"status", fields{{"loadBalancer", fields{}}}}}}, nil
}

// selectorOf is the pod selector of an object kubectl can expose.
func selectorOf(obj *unstructured.Unstructured) (string, error) {
	switch obj.GetKind() {
	case "Pod":
		if len(obj.GetLabels()) == 0 {
			return "", errors.New("the pod has no labels and cannot be exposed")
		}
		return joinLabels(obj.GetLabels()), nil
	case "Service", "ReplicationController":
		m, found, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector")
		if !found && obj.GetKind() == "Service" {
			return "", errors.New("the service has no pod selector set")
		}
		return joinLabels(m), nil
	}
	kind := strings.ToLower(obj.GetKind())
	m, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	if len(m) == 0 {
		return "", fmt.Errorf("invalid %s: no selectors, therefore cannot be exposed", kind)
	}
	if exprs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "selector", "matchExpressions"); len(exprs) > 0 {
		return "", fmt.Errorf("couldn't convert expressions - \"%+v\" to map-based selector format", exprs)
	}
	return joinLabels(m), nil
}

// portsOf are the ports an object declares (its containers' or a
// service's), first seen first, and the protocols each is declared with,
// once per declaration.
func portsOf(obj *unstructured.Unstructured) ([]string, map[string][]string) {
	var ports []string
	protocols := map[string][]string{}
	add := func(port int64, proto string) {
		key := strconv.FormatInt(port, 10)
		if _, seen := protocols[key]; !seen {
			ports = append(ports, key)
		}
		if proto == "" {
			proto = "TCP"
		}
		protocols[key] = append(protocols[key], proto)
	}
	if obj.GetKind() == "Service" {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
		for _, p := range list {
			m, _ := p.(map[string]any)
			port, _, _ := unstructured.NestedInt64(m, "port")
			proto, _, _ := unstructured.NestedString(m, "protocol")
			add(port, proto)
		}
		return ports, protocols
	}
	path := []string{"spec", "template", "spec", "containers"}
	if obj.GetKind() == "Pod" {
		path = []string{"spec", "containers"}
	}
	containers, _, _ := unstructured.NestedSlice(obj.Object, path...)
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		list, _, _ := unstructured.NestedSlice(cm, "ports")
		for _, p := range list {
			m, _ := p.(map[string]any)
			port, _, _ := unstructured.NestedInt64(m, "containerPort")
			proto, _, _ := unstructured.NestedString(m, "protocol")
			add(port, proto)
		}
	}
	return ports, protocols
}

// joinLabels is KEY=VALUE,... (sorted).
func joinLabels(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// parseExposeLabels parses KEY=VALUE,... with kubectl expose's words.
func parseExposeLabels(spec string) (map[string]string, error) {
	if spec == "" {
		return nil, errors.New("no label spec passed")
	}
	out := map[string]string{}
	for _, s := range strings.Split(spec, ",") {
		kv := strings.Split(s, "=")
		if len(kv) != 2 {
			return nil, fmt.Errorf("unexpected label spec: %s", s)
		}
		if kv[0] == "" {
			return nil, errors.New("unexpected empty label key")
		}
		out[kv[0]] = kv[1]
	}
	return out, nil
}
