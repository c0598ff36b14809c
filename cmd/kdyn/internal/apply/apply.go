package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/delete"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/edit"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// clientSideApplyManager is the field manager of client-side apply when
// --field-manager is not given.
const clientSideApplyManager = "kubectl-client-side-apply"

type applyOptions struct {
	manifests  cli.ManifestFlags
	serverSide bool
	// errOut receives the warnings of the server-side apply migration.
	errOut         io.Writer
	fieldManager   string
	forceConflicts bool
	dryRun         *cli.DryRunFlag
	record         *cli.RecordFlag
	validate       *cli.ValidateFlag
	output         string
	failFast       bool
	timeout        time.Duration
	selector       string
	wait           bool
	concurrency    int
	prune          pruneFlags
	subresource    string
	overwrite      bool
	force          bool
	gracePeriod    int64
}

// applyFunc sends one object and prints its summary line to out.
type applyFunc func(ctx context.Context, t *cli.ManifestTarget, out io.Writer) (*unstructured.Unstructured, error)

// NewApplyCommand returns "kdyn apply": client-side apply of manifests by
// default, as kubectl's, server-side apply with --server-side.
func NewApplyCommand(f *cli.Factory) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILENAME",
		Short: "Apply a configuration to resources from files or stdin",
		Long: `Apply the objects of manifest files (YAML or JSON, many documents per file)
to the cluster, creating those that do not exist.

By default kdyn uses client-side apply, as kubectl does: the configuration
applied is kept in the kubectl.kubernetes.io/last-applied-configuration
annotation, and each apply sends a patch computed from it, the new manifest
and the live object, so a field another client changed (replicas after a
scale) is left alone unless the manifest changes it. As kubectl's, the patch
is a strategic merge patch for the built-in kinds (lists such as containers
merge by their keys; a Deployment strategy that becomes Recreate drops its
rollingUpdate) and a JSON merge patch for custom resources. A manifest that
carries a resourceVersion is applied only to that version of the object
(Conflict otherwise); --force deletes and creates an object whose patch the
server refuses. --server-side
uses server-side apply instead: the server merges the manifest into the live
object and records kdyn (--field-manager) as the owner of the fields it
sets; a field that another manager owns is a conflict, which
--force-conflicts takes over. To make server-side apply the default, set it
in kubectl's preferences file, kuberc (~/.kube/kuberc, or the file $KUBERC
or --kuberc names), as for kubectl:

  apiVersion: kubectl.config.k8s.io/v1beta1
  kind: Preference
  defaults:
  - command: apply
    options:
    - name: server-side
      default: "true"

Namespaces and CustomResourceDefinitions are applied first, one by one;
objects of a CRD applied in the same run wait (up to --timeout) for it to be
Established. Then --concurrency objects at a time: ServiceAccounts, Secrets,
ConfigMaps, quotas, limit ranges, volumes and claims, classes and roles
first, then the rest. The results are printed in file order. Every document
is read before any is sent: one that does not parse (bad YAML or JSON, no
kind) stops the command with kubectl's message ("error parsing FILE: …")
and nothing is applied — stricter than kubectl, which applies the documents
before the bad one. A failed object is reported, naming its file and
document, and the others are still applied (unless --fail-fast, which also
sends one at a time); the exit code is then 1.

The server checks the fields of every object (--validate=strict, as
kubectl): an unknown or duplicate field is an error naming the field and
the document. --validate=warn stores the object without it and prints the
server's warning; --validate=ignore drops it silently. (Server-side apply
refuses unknown fields whatever --validate says.)

--prune --applyset=[RESOURCE][.GROUP]/NAME applies the manifests as an
ApplySet (KEP-3659), as "KUBECTL_APPLYSET=true kubectl apply --prune
--applyset" does, and then deletes the set's members that they no longer
declare. The parent object (a Secret when only NAME is given, or a
ConfigMap, in the namespace of -n; or a custom resource whose CRD has the
label applyset.kubernetes.io/is-parent-type) records the set: the label
applyset.kubernetes.io/id, and the annotations applyset.kubernetes.io/tooling
(kdyn/<version>), contains-group-kinds and additional-namespaces. Every
object gets the label applyset.kubernetes.io/part-of. Pruning lists only
the kinds and namespaces the parent records, only objects with that label,
and deletes those not in the manifests (with their UID as a precondition).
The sets kdyn writes are kubectl's, byte for byte but for the tooling
value, and each tool refuses the other's set: kdyn stops, before applying
anything, when the parent is managed by another tool (kubectl offers no
override, nor does kdyn). kdyn creates a missing Secret or ConfigMap
parent; a custom resource parent must exist and carry the set's id label
and the tooling and contains-group-kinds annotations, as kubectl requires.
When anything fails, nothing more is pruned than was, the parent keeps
listing both the old and the new kinds, and a summary on stderr names what
was applied, what was pruned and what was left.

--prune without --applyset is kubectl's older pruning: after every document
was applied, it deletes the objects of the --prune-allowlist kinds (by
default kubectl's list of common built-in kinds) in the namespaces applied
to, and the cluster-scoped ones, that match -l (or every one with --all),
carry the last-applied-configuration annotation and are not in the
manifests. It cannot tell the objects of these manifests from others
applied with the same labels: prefer an ApplySet.

With --wait, kdyn then waits (up to --timeout) until every object it applied
is ready, by the rules of 'kdyn wait --for=ready' (kstatus's: Deployments
rolled out, Jobs complete, CRDs Established, custom resources Ready, ...),
watching them rather than polling, and prints "KIND/NAME ready" for each.
On timeout it names every object not ready with its status and why, and
exits 1 (7 with --exit-codes).`,
		Example: `  # Apply a manifest file (client-side apply, as kubectl)
  kdyn apply -f app.yaml

  # The same with server-side apply
  kdyn apply -f app.yaml --server-side

  # Apply every manifest of a directory tree; a CRD and its objects may sit side by side
  kdyn apply -f ./manifests -R

  # Apply a kustomization (what 'kdyn kustomize overlays/prod' prints)
  kdyn apply -k overlays/prod

  # Server-side apply, taking over fields another manager owns
  kdyn apply -f app.yaml --server-side --force-conflicts

  # Let the server check the manifests without storing anything
  kdyn apply -f app.yaml --dry-run=server

  # Apply, then wait up to 5 minutes for everything applied to be ready
  kdyn apply -f app.yaml --wait --timeout=5m

  # Apply a directory as an ApplySet whose parent is the Secret "web" in prod,
  # deleting what a previous apply created and the files no longer declare
  kdyn apply -f ./manifests -R -n prod --prune --applyset=web

  # The same with a ConfigMap parent, or a cluster-scoped custom resource parent
  kdyn apply -f ./manifests -R -n prod --prune --applyset=configmaps/web
  kdyn apply -f ./platform -R --prune --applyset=clustersets.example.com/platform

  # kubectl's older pruning: by label, among kubectl's default kinds
  kdyn apply -f ./manifests -R -n prod --prune -l app=web

  # See what would be pruned first
  kdyn diff -f ./manifests -R -n prod --prune --applyset=web
  kdyn apply -f ./manifests -R -n prod --prune --applyset=web --dry-run=server

  # Accept unknown fields with a warning instead of failing
  kdyn apply -f app.yaml --validate=warn

  # Apply from stdin and print what the server stored
  cat app.yaml | kdyn apply -f - -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runApply(cmd.Context(), f, o, cmd) },
	}
	o.manifests.AddFlags(cmd, "with the objects to apply")
	fl := cmd.Flags()
	fl.BoolVar(&o.serverSide, "server-side", false, "Use server-side apply instead of client-side apply (which keeps the last-applied-configuration annotation).")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl", "The name of the manager that owns the applied fields.")
	fl.BoolVar(&o.forceConflicts, "force-conflicts", false, "With server-side apply, take over fields that other managers own.")
	fl.StringVar(&o.subresource, "subresource", "", "With --server-side, apply to this subresource of the objects (status or scale).")
	fl.BoolVar(&o.overwrite, "overwrite", true, "Let the manifest override changes made to live objects since the last apply, where the two differ.")
	fl.BoolVar(&o.force, "force", false, "When the server refuses the patch (a conflict, or a change it does not allow, such as to an immutable field), delete the object and create it from the manifest; if that fails, the old object is created again.")
	fl.Int64Var(&o.gracePeriod, "grace-period", -1, "With --force, the deletion's grace period in seconds (-1: the object's own).")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.record = cli.AddRecordFlag(cmd)
	o.validate = cli.AddValidateFlag(cmd)
	cli.AddOutputFlags(fl, &o.output, "Print the applied objects instead of a summary: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.failFast, "fail-fast", false, "Stop at the first document that fails, instead of applying the others.")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "How long to wait for a CustomResourceDefinition applied in this run to be Established before applying objects of its kind, and with --wait for the applied objects to be ready.")
	fl.BoolVar(&o.wait, "wait", false, "After applying, wait (up to --timeout) until every applied object is ready, as 'kdyn wait --for=ready' does.")
	fl.StringVarP(&o.selector, "selector", "l", "", "Apply only the objects whose labels match this selector.")
	fl.IntVar(&o.concurrency, "concurrency", cli.DefaultConcurrency, "How many objects are sent at once (Namespaces and CRDs first, one by one; then ServiceAccounts, Secrets, ConfigMaps, roles and the like; then the rest). 1 sends them one by one, in order.")
	o.prune.addFlags(cmd, "After applying, delete what the manifests no longer declare: the members of the ApplySet of --applyset; without --applyset, as kubectl's older --prune, the objects of the --prune-allowlist kinds in the namespaces applied to (and cluster-scoped ones) that match -l (every one with --all) and were made by client-side apply.")
	fl.BoolVar(&o.prune.all, "all", false, "With --prune and no --applyset: consider every object of the allowlisted kinds, not only those -l selects.")
	cmd.AddCommand(newViewLastAppliedCommand(f), newSetLastAppliedCommand(f), edit.NewEditLastAppliedCommand(f))
	return cmd
}

func runApply(ctx context.Context, f *cli.Factory, o *applyOptions, cmd *cobra.Command) error {
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	validation, err := o.validate.Directive()
	if err != nil {
		return err
	}
	if o.force && o.serverSide {
		return cli.Usagef("--force cannot be used with --server-side")
	}
	if o.force && dry != cli.DryRunNone {
		return cli.Usagef("--dry-run can not be used when --force is set")
	}
	if o.forceConflicts && !o.serverSide {
		return cli.Usagef("--force-conflicts only works with --server-side")
	}
	if o.subresource != "" && !o.serverSide {
		return cli.Usagef("--subresource can only be specified for --server-side")
	}
	if o.wait && dry != cli.DryRunNone {
		return cli.Usagef("--wait cannot be used with --dry-run: nothing is applied to wait for")
	}
	pruning, err := o.prune.check(o.selector, true)
	if err != nil {
		return err
	}
	if pruning == pruneLegacy && o.serverSide {
		return cli.Usagef("--prune is in alpha and doesn't currently work on objects created by server-side apply")
	}
	if o.concurrency < 1 {
		return cli.Usagef("--concurrency must be at least 1, not %d", o.concurrency)
	}
	out, quiet, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	entries, err := cli.ReadEntries(f, &o.manifests, "apply")
	if err != nil {
		return err
	}
	o.record.AnnotateEntries(entries)
	if entries, err = cli.FilterManifests(entries, o.selector); err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no objects passed to apply: no document's labels match the selector %q", o.selector)
	}
	o.errOut = f.Streams.ErrOut
	run := cli.ManifestOptions{
		Action: "applying", FieldManager: o.fieldManager, DryRun: dry,
		FailFast: o.failFast, TrackCRDs: true, CRDTimeout: o.timeout,
		FieldValidation: validation, Bulk: true,
	}
	do := func(ctx context.Context, t *cli.ManifestTarget, out io.Writer) (*unstructured.Unstructured, error) {
		res, op, err := o.serverSideApply(ctx, t, dry)
		if err == nil {
			cli.SummaryTo(out, quiet, t.Name, op+dry.Suffix())
		}
		return res, err
	}
	if o.serverSide {
		run.Hint = conflictHint
	} else {
		if !cmd.Flags().Changed("field-manager") {
			run.FieldManager = clientSideApplyManager
		}
		cs := &clientSide{schemas: newPatchSchemas(f), overwrite: o.overwrite, force: o.force, grace: o.gracePeriod, timeout: o.timeout, notes: f.Streams.ErrOut}
		do = func(ctx context.Context, t *cli.ManifestTarget, out io.Writer) (*unstructured.Unstructured, error) {
			res, op, err := cs.apply(ctx, t, dry)
			if err == nil {
				cli.SummaryTo(out, quiet, t.Name, op+dry.Suffix())
			}
			return res, err
		}
	}
	r, err := cli.NewManifestRun(f, run)
	if err != nil {
		return err
	}
	var applied appliedObjects
	if o.wait {
		do = applied.record(do)
	}
	var set *pruneRun
	var legacy *legacyPrune
	switch pruning {
	case pruneApplySet:
		if set, err = startApplySet(ctx, f, o.prune.applySet, r, entries, dry, validation, o.concurrency); err != nil {
			return err
		}
		do = set.track(do)
	case pruneLegacy:
		if legacy, err = newLegacyPrune(ctx, f, r, entries, o.prune.allowlist, o.selector, dry, o.concurrency); err != nil {
			return err
		}
	}
	results := r.EachConcurrent(ctx, cli.ApplyOrder(entries), o.concurrency, do)
	if quiet {
		if err := cli.PrintAppliedResults(f, out, results, len(entries) == 1); err != nil {
			return err
		}
	}
	if set != nil {
		// A prune that fails stops here: the objects to wait for are no
		// longer the whole set.
		if err := set.finish(ctx, r, out, quiet); err != nil {
			return err
		}
	}
	if legacy != nil {
		if err := legacy.finish(ctx, f, r, out, quiet); err != nil {
			return err
		}
	}
	if o.wait {
		if err := applied.wait(ctx, f, o.timeout, quiet); err != nil {
			r.Fail(err)
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
	var sub []string
	if o.subresource != "" {
		sub = []string{o.subresource}
	}
	opts := metav1.ApplyOptions{Force: o.forceConflicts}
	res, err := t.Resource.Apply(ctx, name, obj, opts, sub...)
	if err != nil || o.subresource != "" {
		return res, "serverside-applied", err
	}
	// An object last written by client-side apply is migrated, as kubectl
	// migrates it, so that a field the manifest drops goes.
	return migrateToServerSide(ctx, o.errOut, t, res, o.fieldManager, obj, opts), "serverside-applied", nil
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

// clientSide is how client-side apply computes and sends its patches, as
// kubectl's: a strategic merge patch for kinds whose OpenAPI v3 PATCH takes
// one (the built-in kinds), a JSON merge patch for the others (custom
// resources); a patch refused with a Conflict is computed again against
// the object as it is now, up to maxPatchTries times, and with force a
// patch still refused (Conflict or Invalid) deletes the object and creates
// it from the manifest, putting the old one back if that fails.
type clientSide struct {
	schemas *patchSchemas
	// overwrite lets the patch override changes made to the live object
	// since the last apply where they differ from the manifest.
	overwrite bool
	force     bool
	// grace is the deletion's grace period with force (-1: the
	// object's own); timeout bounds the wait for it to be gone.
	grace   int64
	timeout time.Duration
	// notes receives what the wait for a deletion says while it is slow.
	notes io.Writer
}

// maxPatchTries is how many times a patch refused with a Conflict is sent
// (each time computed against the object as read again), as kubectl's.
const maxPatchTries = 5

// apply creates the object (recording the configuration in the
// last-applied annotation) or patches it from the last applied
// configuration, as kubectl apply does.
func (c *clientSide) apply(ctx context.Context, t *cli.ManifestTarget, dry cli.DryRunMode) (*unstructured.Unstructured, string, error) {
	name := t.Obj.GetName()
	if name == "" {
		return nil, "", fmt.Errorf("the object has no metadata.name")
	}
	if dry != cli.DryRunClient {
		// Create first: a new object costs one request instead of a GET
		// and a POST. One that exists (or that this user may patch but
		// not create) goes the way kubectl goes.
		modified, err := forCreate(t.Obj)
		if err != nil {
			return nil, "", err
		}
		res, err := t.Resource.Create(ctx, modified, metav1.CreateOptions{})
		if err == nil {
			return res, "created", nil
		}
		if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
			return nil, "", err
		}
	}
	live, err := c.get(ctx, t)
	if err != nil {
		return nil, "", err
	}
	res, op, err := c.applyTo(ctx, t, live, dry)
	for try := 1; try < maxPatchTries && apierrors.IsConflict(err) && dry != cli.DryRunClient; try++ {
		if try > 1 {
			select {
			case <-ctx.Done():
				return nil, "", ctx.Err()
			case <-time.After(time.Second):
			}
		}
		if live, err = c.get(ctx, t); err != nil {
			return nil, "", err
		}
		res, op, err = c.applyTo(ctx, t, live, dry)
	}
	if err != nil && c.force && live != nil && dry == cli.DryRunNone && (apierrors.IsConflict(err) || apierrors.IsInvalid(err)) {
		return c.replace(ctx, t, live)
	}
	return res, op, err
}

// get reads the live object; nil when it does not exist.
func (c *clientSide) get(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
	live, err := t.Resource.Get(ctx, t.Obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// replace is --force's way out of a patch the server refuses: delete the
// object, wait until it is gone, create it from the manifest; if that
// fails, create the old object again and return the failure.
func (c *clientSide) replace(ctx context.Context, t *cli.ManifestTarget, live *unstructured.Unstructured) (*unstructured.Unstructured, string, error) {
	name := t.Obj.GetName()
	opts := metav1.DeleteOptions{}
	if c.grace >= 0 {
		opts.GracePeriodSeconds = &c.grace
	}
	if err := t.Resource.Delete(ctx, name, opts); err != nil && !apierrors.IsNotFound(err) {
		return nil, "", err
	}
	item := &delete.Item{GVR: t.Mapping.Resource, GroupKind: t.Mapping.GroupVersionKind.GroupKind(), Namespaced: t.Namespaced(),
		Namespace: live.GetNamespace(), Name: name, UID: live.GetUID()}
	if err := delete.WaitDeleted(ctx, time.Now().Add(c.timeout), t.Resource, item, c.timeout, c.notes); err != nil {
		return nil, "", fmt.Errorf("%s was deleted to be created again (--force), and nothing was created: %w", t.Name, err)
	}
	modified, err := forCreate(t.Obj)
	if err != nil {
		return nil, "", err
	}
	res, err := t.Resource.Create(ctx, modified, metav1.CreateOptions{})
	if err == nil {
		return res, "configured", nil
	}
	old := cli.StripServerFields(live)
	if _, rerr := t.Resource.Create(ctx, old, metav1.CreateOptions{}); rerr != nil {
		return nil, "", fmt.Errorf("%w; it was deleted to be created again (--force), and creating the old object again failed too: %v", err, rerr)
	}
	return nil, "", err
}

// applyTo patches the live object already read (nil: it does not exist:
// it is created) from the last applied configuration.
func (c *clientSide) applyTo(ctx context.Context, t *cli.ManifestTarget, live *unstructured.Unstructured, dry cli.DryRunMode) (*unstructured.Unstructured, string, error) {
	name := t.Obj.GetName()
	if live == nil {
		created, err := forCreate(t.Obj)
		if err != nil || dry == cli.DryRunClient {
			return created, "created", err
		}
		res, err := t.Resource.Create(ctx, created, metav1.CreateOptions{})
		return res, "created", err
	}
	modified, err := withLastApplied(t.Obj)
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
	last := []byte(live.GetAnnotations()[kunstructured.LastAppliedAnnotation])
	pt := types.MergePatchType
	var meta strategicpatch.LookupPatchMeta
	if c.schemas != nil {
		if meta, err = c.schemas.lookup(ctx, t.Obj.GroupVersionKind()); err != nil {
			return nil, "", fmt.Errorf("%w (client-side apply needs the schema to compute a strategic merge patch; --server-side does not)", err)
		}
	}
	var patch []byte
	if meta != nil {
		pt = types.StrategicMergePatchType
		patch, err = strategicpatch.CreateThreeWayMergePatch(last, modJSON, liveJSON, meta, c.overwrite)
	} else {
		patch, err = kunstructured.ThreeWayMergePatch(last, modJSON, liveJSON)
	}
	if err != nil {
		return nil, "", fmt.Errorf("computing the patch of %s: %w", t.Name, err)
	}
	if string(patch) == "{}" {
		return live, "unchanged", nil
	}
	if rv := t.Obj.GetResourceVersion(); rv != "" {
		// The manifest names the version it was written against: the
		// server refuses the patch (Conflict) if the object has changed
		// since, as it refuses kubectl's.
		if patch, err = cli.PatchResourceVersion(patch, rv, true); err != nil {
			return nil, "", err
		}
	}
	if dry == cli.DryRunClient {
		if meta == nil {
			res, err := kunstructured.ApplyMergePatch(live, patch)
			return res, "configured", err
		}
		var pm map[string]any
		if err := json.Unmarshal(patch, &pm); err != nil {
			return nil, "", err
		}
		res, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(live.DeepCopy().Object, pm, meta)
		return &unstructured.Unstructured{Object: res}, "configured", err
	}
	res, err := t.Resource.Patch(ctx, name, pt, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, "", err
	}
	if dry == cli.DryRunNone && res.GetResourceVersion() == live.GetResourceVersion() {
		// The server found nothing to change (a list it defaults, sent whole).
		return res, "unchanged", nil
	}
	return res, "configured", nil
}

// forCreate is the manifest as client-side apply creates it: with the
// last-applied annotation (which keeps the manifest's nulls), and without
// its null fields, as kubectl sends it, so that a create stores what an
// update of the same manifest would (a null quantity would be decoded as
// 0; a patch deletes the field).
func forCreate(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mod, err := withLastApplied(obj)
	if err != nil {
		return nil, err
	}
	pruneNulls(mod.Object)
	return mod, nil
}

// pruneNulls deletes the null values of maps, at every depth (list
// elements stay).
func pruneNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		maps.DeleteFunc(x, func(_ string, e any) bool { return e == nil })
		for _, e := range x {
			pruneNulls(e)
		}
	case []any:
		for _, e := range x {
			pruneNulls(e)
		}
	}
}

// withLastApplied returns the manifest, stripped of server fields, with
// the last-applied annotation recorded as kubectl records it
// (cli.SetLastApplied).
func withLastApplied(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	mod := cli.StripServerFields(obj)
	if err := cli.SetLastApplied(mod); err != nil {
		return nil, err
	}
	return mod, nil
}
