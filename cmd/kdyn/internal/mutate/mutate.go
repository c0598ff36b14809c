package mutate

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// Options are the flags every mutation has.
type Options struct {
	Sel               cli.Selection
	Output            string
	DryRun            *cli.DryRunFlag
	FieldManager      string
	ShowManagedFields bool
	// Subresource, when set, receives the patch (certificate signing
	// requests' "approval").
	Subresource string
	// Manifests (-f) name the objects by the manifests' kinds and names;
	// with Local the manifests' objects themselves are changed and printed,
	// and nothing is sent.
	Manifests cli.ManifestFlags
	Local     bool
	// Record, on the commands that have --record, writes the change
	// cause on each object the change changes.
	Record *cli.RecordFlag
	// QuietEmpty says nothing when a selector picks no object (cordon
	// and uncordon, as kubectl's).
	QuietEmpty bool
}

// recorded is change, also writing the change cause (--record) on an
// object it changes.
func (o *Options) recorded(change Change) Change {
	cause := o.Record.Cause()
	if cause == "" {
		return change
	}
	return func(obj *unstructured.Unstructured) (Result, error) {
		res, err := change(obj)
		if err == nil && res.Changed {
			cli.SetChangeCause(obj, cause)
		}
		return res, err
	}
}

// AddManifestFlags adds -f, -R, -k and --local, as kubectl's set commands
// have them.
func (o *Options) AddManifestFlags(cmd *cobra.Command) {
	o.Manifests.AddFlags(cmd, "with the objects to change")
	cmd.Flags().BoolVar(&o.Local, "local", false, "Change the objects of -f and print them, without contacting the server.")
}

// AddFlags adds -o/--template, --dry-run, --field-manager,
// --show-managed-fields and, when selectors, -l, --all and -A.
func (o *Options) AddFlags(cmd *cobra.Command, fieldManager string, selectors bool) {
	fl := cmd.Flags()
	cli.AddOutputFlags(fl, &o.Output, "Output format: name, json, yaml, jsonpath=..., go-template=... (default: \"KIND/NAME <what was done>\").")
	o.DryRun = cli.AddDryRunFlag(cmd, true)
	fl.StringVar(&o.FieldManager, "field-manager", fieldManager, "Name of the manager recorded in managedFields for this change.")
	fl.BoolVar(&o.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	if selectors {
		fl.StringVarP(&o.Sel.Selector, "selector", "l", "", "Label selector of the objects to change (e.g. -l app=web).")
		fl.BoolVar(&o.Sel.All, "all", false, "Change every object of the given types in the namespace.")
		fl.BoolVarP(&o.Sel.AllNamespaces, "all-namespaces", "A", false, "With -l or --all, in every namespace.")
	}
}

// Result is what a Change did to one object.
type Result struct {
	// Op is printed after KIND/NAME ("cordoned", "image updated"); ""
	// prints nothing for this object.
	Op string
	// Changed sends the change; an object changed in nothing is printed
	// (when Op is set) but not sent.
	Changed bool
	// Errs are failures that do not stop the change (a container name
	// that matched nothing beside one that did), reported after it.
	Errs []error
}

// Change changes obj in place.
type Change func(obj *unstructured.Unstructured) (Result, error)

// conflictRetries bounds the re-reads after a Conflict.
const conflictRetries = 5

// Run applies change to each object args and the selectors name.
func Run(ctx context.Context, f *cli.Factory, o *Options, args []string, change Change) error {
	dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, o.DryRun, o.Output, o.ShowManagedFields)
	if err != nil {
		return err
	}
	change = o.recorded(change)
	var targets []cli.Target
	switch {
	case o.Local:
		if !o.Manifests.Given() {
			//lint:ignore ST1005 kubectl's words, period included
			return errors.New("you must specify resources by --filename when --local is set.")
		}
		if dry == cli.DryRunServer {
			return errors.New("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
		}
		return local(f, o, p, change)
	case o.Manifests.Given():
		if len(args) > 0 {
			return cli.FilesAndArgsError()
		}
		if targets, err = cli.LiveManifestTargets(ctx, f, &o.Manifests, "set"); err != nil {
			return err
		}
	default:
		if targets, err = cli.ResolveObjects(ctx, f, args, o.Sel); err != nil {
			return err
		}
	}
	if len(targets) == 0 {
		ns, _, _ := f.Namespace()
		if o.QuietEmpty {
			return nil
		}
		if o.Sel.AllNamespaces || ns == "" {
			fmt.Fprintln(f.Streams.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(f.Streams.ErrOut, "No resources found in %s namespace.\n", ns)
		}
		return nil
	}
	client, err := f.WriteClient(o.FieldManager, dry)
	if err != nil {
		return err
	}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		err := one(ctx, p, dry, client.Resource(t.Match.GVR).Namespace(t.Namespace), t, change, o.Subresource)
		if err != nil {
			if len(targets) == 1 {
				return err
			}
			errs.Add(err)
		}
	}
	return errs.Result()
}

// local changes the objects of the manifests and prints them.
func local(f *cli.Factory, o *Options, p *cli.ResultPrinter, change Change) error {
	entries, err := cli.ReadEntries(f, &o.Manifests, "set")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := e.Err(); err != nil {
			return fmt.Errorf("%s: %w", e.Where(), err)
		}
		obj := e.Object().DeepCopy()
		res, err := change(obj)
		if err != nil {
			return err
		}
		if res.Op != "" {
			if err := p.Print(obj.GroupVersionKind().GroupKind(), obj.GetName(), res.Op, obj); err != nil {
				return err
			}
		}
		if err := errors.Join(res.Errs...); err != nil {
			return err
		}
	}
	return nil
}

// client is what one needs of a resource client.
type client interface {
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
}

func one(ctx context.Context, p *cli.ResultPrinter, dry cli.DryRunMode, rc client, t cli.Target, change Change, subresource string) error {
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	obj := t.Obj
	for attempt := 0; ; attempt++ {
		if obj == nil || attempt > 0 {
			var err error
			if obj, err = rc.Get(ctx, t.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		modified := obj.DeepCopy()
		res, err := change(modified)
		if err != nil {
			return err
		}
		if !res.Changed || dry == cli.DryRunClient {
			if res.Op != "" {
				if err := p.Print(t.Match.GVK.GroupKind(), t.Name, res.Op, modified); err != nil {
					return err
				}
			}
			return errors.Join(res.Errs...)
		}
		patch, err := preconditioned(obj, modified)
		if err != nil {
			return err
		}
		out, err := rc.Patch(ctx, t.Name, types.MergePatchType, patch, metav1.PatchOptions{}, sub...)
		if apierrors.IsConflict(err) && attempt < conflictRetries {
			continue
		}
		if err != nil {
			return err
		}
		if res.Op != "" {
			if err := p.Print(t.Match.GVK.GroupKind(), t.Name, res.Op, out); err != nil {
				return err
			}
		}
		return errors.Join(res.Errs...)
	}
}

// preconditioned is the merge patch from original to modified, with
// original's resourceVersion so the server refuses it after another change.
func preconditioned(original, modified *unstructured.Unstructured) ([]byte, error) {
	patch, err := kunstructured.MergePatch(original, modified)
	if err != nil {
		return nil, err
	}
	// A resourceVersion the change set itself (--resource-version) stays;
	// otherwise the one read.
	return cli.PatchResourceVersion(patch, original.GetResourceVersion(), false)
}
