package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// clientSideApplyManager is the field manager of client-side apply when
// --field-manager is not given.
const clientSideApplyManager = "kdyn-client-side-apply"

type applyOptions struct {
	manifests      cli.ManifestFlags
	serverSide     bool
	fieldManager   string
	forceConflicts bool
	dryRun         *cli.DryRunFlag
	output         string
	failFast       bool
	timeout        time.Duration
	selector       string
}

// NewApplyCommand returns "kdyn apply": server-side apply of manifests by
// default, client-side apply with --server-side=false.
func NewApplyCommand(f *cli.Factory) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to resources from files or stdin",
		Long: `Apply the objects of manifest files (YAML or JSON, many documents per file)
to the cluster, creating those that do not exist.

By default kdyn uses server-side apply: the server merges the manifest into
the live object and records kdyn (--field-manager) as the owner of the
fields it sets. A field that another manager owns is a conflict, which
--force-conflicts takes over. --server-side=false uses client-side apply
instead: the configuration applied is kept in the
kubectl.kubernetes.io/last-applied-configuration annotation, and each apply
sends a JSON merge patch computed from it, the new manifest and the live
object.

Namespaces and CustomResourceDefinitions are applied first, then the other
objects in file order; objects of a CRD applied in the same run wait (up to
--timeout) for it to be Established. A bad document or a failed object is
reported, naming its file and document, and the others are still applied
(unless --fail-fast); the exit code is then 1.`,
		Example: `  # Apply a manifest file, with server-side apply
  kdyn apply -f app.yaml

  # Apply every manifest of a directory tree; a CRD and its objects may sit side by side
  kdyn apply -f ./manifests -R

  # Take over fields another manager owns
  kdyn apply -f app.yaml --force-conflicts

  # Client-side apply, as older kubectl versions do
  kdyn apply -f app.yaml --server-side=false

  # Let the server check the manifests without storing anything
  kdyn apply -f app.yaml --dry-run=server

  # Apply from stdin and print what the server stored
  cat app.yaml | kdyn apply -f - -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runApply(cmd.Context(), f, o, cmd) },
	}
	o.manifests.AddFlags(cmd, "with the objects to apply")
	fl := cmd.Flags()
	fl.BoolVar(&o.serverSide, "server-side", true, "Use server-side apply; false uses client-side apply with the last-applied-configuration annotation.")
	fl.StringVar(&o.fieldManager, "field-manager", "kdyn", "The name of the manager that owns the applied fields.")
	fl.BoolVar(&o.forceConflicts, "force-conflicts", false, "With server-side apply, take over fields that other managers own.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	fl.StringVarP(&o.output, "output", "o", "", "Print the applied objects instead of a summary: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.failFast, "fail-fast", false, "Stop at the first document that fails, instead of applying the others.")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "How long to wait for a CustomResourceDefinition applied in this run to be Established before applying objects of its kind.")
	fl.StringVarP(&o.selector, "selector", "l", "", "Apply only the objects whose labels match this selector.")
	return cmd
}

func runApply(ctx context.Context, f *cli.Factory, o *applyOptions, cmd *cobra.Command) error {
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	if o.forceConflicts && !o.serverSide {
		return cli.Usagef("--force-conflicts only works with --server-side")
	}
	out, quiet, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	entries, err := cli.ReadEntries(f, &o.manifests, "apply")
	if err != nil {
		return err
	}
	if entries, err = cli.FilterManifests(entries, o.selector); err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no objects passed to apply: no document's labels match the selector %q", o.selector)
	}
	run := cli.ManifestOptions{
		Action: "applying", FieldManager: o.fieldManager, DryRun: dry,
		FailFast: o.failFast, TrackCRDs: true, CRDTimeout: o.timeout,
	}
	do := func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
		res, op, err := o.serverSideApply(ctx, t, dry)
		if err == nil {
			cli.Summary(f, quiet, t.Name, op+dry.Suffix())
		}
		return res, err
	}
	if o.serverSide {
		run.Hint = conflictHint
	} else {
		if !cmd.Flags().Changed("field-manager") {
			run.FieldManager = clientSideApplyManager
		}
		do = func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
			res, op, err := clientSideApply(ctx, t, dry)
			if err == nil {
				cli.Summary(f, quiet, t.Name, op+dry.Suffix())
			}
			return res, err
		}
	}
	r, err := cli.NewManifestRun(f, run)
	if err != nil {
		return err
	}
	results := r.Each(ctx, cli.ApplyOrder(entries), do)
	if quiet {
		if err := cli.PrintAppliedResults(f, out, results, len(entries) == 1); err != nil {
			return err
		}
	}
	return r.Finish()
}

// serverSideApply sends the manifest as an apply patch.
func (o *applyOptions) serverSideApply(ctx context.Context, t *cli.ManifestTarget, dry cli.DryRunMode) (*unstructured.Unstructured, string, error) {
	name := t.Obj.GetName()
	if name == "" {
		return nil, "", fmt.Errorf("the object has no metadata.name")
	}
	obj := cli.StripServerFields(t.Obj)
	if dry == cli.DryRunClient {
		return obj, "serverside-applied", nil
	}
	res, err := t.Resource.Apply(ctx, name, obj, metav1.ApplyOptions{Force: o.forceConflicts})
	return res, "serverside-applied", err
}

// conflictHint follows an apply conflict with the ways out.
func conflictHint(err error) string {
	if !apierrors.IsConflict(err) {
		return ""
	}
	return `The fields above are owned by other field managers. Either:
  * apply again with --force-conflicts to make this manager their owner, or
  * remove those fields from the manifest to leave them to their owners, or
  * set them to the values they have now, to share their ownership.
`
}

// clientSideApply creates the object (recording the configuration in the
// last-applied annotation) or patches it with a three-way JSON merge patch
// from the last applied configuration, the manifest and the live object.
func clientSideApply(ctx context.Context, t *cli.ManifestTarget, dry cli.DryRunMode) (*unstructured.Unstructured, string, error) {
	name := t.Obj.GetName()
	if name == "" {
		return nil, "", fmt.Errorf("the object has no metadata.name")
	}
	modified, err := withLastApplied(t.Obj)
	if err != nil {
		return nil, "", err
	}
	live, err := t.Resource.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if dry == cli.DryRunClient {
			return modified, "created", nil
		}
		res, err := t.Resource.Create(ctx, modified, metav1.CreateOptions{})
		return res, "created", err
	}
	if err != nil {
		return nil, "", err
	}
	modJSON, err := json.Marshal(modified.Object)
	if err != nil {
		return nil, "", err
	}
	liveJSON, err := json.Marshal(live.Object)
	if err != nil {
		return nil, "", err
	}
	last := live.GetAnnotations()[kunstructured.LastAppliedAnnotation]
	patch, err := kunstructured.ThreeWayMergePatch([]byte(last), modJSON, liveJSON)
	if err != nil {
		return nil, "", err
	}
	if string(patch) == "{}" {
		return live, "unchanged", nil
	}
	if dry == cli.DryRunClient {
		res, err := kunstructured.ApplyMergePatch(live, patch)
		return res, "configured", err
	}
	res, err := t.Resource.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, "", err
	}
	if dry == cli.DryRunNone && res.GetResourceVersion() == live.GetResourceVersion() {
		// The server found nothing to change (a list it defaults, sent whole).
		return res, "unchanged", nil
	}
	return res, "configured", nil
}

// withLastApplied returns the manifest, stripped of server fields, with
// the last-applied annotation set to its own JSON, encoded as kubectl
// encodes it so that both tools record the same bytes: the annotations
// without that one (an empty map, "annotations":{}, when there are no
// others) and a final newline.
func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mod := cli.StripServerFields(obj)
	ann := mod.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	delete(ann, kunstructured.LastAppliedAnnotation)
	mod.SetAnnotations(ann)
	cfg, err := json.Marshal(mod.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the configuration: %w", err)
	}
	ann[kunstructured.LastAppliedAnnotation] = string(cfg) + "\n"
	mod.SetAnnotations(ann)
	return mod, nil
}
