package generate

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var (
	quotaGVR         = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	priorityClassGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
	pdbGVR           = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
)

// newServiceCommand returns "create service" with its four types.
func newServiceCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "service",
		Aliases: []string{"svc"},
		Short:   "Create a service using a specified subcommand",
		Long:    "Create a Service of a type: clusterip, nodeport, loadbalancer or externalname.",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Usagef("create service needs a type: clusterip, nodeport, loadbalancer or externalname (see 'kdyn create service -h')")
		},
	}
	cmd.AddCommand(
		newServiceTypeCommand(f, "clusterip", "ClusterIP", "Create a ClusterIP service"),
		newServiceTypeCommand(f, "nodeport", "NodePort", "Create a NodePort service"),
		newServiceTypeCommand(f, "loadbalancer", "LoadBalancer", "Create a LoadBalancer service"),
		newServiceTypeCommand(f, "externalname", "ExternalName", "Create an ExternalName service"),
	)
	return cmd
}

// servicePort parses a --tcp PORT[:TARGET] as kubectl does: the target a
// number or a port name.
func servicePort(spec string, nodePort int) (fields, error) {
	parts := strings.Split(spec, ":")
	p, err := strconv.ParseUint(parts[0], 10, 16)
	if err != nil {
		return nil, err
	}
	port := int32(p)
	var target any = port
	if len(parts) > 1 {
		if n, err := strconv.Atoi(parts[1]); err != nil {
			if errs := validation.IsValidPortName(parts[1]); len(errs) != 0 {
				return nil, errors.New(strings.Join(errs, ","))
			}
			target = parts[1]
		} else {
			if errs := validation.IsValidPortNum(n); len(errs) != 0 {
				return nil, errors.New(strings.Join(errs, ","))
			}
			target = int32(n)
		}
	}
	out := fields{{"name", strings.ReplaceAll(spec, ":", "-")}, {"protocol", "TCP"}, {"port", port}, {"targetPort", target}}
	if nodePort != 0 {
		out = append(out, field{"nodePort", nodePort})
	}
	return out, nil
}

func newServiceTypeCommand(f *cli.Factory, use, typ, short string) *cobra.Command {
	o := &options{}
	var tcp []string
	var clusterIP, externalName string
	var nodePort int
	cmd := &cobra.Command{
		Use:   use + " NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]",
		Short: short,
		Long: short + `, labelled and selecting app=NAME, with the ports of --tcp
(PORT or PORT:TARGET, the target a number or a port name). With
--dry-run=client -o yaml (or json) the output is byte for byte kubectl's.`,
		Example: fmt.Sprintf("  kdyn create service %s my-svc --tcp=5678:8080", use),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case clusterIP == "None" && typ != "ClusterIP":
				return errors.New("ClusterIP=None can only be used with ClusterIP service type")
			case clusterIP != "None" && len(tcp) == 0 && typ != "ExternalName":
				return errors.New("at least one tcp port specifier must be provided")
			case typ == "ExternalName" && len(validation.IsDNS1123Subdomain(externalName)) != 0:
				return fmt.Errorf("invalid service external name %s", externalName)
			}
			// kubectl v1.37's create service accepts --save-config and
			// records nothing; scripts rely on the same bytes.
			o.saveConfig = false
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: serviceGVR, kind: "Service", namespaced: true, failure: "failed to create " + typ + " service: ",
				build: func(name, ns string) (*object, error) {
					var ports []any
					for _, s := range tcp {
						p, err := servicePort(s, nodePort)
						if err != nil {
							return nil, err
						}
						ports = append(ports, p)
					}
					labels := map[string]string{"app": name}
					var spec fields
					if len(ports) > 0 {
						spec = append(spec, field{"ports", ports})
					}
					spec = append(spec, field{"selector", labels})
					if clusterIP != "" {
						spec = append(spec, field{"clusterIP", clusterIP})
					}
					spec = append(spec, field{"type", typ})
					if externalName != "" {
						spec = append(spec, field{"externalName", externalName})
					}
					return &object{gvr: serviceGVR, kind: "Service", name: name, namespace: ns, labels: labels,
						body: fields{{"spec", spec}, {"status", fields{{"loadBalancer", fields{}}}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	switch typ {
	case "ClusterIP":
		fl.StringSliceVar(&tcp, "tcp", nil, "Port pairs, '<port>:<targetPort>' (repeatable or comma-separated).")
		fl.StringVar(&clusterIP, "clusterip", "", "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).")
	case "NodePort":
		fl.IntVar(&nodePort, "node-port", 0, "Port used to expose the service on each node in a cluster.")
		fl.StringSliceVar(&tcp, "tcp", nil, "Port pairs, '<port>:<targetPort>' (repeatable or comma-separated).")
	case "LoadBalancer":
		fl.StringSliceVar(&tcp, "tcp", nil, "Port pairs, '<port>:<targetPort>' (repeatable or comma-separated).")
	case "ExternalName":
		fl.StringSliceVar(&tcp, "tcp", nil, "Port pairs, '<port>:<targetPort>' (repeatable or comma-separated).")
		fl.StringVar(&externalName, "external-name", "", "External name of service.")
		_ = cmd.MarkFlagRequired("external-name")
	}
	o.addFlags(cmd)
	return cmd
}

func newQuotaCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var hard, scopes string
	cmd := &cobra.Command{
		Use:     "quota NAME [--hard=key1=value1,key2=value2] [--scopes=Scope1,Scope2] [--dry-run=server|client|none]",
		Aliases: []string{"resourcequota"},
		Short:   "Create a quota with the specified name",
		Long:    "Create a ResourceQuota with hard limits and scopes. With --dry-run=client -o yaml (or json) the output is byte for byte kubectl's.",
		Example: `  kdyn create quota my-quota --hard=cpu=1,memory=1G,pods=2,services=3,replicationcontrollers=2,resourcequotas=1,secrets=5,persistentvolumeclaims=10
  kdyn create quota best-effort --hard=pods=100 --scopes=BestEffort`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: quotaGVR, kind: "ResourceQuota", namespaced: true, failure: "failed to create quota: ",
				build: func(name, ns string) (*object, error) {
					var spec fields
					if hard != "" {
						list := map[string]string{}
						for _, stmt := range strings.Split(hard, ",") {
							parts := strings.Split(stmt, "=")
							if len(parts) != 2 {
								//lint:ignore ST1005 kubectl's words, capital included
								return nil, fmt.Errorf("Invalid argument syntax %v, expected <resource>=<value>", stmt)
							}
							q, err := resource.ParseQuantity(parts[1])
							if err != nil {
								return nil, err
							}
							list[parts[0]] = q.String()
						}
						spec = append(spec, field{"hard", list})
					}
					if scopes != "" {
						list := strings.Split(scopes, ",")
						for _, s := range list {
							if s == "" {
								return nil, errors.New(`invalid resource quota scope ""`)
							}
						}
						spec = append(spec, field{"scopes", list})
					}
					return &object{gvr: quotaGVR, kind: "ResourceQuota", name: name, namespace: ns,
						body: fields{{"spec", spec}, {"status", fields{}}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&hard, "hard", "", "A comma-delimited set of resource=quantity pairs that define a hard limit.")
	fl.StringVar(&scopes, "scopes", "", "A comma-delimited set of quota scopes that must all match each object tracked by the quota.")
	o.addFlags(cmd)
	return cmd
}

func newPriorityClassCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var value int32
	var globalDefault bool
	var description, preemption string
	cmd := &cobra.Command{
		Use:     "priorityclass NAME --value=VALUE --global-default=BOOL [--dry-run=server|client|none]",
		Aliases: []string{"pc"},
		Short:   "Create a priority class with the specified name",
		Long:    "Create a PriorityClass. With --dry-run=client -o yaml (or json) the output is byte for byte kubectl's.",
		Example: `  kdyn create priorityclass high-priority --value=1000 --description="high priority"
  kdyn create priorityclass default-priority --value=1000 --global-default=true`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: priorityClassGVR, kind: "PriorityClass", failure: "failed to create priorityclass: ",
				build: func(name, _ string) (*object, error) {
					body := fields{{"value", value}}
					if globalDefault {
						body = append(body, field{"globalDefault", true})
					}
					if description != "" {
						body = append(body, field{"description", description})
					}
					body = append(body, field{"preemptionPolicy", preemption})
					return &object{gvr: priorityClassGVR, kind: "PriorityClass", name: name, body: body}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.Int32Var(&value, "value", 0, "The value of this priority class.")
	fl.BoolVar(&globalDefault, "global-default", false, "Whether this PriorityClass is the default priority.")
	fl.StringVar(&description, "description", "", "When this priority class should be used.")
	fl.StringVar(&preemption, "preemption-policy", "PreemptLowerPriority", "The policy for preempting pods with lower priority.")
	o.addFlags(cmd)
	return cmd
}

// budgetValue is kubectl's check of --min-available and --max-unavailable.
var budgetValue = regexp.MustCompile(`^[0-9]+%?$`)

func newPDBCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var selector, minAvailable, maxUnavailable string
	cmd := &cobra.Command{
		Use:     "poddisruptionbudget NAME --selector=SELECTOR --min-available=N [--dry-run=server|client|none]",
		Aliases: []string{"pdb"},
		Short:   "Create a pod disruption budget with the specified name",
		Long:    "Create a PodDisruptionBudget for the pods a selector picks. With --dry-run=client -o yaml (or json) the output is byte for byte kubectl's.",
		Example: `  kdyn create pdb my-pdb --selector=app=rails --min-available=1
  kdyn create pdb my-pdb --selector=app=nginx --min-available=50%`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case selector == "":
				return errors.New("a selector must be specified")
			case maxUnavailable == "" && minAvailable == "":
				return errors.New("one of min-available or max-unavailable must be specified")
			case maxUnavailable != "" && minAvailable != "":
				return errors.New("min-available and max-unavailable cannot be both specified")
			case minAvailable != "" && !budgetValue.MatchString(minAvailable):
				return errors.New("invalid format specified for min-available")
			case maxUnavailable != "" && !budgetValue.MatchString(maxUnavailable):
				return errors.New("invalid format specified for max-unavailable")
			}
			sel, err := metav1.ParseToLabelSelector(selector)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: pdbGVR, kind: "PodDisruptionBudget", namespaced: true, failure: "failed to create poddisruptionbudgets: ",
				build: func(name, ns string) (*object, error) {
					var spec fields
					if minAvailable != "" {
						spec = append(spec, field{"minAvailable", intOrString(minAvailable)})
					}
					s := fields{}
					if len(sel.MatchLabels) > 0 {
						s = append(s, field{"matchLabels", sel.MatchLabels})
					}
					if len(sel.MatchExpressions) > 0 {
						var exprs []any
						for _, e := range sel.MatchExpressions {
							ex := fields{{"key", e.Key}, {"operator", string(e.Operator)}}
							if len(e.Values) > 0 {
								ex = append(ex, field{"values", e.Values})
							}
							exprs = append(exprs, ex)
						}
						s = append(s, field{"matchExpressions", exprs})
					}
					spec = append(spec, field{"selector", s})
					if maxUnavailable != "" {
						spec = append(spec, field{"maxUnavailable", intOrString(maxUnavailable)})
					}
					status := fields{{"disruptionsAllowed", 0}, {"currentHealthy", 0}, {"desiredHealthy", 0}, {"expectedPods", 0}}
					return &object{gvr: pdbGVR, kind: "PodDisruptionBudget", name: name, namespace: ns,
						body: fields{{"spec", spec}, {"status", status}}}, nil
				},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&minAvailable, "min-available", "", "The minimum number or percentage of available pods this budget requires.")
	fl.StringVar(&maxUnavailable, "max-unavailable", "", "The maximum number or percentage of unavailable pods this budget requires.")
	fl.StringVar(&selector, "selector", "", "A label selector to use for this budget.")
	o.addFlags(cmd)
	return cmd
}

// intOrString is a number when s is one, else s.
func intOrString(s string) any {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}
