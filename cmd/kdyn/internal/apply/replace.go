package apply

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/delete"
	"github.com/kdyn/kdyn/rest"
)

type replaceOptions struct {
	manifests    cli.ManifestFlags
	force        bool
	cascade      string
	gracePeriod  int
	timeout      time.Duration
	timeoutSet   bool // --timeout was given
	fieldManager string
	dryRun       *cli.DryRunFlag
	validate     *cli.ValidateFlag
	output       string
	saveConfig   bool
	failFast     bool
}

// NewReplaceCommand returns "kdyn replace -f": PUT each manifest whole, or
// with --force delete and create it again.
func NewReplaceCommand(f *cli.Factory) *cobra.Command {
	o := &replaceOptions{}
	cmd := &cobra.Command{
		Use:   "replace -f FILENAME",
		Short: "Replace resources by file name or stdin",
		Long: `Replace objects with the manifests of files: each object is sent whole (PUT),
so fields the manifest leaves out are cleared. The object must exist. A
manifest without metadata.resourceVersion replaces whatever version is live
(kdyn reads it first); one with a resourceVersion fails with a Conflict if the
object changed since.

--force deletes each object, waits until it is gone (up to --timeout), and
creates it again from the manifest.`,
		Example: `  # Replace the objects of a file
  kdyn replace -f app.yaml

  # Edit a live object offline and put it back
  kdyn get cm settings -o yaml > cm.yaml && vi cm.yaml && kdyn replace -f cm.yaml

  # Delete and recreate (for fields that cannot be changed in place)
  kdyn replace --force -f job.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.timeoutSet = cmd.Flags().Changed("timeout")
			return runReplace(cmd.Context(), f, o)
		},
	}
	o.manifests.AddFlags(cmd, "with the objects to replace")
	o.manifests.AddRawFlag(cmd, "PUT")
	fl := cmd.Flags()
	fl.BoolVar(&o.force, "force", false, "Delete the objects and create them again from the manifests.")
	fl.StringVar(&o.cascade, "cascade", "background", `With --force: what to do with dependents, "background", "foreground" or "orphan".`)
	fl.IntVar(&o.gracePeriod, "grace-period", -1, "With --force: seconds the objects are given to terminate (-1: their own default).")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "With --force: how long to wait for each object to be gone before creating it again.")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-replace", "The name of the manager recorded for the written fields.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.validate = cli.AddValidateFlag(cmd)
	cli.AddOutputFlags(fl, &o.output, "Print the stored objects instead of a summary: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.saveConfig, "save-config", false, "Record the configuration in the last-applied-configuration annotation, for a later client-side apply.")
	fl.BoolVar(&o.failFast, "fail-fast", false, "Stop at the first document that fails.")
	return cmd
}

func runReplace(ctx context.Context, f *cli.Factory, o *replaceOptions) error {
	if o.manifests.Raw != "" {
		if o.force || o.output != "" {
			return cli.Usagef("--raw cannot be used with --force or --output")
		}
		return o.manifests.SendRaw(ctx, f, http.MethodPut)
	}
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	// kubectl's checks, in its order and words.
	switch {
	case o.gracePeriod >= 0 && !o.force:
		return errors.New("--grace-period must have --force specified")
	case o.timeoutSet && !o.force:
		return errors.New("--timeout must have --force specified")
	case o.force && dry != cli.DryRunNone:
		return errors.New("--dry-run can not be used when --force is set")
	}
	validation, err := o.validate.Directive()
	if err != nil {
		return err
	}
	policy, err := delete.ParseCascade(f, o.cascade)
	if err != nil {
		return err
	}
	out, quiet, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	entries, err := cli.ReadEntries(f, &o.manifests, "replace")
	if err != nil {
		return err
	}
	r, err := cli.NewManifestRun(f, cli.ManifestOptions{
		Action: "replacing", FieldManager: o.fieldManager, DryRun: dry,
		FailFast: o.failFast, TrackCRDs: true, CRDTimeout: o.timeout,
		FieldValidation: validation,
	})
	if err != nil {
		return err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	results := r.Each(ctx, entries, func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
		name := t.Obj.GetName()
		if name == "" {
			return nil, errors.New("the object has no metadata.name")
		}
		obj := t.Obj.DeepCopy()
		if o.saveConfig {
			cfg, err := withLastApplied(t.Obj)
			if err != nil {
				return nil, err
			}
			obj.SetAnnotations(cfg.GetAnnotations())
		}
		var res *unstructured.Unstructured
		var err error
		if o.force {
			res, err = forceReplace(ctx, f, rc, t, obj, policy, o)
		} else {
			res, err = replaceOne(ctx, t, obj, dry)
		}
		if err != nil {
			return nil, err
		}
		cli.Summary(f, quiet, t.Name, "replaced"+dry.Suffix())
		return res, nil
	})
	if quiet {
		if err := cli.PrintResults(f, out, results, len(entries) == 1); err != nil {
			return err
		}
	}
	return r.Finish()
}

// replaceOne PUTs obj, filling in the live resourceVersion when the
// manifest has none.
func replaceOne(ctx context.Context, t *cli.ManifestTarget, obj *unstructured.Unstructured, dry cli.DryRunMode) (*unstructured.Unstructured, error) {
	if obj.GetResourceVersion() == "" || dry == cli.DryRunClient {
		live, err := t.Resource.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if obj.GetResourceVersion() == "" {
			obj.SetResourceVersion(live.GetResourceVersion())
		}
	}
	if dry == cli.DryRunClient {
		return obj, nil
	}
	return t.Resource.Update(ctx, obj, metav1.UpdateOptions{})
}

// forceReplace deletes the object, waits until it is gone, and creates it
// from obj.
func forceReplace(ctx context.Context, f *cli.Factory, rc *rest.Client, t *cli.ManifestTarget, obj *unstructured.Unstructured, policy metav1.DeletionPropagation, o *replaceOptions) (*unstructured.Unstructured, error) {
	item := &delete.Item{
		GVR: t.Mapping.Resource, GroupKind: t.Mapping.GroupVersionKind.GroupKind(), Namespaced: t.Namespaced(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(),
	}
	grace := o.gracePeriod
	uid, err := delete.Send(ctx, rc, item, policy, grace, cli.DryRunNone)
	switch {
	case apierrors.IsNotFound(err):
		// Nothing to delete: create it.
	case err != nil:
		return nil, err
	default:
		item.UID = uid
		fmt.Fprintln(f.Streams.Out, delete.DeletedLine(item, "deleted"))
		if err := delete.WaitDeleted(ctx, time.Now().Add(o.timeout), t.Resource, item, o.timeout, f.Streams.ErrOut); err != nil {
			return nil, err
		}
	}
	return t.Resource.Create(ctx, cli.StripServerFields(obj), metav1.CreateOptions{})
}
