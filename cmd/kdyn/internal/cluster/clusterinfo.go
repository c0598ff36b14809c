package cluster

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// clusterServiceSelector picks the services cluster-info lists.
const clusterServiceSelector = "kubernetes.io/cluster-service=true"

var servicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// NewClusterInfoCommand returns "kdyn cluster-info" with its dump
// subcommand.
func NewClusterInfoCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster-info",
		Short: "Display cluster information",
		Long: `Print the address of the Kubernetes control plane, then the address of
each service in kube-system (or in the namespace -n names) that carries the
label kubernetes.io/cluster-service=true: its load balancer's, or else its
path through the API server's service proxy.

For a fuller picture when something is wrong, 'cluster-info dump' writes
out the cluster's nodes, workloads, events and pod logs.`,
		Example: `  # Print the addresses of the control plane and of the cluster services
  kdyn cluster-info`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClusterInfo(cmd.Context(), f, cmd.OutOrStdout(), cmd.Root().Name())
		},
	}
	cmd.AddCommand(newDumpCommand(f))
	return cmd
}

// runClusterInfo prints the control plane's address and the cluster
// services, then the hint to run dump (named after the invoked command,
// kdyn or kubectl), which kubectl prints even when the listing failed (but
// not when the client configuration could not be loaded).
func runClusterInfo(ctx context.Context, f *cli.Factory, out io.Writer, name string) error {
	cfg, err := f.RESTConfig()
	if err != nil {
		return err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	ns := f.Flags.Namespace
	if ns == "" {
		ns = metav1.NamespaceSystem
	}
	err = printClusterInfo(ctx, client, ns, controlPlaneHost(cfg.Host), out)
	fmt.Fprintf(out, "\nTo further debug and diagnose cluster problems, use '%s cluster-info dump'.\n", name)
	return err
}

// printClusterInfo lists the cluster services of namespace ns and prints
// the control plane's address (host), then each service's.
func printClusterInfo(ctx context.Context, client dynamic.Interface, ns, host string, out io.Writer) error {
	list, err := client.Resource(servicesGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: clusterServiceSelector})
	if err != nil {
		return err
	}
	printService(out, "Kubernetes control plane", host)
	for i := range list.Items {
		svc := &list.Items[i]
		name := svc.GetLabels()["kubernetes.io/name"]
		if name == "" {
			name = svc.GetName()
		}
		printService(out, name, serviceLink(host, svc))
	}
	return nil
}

func printService(out io.Writer, name, link string) {
	fmt.Fprintf(out, "%s is running at %s\n", name, link)
}

// controlPlaneHost is the server address as kubectl's client configuration
// holds it: a URL with a path loses its query and fragment; anything else
// is kept as the kubeconfig (or --server) gives it.
func controlPlaneHost(host string) string {
	if u, err := url.ParseRequestURI(host); err == nil && u.Opaque == "" && len(u.Path) > 1 {
		u.RawQuery = ""
		u.Fragment = ""
		return u.String()
	}
	return host
}

// serviceLink is where a cluster service answers: "http://IP:PORT " for
// each port of its first load balancer ingress, or else its path through
// the API server's service proxy, named <scheme>:<name>:<port name> after
// its first port (https when that port is named https or is 443).
func serviceLink(host string, svc *unstructured.Unstructured) string {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	ingress, _, _ := unstructured.NestedSlice(svc.Object, "status", "loadBalancer", "ingress")
	if len(ingress) > 0 {
		first, _ := ingress[0].(map[string]any)
		ip, _ := first["ip"].(string)
		if ip == "" {
			ip, _ = first["hostname"].(string)
		}
		link := ""
		for _, p := range ports {
			port, _ := p.(map[string]any)
			link += "http://" + ip + ":" + strconv.FormatInt(portNumber(port), 10) + " "
		}
		return link
	}
	name := svc.GetName()
	if len(ports) > 0 {
		port, _ := ports[0].(map[string]any)
		portName, _ := port["name"].(string)
		scheme := ""
		if portName == "https" || portNumber(port) == 443 {
			scheme = "https"
		}
		name = joinSchemeNamePort(scheme, name, portName)
	}
	return host + "/api/v1/namespaces/" + svc.GetNamespace() + "/services/" + name + "/proxy"
}

// joinSchemeNamePort names a service port for the proxy path:
// scheme:name:port with a scheme, name:port with a port name, or name.
func joinSchemeNamePort(scheme, name, port string) string {
	switch {
	case scheme != "":
		return scheme + ":" + name + ":" + port
	case port != "":
		return name + ":" + port
	}
	return name
}

// portNumber is a service port's number (0 when it has none).
func portNumber(port map[string]any) int64 {
	n, _, _ := kunstructured.GetInt64(port, "port")
	return n
}
