package pods

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/remote"
)

type portForwardOptions struct {
	addresses  []string
	podTimeout time.Duration
}

// NewPortForwardCommand returns "kdyn port-forward".
func NewPortForwardCommand(f *cli.Factory) *cobra.Command {
	o := &portForwardOptions{}
	cmd := &cobra.Command{
		Use:   "port-forward TYPE/NAME [options] [LOCAL_PORT:]REMOTE_PORT [...[LOCAL_PORT_N:]REMOTE_PORT_N]",
		Short: "Forward one or more local ports to a pod",
		Long: `Forward local ports to a pod, as kubectl port-forward does: connections to
each local port are carried to the pod's port through the API server
(SPDY, protocol portforward.k8s.io). A bare NAME is a pod; TYPE/NAME picks
one running pod of a workload or service, and a service's ports are
translated to the pods' target ports. Ports may be named (a container's or
the service's port names). A local port of 0 or an empty one (":80") picks
a free port. It runs until interrupted, or until the connection to the pod
is lost.`,
		Example: `  # Local 8080 to port 80 of pod web-1
  kdyn port-forward pod/web-1 8080:80

  # The same port number on both ends, two ports
  kdyn port-forward web-1 5000 6000

  # A random local port to the service's port named http
  kdyn port-forward svc/web :http

  # Listen on all addresses
  kdyn port-forward --address 0.0.0.0 deploy/web 8080:80`,
		RunE: func(cmd *cobra.Command, args []string) error { return runPortForward(cmd, f, o, args) },
	}
	cmd.Flags().StringSliceVar(&o.addresses, "address", []string{"localhost"}, "Addresses to listen on (comma separated). Only accepts IP addresses or localhost as a value. When localhost is supplied, kubectl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these addresses are available to bind.")
	addPodTimeoutFlag(cmd, &o.podTimeout, time.Minute)
	return cmd
}

func runPortForward(cmd *cobra.Command, f *cli.Factory, o *portForwardOptions, args []string) error {
	ctx := cmd.Context()
	if len(args) < 2 {
		return cli.Usagef("TYPE/NAME and list of ports are required for port-forward")
	}
	if o.podTimeout <= 0 {
		return cli.Usagef("--pod-running-timeout must be higher than zero")
	}
	for _, a := range o.addresses {
		if a != "localhost" && net.ParseIP(a) == nil {
			return fmt.Errorf("%s is not a valid IP", a)
		}
	}
	dc, err := f.DynamicClient()
	if err != nil {
		return err
	}
	obj, err := object(ctx, f, dc, args[:1])
	if err != nil {
		return err
	}
	pod, err := pickPod(ctx, dc, obj, o.podTimeout, "attach to")
	if err != nil {
		return err
	}
	specs := args[1:]
	if obj.GetKind() == "Service" {
		if err := checkUDP(specs, pod, obj); err != nil {
			return err
		}
		specs, err = servicePorts(specs, obj, pod)
	} else {
		if err := checkUDP(specs, pod, nil); err != nil {
			return err
		}
		specs, err = podPorts(specs, pod)
	}
	if err != nil {
		return err
	}
	var forwards []remote.Forward
	for _, s := range specs {
		fw, err := parseForward(s)
		if err != nil {
			return err
		}
		forwards = append(forwards, fw)
	}
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase != "Running" {
		return fmt.Errorf("unable to forward port because pod is not running. Current status=%v", phase)
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	u := rc.Post().Version("v1").Namespace(pod.GetNamespace()).Resource("pods").Name(pod.GetName()).SubResource("portforward").URL()
	hc := rc.UpgradeClient()
	out := &cli.LockedWriter{W: cmd.OutOrStdout()}
	return remote.PortForward(ctx, hc, u, o.addresses, forwards, out, cmd.ErrOrStderr(), func(ls []remote.Listener) {
		for _, l := range ls {
			fmt.Fprintf(out, "Forwarding from %s -> %d\n", l.Addr, l.Remote)
		}
	})
}

// splitPort splits "LOCAL:REMOTE" (or "REMOTE", both the same).
func splitPort(s string) (local, remote string) {
	if l, r, ok := strings.Cut(s, ":"); ok {
		return l, r
	}
	return s, s
}

// parseForward reads a numeric "[LOCAL:]REMOTE" as kubectl does.
func parseForward(s string) (remote.Forward, error) {
	l, r := splitPort(s)
	if l == "" {
		l = "0"
	}
	local, err := strconv.ParseUint(l, 10, 16)
	if err != nil {
		return remote.Forward{}, fmt.Errorf("error parsing local port '%s': %s", l, err)
	}
	rp, err := strconv.ParseUint(r, 10, 16)
	if err != nil {
		return remote.Forward{}, fmt.Errorf("error parsing remote port '%s': %s", r, err)
	}
	if rp == 0 {
		return remote.Forward{}, fmt.Errorf("remote port must be > 0")
	}
	return remote.Forward{Local: int(local), Remote: int(rp)}, nil
}

// containerPorts are a pod's container ports, of its containers and then
// its init containers, as kubectl looks names up: name → number.
func containerPorts(pod *unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	for _, p := range podPortList(pod) {
		if _, seen := out[p.name]; p.name != "" && !seen { // the first of a name, as kubectl
			out[p.name] = p.number
		}
	}
	return out
}

// portSpec is one port of a pod or service.
type portSpec struct {
	name     string
	number   int64
	protocol string // "TCP" when not given
}

// portList reads ports (a container's or a service's; the number in key).
func portList(ports []any, key string) []portSpec {
	var out []portSpec
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		name, _ := pm["name"].(string)
		n, _ := pm[key].(int64)
		proto, _ := pm["protocol"].(string)
		if proto == "" {
			proto = "TCP"
		}
		out = append(out, portSpec{name: name, number: n, protocol: proto})
	}
	return out
}

// podPortList lists the ports of a pod's containers, then of its init
// containers.
func podPortList(pod *unstructured.Unstructured) []portSpec {
	var out []portSpec
	for _, kind := range []string{"containers", "initContainers"} {
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", kind)
		for _, c := range list {
			cm, _ := c.(map[string]any)
			ports, _, _ := unstructured.NestedSlice(cm, "ports")
			out = append(out, portList(ports, "containerPort")...)
		}
	}
	return out
}

// checkUDP refuses a remote port that the pod's containers (or the
// service, when svc is not nil) declare only for UDP, which port-forward
// cannot carry, as kubectl does (before translating the ports).
func checkUDP(specs []string, pod, svc *unstructured.Unstructured) error {
	var ports []portSpec
	if svc != nil {
		list, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		ports = portList(list, "port")
	} else {
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
		for _, c := range list {
			cm, _ := c.(map[string]any)
			cp, _, _ := unstructured.NestedSlice(cm, "ports")
			ports = append(ports, portList(cp, "containerPort")...)
		}
	}
	udp, tcp := map[int64]bool{}, map[int64]bool{}
	for _, p := range ports {
		switch p.protocol {
		case "UDP":
			udp[p.number] = true
		case "TCP":
			tcp[p.number] = true
		}
	}
	for _, s := range specs {
		_, r := splitPort(s)
		n, err := strconv.ParseInt(r, 10, 64)
		if err != nil {
			var ok bool
			if svc != nil {
				n, ok = servicePortByName(ports, r)
				if !ok {
					//lint:ignore ST1005 kubectl's wording, which scripts may match
					return fmt.Errorf("Service '%s' does not have a named port '%s'", svc.GetName(), r)
				}
			} else if n, ok = containerPorts(pod)[r]; !ok {
				//lint:ignore ST1005 kubectl's wording, which scripts may match
				return fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.GetName(), r)
			}
		}
		if udp[n] && !tcp[n] {
			return fmt.Errorf("UDP protocol is not supported for %s", r)
		}
	}
	return nil
}

// servicePortByName is the number of the service port of that name.
func servicePortByName(ports []portSpec, name string) (int64, bool) {
	for _, p := range ports {
		if p.name == name {
			return p.number, true
		}
	}
	return 0, false
}

// podPorts turns a pod's named ports into numbers.
func podPorts(specs []string, pod *unstructured.Unstructured) ([]string, error) {
	named := containerPorts(pod)
	var out []string
	for _, s := range specs {
		local, r := splitPort(s)
		if r == "" {
			return nil, errors.New("remote port cannot be empty")
		}
		if _, err := strconv.Atoi(r); err != nil {
			n, ok := named[r]
			if !ok {
				//lint:ignore ST1005 kubectl's wording, which scripts may match
				return nil, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.GetName(), r)
			}
			if local == r {
				local = strconv.FormatInt(n, 10)
			}
			r = strconv.FormatInt(n, 10)
		}
		out = append(out, local+":"+r)
	}
	return out, nil
}

// servicePorts turns a service's ports (numbers or names) into the ports
// of its pod that they target.
func servicePorts(specs []string, svc, pod *unstructured.Unstructured) ([]string, error) {
	list, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var out []string
	for _, s := range specs {
		local, r := splitPort(s)
		var port map[string]any
		for _, p := range list {
			pm, _ := p.(map[string]any)
			if n, err := strconv.ParseInt(r, 10, 32); err == nil {
				if pm["port"] == n {
					port = pm
				}
			} else if pm["name"] == r {
				port = pm
			}
		}
		if port == nil {
			if _, err := strconv.Atoi(r); err != nil {
				//lint:ignore ST1005 kubectl's wording, which scripts may match
				return nil, fmt.Errorf("Service '%s' does not have a named port '%s'", svc.GetName(), r)
			}
			//lint:ignore ST1005 kubectl's wording, which scripts may match
			return nil, fmt.Errorf("Service %s does not have a service port %s", svc.GetName(), r)
		}
		number, _ := port["port"].(int64)
		if local == r {
			local = strconv.FormatInt(number, 10)
		}
		target := number
		if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip == "None" {
			// a headless service's port is the pods' port, as kubectl has it
			out = append(out, local+":"+strconv.FormatInt(number, 10))
			continue
		}
		switch t := port["targetPort"].(type) {
		case int64:
			if t != 0 {
				target = t
			}
		case string:
			n, ok := containerPorts(pod)[t]
			if !ok {
				//lint:ignore ST1005 kubectl's wording, which scripts may match
				return nil, fmt.Errorf("Pod '%s' does not have a named port '%s'", pod.GetName(), t)
			}
			target = n
		}
		out = append(out, local+":"+strconv.FormatInt(target, 10))
	}
	return out, nil
}
