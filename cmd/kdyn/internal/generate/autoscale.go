package generate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/discovery"
)

var hpaGVR = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// NewAutoscaleCommand returns "kdyn autoscale": an autoscaling/v2
// HorizontalPodAutoscaler for objects with a scale subresource, as
// kubectl autoscale.
func NewAutoscaleCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	var manifests cli.ManifestFlags
	var minReplicas, maxReplicas, cpuPercent int32
	var cpu, memory, name string
	cmd := &cobra.Command{
		Use:   "autoscale (-f FILENAME | TYPE NAME | TYPE/NAME) [--min=MINPODS] --max=MAXPODS [--cpu=CPU] [--memory=MEMORY]",
		Short: "Auto-scale a deployment, replica set, stateful set, or replication controller",
		Long: `Create a HorizontalPodAutoscaler (autoscaling/v2) for objects whose kind has a
scale subresource, with CPU and memory targets: a percentage ("70%") is an
average utilization, a quantity ("500m", "200Mi"; a bare number is milli-CPU
or MiB) an average value. With --dry-run=client -o yaml (or json) the output
is byte for byte kubectl's.`,
		Example: `  # Between 2 and 10 pods, targeting 80% CPU
  kdyn autoscale deployment foo --min=2 --max=10 --cpu=80%

  # At most 5 pods, 500 milli-CPU and 200 MiB on average
  kdyn autoscale rc foo --max=5 --cpu=500m --memory=200Mi`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case maxReplicas < 1:
				return fmt.Errorf("--max=MAXPODS is required and must be at least 1, max: %d", maxReplicas)
			case maxReplicas < minReplicas:
				return fmt.Errorf("--max=MAXPODS must be larger or equal to --min=MINPODS, max: %d, min: %d", maxReplicas, minReplicas)
			case cpuPercent > 0 && cpu != "":
				return errors.New("--cpu-percent and --cpu are mutually exclusive")
			}
			var metrics []any
			if cpuPercent > 0 {
				metrics = append(metrics, resourceMetric("cpu", fields{{"type", "Utilization"}, {"averageUtilization", cpuPercent}}))
			}
			for _, m := range []struct{ name, value, unit string }{{"cpu", cpu, "m"}, {"memory", memory, "Mi"}} {
				if m.value == "" {
					continue
				}
				target, err := metricTarget(m.name, m.value, m.unit)
				if err != nil {
					return err
				}
				metrics = append(metrics, resourceMetric(m.name, target))
			}
			// kubectl says "created" for a client dry run, "autoscaled" else.
			done := "autoscaled"
			if dry, err := o.dryRun.Mode(); err == nil && dry == cli.DryRunClient {
				done = "created"
			}
			targets, err := scaleTargets(cmd.Context(), f, &manifests, args)
			if err != nil {
				return err
			}
			if len(targets) == 0 {
				return errors.New("no objects passed to autoscale")
			}
			for _, t := range targets {
				hpaName := name
				if hpaName == "" {
					hpaName = t.name
				}
				err := o.runNamed(cmd.Context(), f, hpaName, generator{gvr: hpaGVR, kind: "HorizontalPodAutoscaler", namespaced: true, done: done,
					build: func(name, ns string) (*object, error) {
						spec := fields{{"scaleTargetRef", fields{{"kind", t.kind}, {"name", t.name}, {"apiVersion", t.apiVersion}}}}
						if minReplicas > 0 {
							spec = append(spec, field{"minReplicas", minReplicas})
						}
						spec = append(spec, field{"maxReplicas", maxReplicas})
						if len(metrics) > 0 {
							spec = append(spec, field{"metrics", metrics})
						}
						return &object{gvr: hpaGVR, kind: "HorizontalPodAutoscaler", name: name, namespace: ns,
							body: fields{{"spec", spec}, {"status", fields{{"desiredReplicas", 0}, {"currentMetrics", nil}}}}}, nil
					}})
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	manifests.AddFlags(cmd, "with the objects to autoscale")
	fl := cmd.Flags()
	fl.Int32Var(&minReplicas, "min", -1, "The lower limit for the number of pods (the server's default when not given).")
	fl.Int32Var(&maxReplicas, "max", -1, "The upper limit for the number of pods. Required.")
	_ = cmd.MarkFlagRequired("max")
	fl.Int32Var(&cpuPercent, "cpu-percent", -1, "The target average CPU utilization, in percent of the requested CPU.")
	_ = fl.MarkDeprecated("cpu-percent", "use --cpu with percentage or resource quantity format (e.g., '70%' for utilization or '500m' for milliCPU).")
	fl.StringVar(&cpu, "cpu", "", `Target CPU: a percentage ("70%") for average utilization, a quantity ("500m"; a bare number is milli-CPU) for an average value.`)
	fl.StringVar(&memory, "memory", "", `Target memory: a percentage ("60%") for average utilization, a quantity ("200Mi"; a bare number is MiB) for an average value.`)
	fl.StringVar(&name, "name", "", "The name of the autoscaler (default: the object's).")
	o.addFlagsFor(cmd, "kubectl-autoscale")
	o.record = cli.AddRecordFlag(cmd)
	return cmd
}

func resourceMetric(name string, target fields) fields {
	return fields{{"type", "Resource"}, {"resource", fields{{"name", name}, {"target", target}}}}
}

// metricTarget parses --cpu or --memory as kubectl does.
func metricTarget(resourceName, input, unit string) (fields, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		return nil, errors.New("empty input")
	}
	if p, ok := strings.CutSuffix(input, "%"); ok {
		v, err := strconv.ParseInt(p, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("invalid percentage value: %s", p)
		}
		return fields{{"type", "Utilization"}, {"averageUtilization", int32(v)}}, nil
	}
	if v, err := strconv.ParseFloat(input, 64); err == nil {
		q, err := resource.ParseQuantity(fmt.Sprintf("%g%s", v, unit))
		if err != nil {
			return nil, err
		}
		return fields{{"type", "AverageValue"}, {"averageValue", q.String()}}, nil
	}
	q, err := resource.ParseQuantity(input)
	if err != nil {
		return nil, fmt.Errorf("invalid resource %s value: %s", resourceName, input)
	}
	return fields{{"type", "AverageValue"}, {"averageValue", q.String()}}, nil
}

// scaleTarget is an object an autoscaler scales.
type scaleTarget struct{ kind, name, apiVersion string }

// scaleTargets are the objects the arguments or -f name; each kind must
// have a scale subresource.
func scaleTargets(ctx context.Context, f *cli.Factory, manifests *cli.ManifestFlags, args []string) ([]scaleTarget, error) {
	var named []cli.Target
	if manifests.Given() {
		objs, err := cli.ManifestTargets(ctx, f, manifests, "autoscale")
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			named = append(named, o.Target)
		}
	} else {
		var err error
		if named, err = cli.ResolveObjects(ctx, f, args, cli.Selection{}); err != nil {
			return nil, err
		}
	}
	var out []scaleTarget
	for _, t := range named {
		res := t.Match.Resource
		if res == nil {
			// A manifest's kind is mapped without discovery's details.
			matches, err := f.Resolve(ctx, []string{t.Match.GVR.GroupResource().String()})
			if err != nil {
				return nil, err
			}
			if len(matches) > 0 {
				res = matches[0].Resource
			}
		}
		if res == nil || !slices.ContainsFunc(res.Subresources, func(s discovery.Subresource) bool { return s.Name == "scale" }) {
			return nil, fmt.Errorf("cannot autoscale a %s: the resource has no scale subresource", t.Match.GVK.Kind)
		}
		out = append(out, scaleTarget{kind: t.Match.GVK.Kind, name: t.Name, apiVersion: t.Match.GVK.GroupVersion().String()})
	}
	return out, nil
}
