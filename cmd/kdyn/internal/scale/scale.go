package scale

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
)

// fieldManager is recorded on the scale writes: the name the server gives
// kubectl's (which sends none, so the server names its user agent).
const fieldManager = "kubectl"

// conflictRetries bounds the read-check-write rounds of a conditional
// scale that keeps meeting conflicts.
const conflictRetries = 5

type options struct {
	manifests         cli.ManifestFlags
	replicas          int
	currentReplicas   int
	resourceVersion   string
	sel               cli.Selection
	output            string
	dryRun            *cli.DryRunFlag
	record            *cli.RecordFlag
	showManagedFields bool
}

// NewCommand returns "kdyn scale".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "scale [--resource-version=VERSION] [--current-replicas=COUNT] --replicas=COUNT (TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR | TYPE --all | -f FILENAME)",
		Short: "Set a new size for a deployment, replica set, stateful set or any resource with a scale subresource",
		Long: `Set the number of replicas of objects through their scale subresource:
Deployments, ReplicaSets, StatefulSets, ReplicationControllers, and custom
resources whose CRD declares a scale subresource.

Without a precondition the change is one merge patch of the scale
subresource, {"spec":{"replicas":N}}. With --current-replicas or
--resource-version, kdyn reads the scale first, checks the precondition,
and writes the scale back with the resourceVersion it read, so the check
still holds when the server applies it (a concurrent change makes the write
conflict; kdyn then reads and checks again).

The result is "deployment.apps/web scaled"; an object that fails is reported
and the others are still scaled (exit code 1).`,
		Example: `  # Scale a deployment to 3 replicas
  kdyn scale --replicas=3 deployment/web

  # Only if it has 2 replicas now
  kdyn scale --current-replicas=2 --replicas=3 deploy web

  # Several objects at once
  kdyn scale --replicas=5 rs/web-1 rs/web-2 statefulset/db

  # The objects of a manifest file
  kdyn scale --replicas=3 -f web.yaml

  # Every deployment labelled app=web
  kdyn scale deploy -l app=web --replicas=0

  # A custom resource with a scale subresource
  kdyn scale widgets.example.com/w1 --replicas=2

  # See what the server would do, without persisting
  kdyn scale deploy/web --replicas=10 --dry-run=server -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.IntVar(&o.replicas, "replicas", 0, "The new number of replicas. Required.")
	_ = cmd.MarkFlagRequired("replicas")
	fl.IntVar(&o.currentReplicas, "current-replicas", -1, "Precondition: scale only if the current number of replicas is this (-1, the default, for no condition).")
	fl.StringVar(&o.resourceVersion, "resource-version", "", "Precondition: scale only if the scale's resourceVersion is this (one object only).")
	fl.StringVarP(&o.sel.Selector, "selector", "l", "", "Label selector of the objects to scale (e.g. -l app=web).")
	fl.BoolVar(&o.sel.All, "all", false, "Scale every object of the given types in the namespace.")
	o.manifests.AddFlags(cmd, "naming the objects to scale")
	cli.AddOutputFlags(fl, &o.output, "Output format: name, json, yaml, jsonl, jsonpath=..., gjson=..., custom-columns=... (default: \"KIND/NAME scaled\").")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.record = cli.AddRecordFlag(cmd)
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	return cmd
}

func (o *options) validate() error {
	if o.replicas < 0 {
		return cli.Usagef("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
	}
	if o.currentReplicas < -1 {
		return cli.Usagef("The --current-replicas must specify an integer of -1 or greater")
	}
	return nil
}

func run(ctx context.Context, f *cli.Factory, o *options, args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, o.dryRun, o.output, o.showManagedFields)
	if err != nil {
		return err
	}
	s := &scaler{o: o, dry: dry, printObject: o.output != "" && o.output != "name"}
	if o.manifests.Given() {
		return s.fromManifests(ctx, f, p, args)
	}
	targets, err := cli.ResolveObjects(ctx, f, args, o.sel)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return errors.New("no objects passed to scale")
	}
	if o.resourceVersion != "" && len(targets) > 1 {
		return cli.Usagef("cannot use --resource-version with multiple resources")
	}
	client, err := f.WriteClient(fieldManager, dry)
	if err != nil {
		return err
	}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		obj, err := s.scaleOne(ctx, t.Resource(client), t.Name, t.Obj)
		if err == nil {
			err = p.Print(t.Match.GVK.GroupKind(), t.Name, "scaled", obj)
		}
		if err != nil {
			if len(targets) == 1 {
				return err
			}
			errs.Add(err)
		}
	}
	return errs.Result()
}

// fromManifests scales the objects that -f names. As kubectl's, -o prints
// the manifest's object (its namespace filled in), not the live one, with
// the new count.
func (s *scaler) fromManifests(ctx context.Context, f *cli.Factory, p *cli.ResultPrinter, args []string) error {
	if len(args) > 0 || s.o.sel.Selecting() {
		return cli.Usagef("-f names the objects to scale: give no TYPE, NAME, -l or --all with it")
	}
	entries, err := cli.ReadEntries(f, &s.o.manifests, "scale")
	if err != nil {
		return err
	}
	if s.o.resourceVersion != "" && len(entries) > 1 {
		return cli.Usagef("cannot use --resource-version with multiple resources")
	}
	r, err := cli.NewManifestRun(f, cli.ManifestOptions{Action: "scaling", FieldManager: fieldManager, DryRun: s.dry})
	if err != nil {
		return err
	}
	r.Each(ctx, entries, func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
		name := t.Obj.GetName()
		obj, err := s.scaleOne(ctx, t.Resource, name, t.Obj)
		if err != nil {
			return nil, err
		}
		return nil, p.Print(t.Mapping.GroupVersionKind.GroupKind(), name, "scaled", obj)
	})
	return r.Finish()
}

type scaler struct {
	o   *options
	dry cli.DryRunMode
	// printObject: -o prints the object, which is read first (kubectl
	// prints the object as read, its spec.replicas set to the result for
	// the built-in kinds).
	printObject bool
}

// scaleOne scales one object and returns the object to print (nil when
// only its name is printed).
// listed is the object as a selector listed it (nil: read it if needed).
func (s *scaler) scaleOne(ctx context.Context, rc dynamic.ResourceInterface, name string, listed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	if s.printObject || s.dry == cli.DryRunClient {
		obj = listed
		if obj == nil {
			var err error
			if obj, err = rc.Get(ctx, name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
		obj = obj.DeepCopy()
	}
	replicas := int64(s.o.replicas)
	if s.dry != cli.DryRunClient {
		var err error
		if replicas, err = s.write(ctx, rc, name); err != nil {
			return nil, err
		}
		if s.dry == cli.DryRunNone {
			if _, err := s.o.record.Patch(ctx, rc, name, metav1.PatchOptions{}); err != nil {
				return nil, fmt.Errorf("%s was scaled, but recording the change cause (--record) failed: %w", name, err)
			}
		}
	}
	if obj != nil {
		if gvk := obj.GroupVersionKind(); gvk.Group == "" || gvk.Group == "apps" {
			// Only there is spec.replicas sure to be the scale's field.
			if err := unstructured.SetNestedField(obj.Object, replicas, "spec", "replicas"); err != nil {
				return nil, err
			}
		}
	}
	return obj, nil
}

// write changes the scale subresource and returns the replicas the server
// answered with.
func (s *scaler) write(ctx context.Context, rc dynamic.ResourceInterface, name string) (int64, error) {
	if s.o.currentReplicas == -1 && s.o.resourceVersion == "" {
		patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, s.o.replicas)
		res, err := rc.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
		if err != nil {
			return 0, err
		}
		return specReplicas(res)
	}
	var err error
	for range conflictRetries {
		var res *unstructured.Unstructured
		if res, err = s.conditional(ctx, rc, name); err == nil {
			return specReplicas(res)
		}
		if !apierrors.IsConflict(err) {
			return 0, err
		}
	}
	return 0, err
}

// conditional reads the scale, checks the preconditions and writes it back
// with the new replicas and the resourceVersion read.
func (s *scaler) conditional(ctx context.Context, rc dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	sc, err := rc.Get(ctx, name, metav1.GetOptions{}, "scale")
	if err != nil {
		return nil, err
	}
	current, err := specReplicas(sc)
	if err != nil {
		return nil, err
	}
	if s.o.currentReplicas != -1 && current != int64(s.o.currentReplicas) {
		return nil, preconditionFailed("replicas", strconv.Itoa(s.o.currentReplicas), strconv.FormatInt(current, 10))
	}
	if rv := sc.GetResourceVersion(); s.o.resourceVersion != "" && rv != s.o.resourceVersion {
		return nil, preconditionFailed("resource version", s.o.resourceVersion, rv)
	}
	if err := unstructured.SetNestedField(sc.Object, int64(s.o.replicas), "spec", "replicas"); err != nil {
		return nil, err
	}
	return rc.Update(ctx, sc, metav1.UpdateOptions{}, "scale")
}

// specReplicas reads spec.replicas of a Scale (0 when unset, as the
// typed Scale has it).
func specReplicas(sc *unstructured.Unstructured) (int64, error) {
	v, _, err := unstructured.NestedFieldNoCopy(sc.Object, "spec", "replicas")
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return n, nil
	case float64:
		return int64(n), nil
	case json.Number:
		return n.Int64()
	}
	return 0, fmt.Errorf("spec.replicas of the scale of %s is %T, not a number", sc.GetName(), v)
}

// PreconditionError says that --current-replicas or --resource-version did
// not hold, in kubectl's words.
type PreconditionError struct {
	Precondition string // "replicas", "resource version"
	Expected     string
	Actual       string
}

// preconditionFailed is a *PreconditionError, a conflict for --exit-codes
// (exit code 4).
func preconditionFailed(what, expected, actual string) error {
	return &cli.ExitError{Code: cli.ExitConflict, Err: &PreconditionError{Precondition: what, Expected: expected, Actual: actual}}
}

// Error is kubectl's message: "Expected replicas to be 3, was 2".
func (e *PreconditionError) Error() string {
	return fmt.Sprintf("Expected %s to be %s, was %s", e.Precondition, e.Expected, e.Actual)
}
