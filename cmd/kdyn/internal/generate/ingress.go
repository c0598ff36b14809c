package generate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var ingressGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}

// ingressRule is kubectl's form of --rule: host/path=service:port, then
// optionally ",tls" or ",tls=secret".
var ingressRule = regexp.MustCompile(`^([\w\*\-\.]*)(/.*)=([\w\-]+):([\w\-]+)(,(tls)=?([\w\-]+)?)?`)

// newIngressCommand returns "create ingress": an Ingress from --rule,
// --default-backend, --class and --annotation, as kubectl builds it.
func newIngressCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var class, defaultBackend string
	var rules, annotations []string
	cmd := &cobra.Command{
		Use:     "ingress NAME --rule=host/path=service:port[,tls[=secret]]",
		Aliases: []string{"ing"},
		Short:   "Create an ingress with the specified name",
		Long: `Create an Ingress. Each --rule is host/path=service:port, with ",tls" (the
default certificate) or ",tls=secret" for TLS; a path ending in * has
pathType Prefix, others Exact. Rules of one host share its HTTP paths. With
--dry-run=client -o yaml (or json) the output is byte for byte kubectl's.`,
		Example: `  # foo.com/bar to service svc1 port 8080, with TLS from secret my-cert
  kdyn create ingress simple --rule="foo.com/bar=svc1:8080,tls=my-cert"

  # Every host's /path, prefix match, with an ingress class
  kdyn create ingress catch-all --class=otheringress --rule="/path*=svc:http"

  # A default backend besides the rules
  kdyn create ingress withdefault --default-backend=defaultsvc:http --rule="foo.com/*=svc:8080"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := nameArg(cmd, args); err != nil {
				return err
			}
			if defaultBackend == "" && len(rules) == 0 {
				return errors.New("not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)")
			}
			for _, r := range rules {
				if !ingressRule.MatchString(r) {
					return fmt.Errorf("rule %s is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]", r)
				}
			}
			ann := map[string]string{}
			for _, a := range annotations {
				k, v, ok := strings.Cut(a, "=")
				if !ok {
					return fmt.Errorf("annotation %s is invalid and should be in format key=[value]", a)
				}
				ann[k] = v
			}
			if defaultBackend != "" && strings.Count(defaultBackend, ":") != 1 {
				return errors.New("default-backend should be in format servicename:serviceport")
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: ingressGVR, kind: "Ingress", namespaced: true, failure: "failed to create ingress: ",
				build: func(name, ns string) (*object, error) {
					spec := fields{}
					if class != "" {
						spec = append(spec, field{"ingressClassName", class})
					}
					if defaultBackend != "" {
						spec = append(spec, field{"defaultBackend", ingressBackend(defaultBackend)})
					}
					if tls := ingressTLS(rules); len(tls) > 0 {
						spec = append(spec, field{"tls", tls})
					}
					if hosts := ingressHosts(rules); len(hosts) > 0 {
						spec = append(spec, field{"rules", hosts})
					}
					return &object{gvr: ingressGVR, kind: "Ingress", name: name, namespace: ns, annotations: ann,
						body: fields{{"spec", spec}, {"status", fields{{"loadBalancer", fields{}}}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&class, "class", "", "The ingress class (spec.ingressClassName).")
	fl.StringArrayVar(&rules, "rule", nil, "A rule, host/path=service:port[,tls[=secret]] (repeatable); a path ending in * matches as a prefix.")
	fl.StringVar(&defaultBackend, "default-backend", "", "The default backend, service:port.")
	fl.StringArrayVar(&annotations, "annotation", nil, "An annotation of the ingress, key=value (repeatable).")
	o.addFlags(cmd)
	return cmd
}

// ingressBackend is a service backend "name:port", the port a number or a
// port name.
func ingressBackend(s string) fields {
	name, port, _ := strings.Cut(s, ":")
	port, _, _ = strings.Cut(port, ":")
	p := fields{}
	switch v := intstr.Parse(port); {
	case v.Type == intstr.String && v.StrVal != "":
		p = append(p, field{"name", v.StrVal})
	case v.Type == intstr.Int && v.IntVal != 0:
		p = append(p, field{"number", v.IntVal})
	}
	return fields{{"service", fields{{"name", name}, {"port", p}}}}
}

// ingressHosts groups the rules' paths by host, in the rules' order.
func ingressHosts(rules []string) []any {
	type host struct {
		name  string
		paths []any
	}
	var hosts []*host
	for _, r := range rules {
		rule, _, _ := strings.Cut(r, ",")
		name, rest, _ := strings.Cut(rule, "/")
		path, service, _ := strings.Cut(rest, "=")
		service, _, _ = strings.Cut(service, "=")
		path = "/" + path
		pathType := "Exact"
		if strings.HasSuffix(path, "*") {
			pathType, path = "Prefix", strings.TrimSuffix(path, "*")
		}
		p := fields{{"path", path}, {"pathType", pathType}, {"backend", ingressBackend(service)}}
		i := 0
		for i < len(hosts) && hosts[i].name != name {
			i++
		}
		if i == len(hosts) {
			hosts = append(hosts, &host{name: name})
		}
		hosts[i].paths = append(hosts[i].paths, p)
	}
	out := make([]any, len(hosts))
	for i, h := range hosts {
		r := fields{}
		if h.name != "" {
			r = append(r, field{"host", h.name})
		}
		out[i] = append(r, field{"http", fields{{"paths", h.paths}}})
	}
	return out
}

// ingressTLS is the TLS list of the rules with ",tls": one entry per
// secret, listing its hosts (each host once, in its first rule's entry),
// as kubectl builds it.
func ingressTLS(rules []string) []any {
	type entry struct {
		hosts  []string
		secret string
	}
	var entries []*entry
	seen := map[string]bool{}
	for _, r := range rules {
		parts := strings.Split(r, ",")
		if len(parts) != 2 {
			continue
		}
		host, _, _ := strings.Cut(r, "/")
		secret := ""
		if s := strings.Split(parts[1], "="); len(s) > 1 {
			secret = s[1]
		}
		if seen[host] {
			continue
		}
		seen[host] = true
		i := 0
		for i < len(entries) && entries[i].secret != secret {
			i++
		}
		if i < len(entries) {
			entries[i].hosts = append(entries[i].hosts, host)
			continue
		}
		e := &entry{secret: secret}
		if host != "" {
			e.hosts = []string{host}
		}
		if e.secret != "" || len(e.hosts) > 0 {
			entries = append(entries, e)
		}
	}
	out := make([]any, len(entries))
	for i, e := range entries {
		t := fields{}
		if len(e.hosts) > 0 {
			t = append(t, field{"hosts", e.hosts})
		}
		if e.secret != "" {
			t = append(t, field{"secretName", e.secret})
		}
		out[i] = t
	}
	return out
}
