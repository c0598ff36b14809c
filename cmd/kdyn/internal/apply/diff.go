package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// Exit codes of diff, kubectl's whatever --exit-codes says: 0 no
// differences, 1 differences, more than 1 an error.
const (
	diffExitChanged = 1
	diffExitError   = 2
)

type diffOptions struct {
	manifests    cli.ManifestFlags
	fieldManager string
	selector     string
	prune        pruneFlags
	serverSide   bool
	force        bool
}

// NewDiffCommand returns "kdyn diff -f": a unified diff of the live objects
// against what applying the manifests would make of them.
func NewDiffCommand(f *cli.Factory) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff -f FILENAME",
		Short: "Diff the live version against what would be applied",
		Long: `Show, as a unified diff, how applying the manifests would change the live
objects. For each object the server runs, in dry-run mode, what 'kdyn apply'
would send: by default a client-side apply (the JSON merge patch computed
from the last-applied-configuration annotation, the manifest and the live
object, or a create), with --server-side a server-side apply as field
manager --field-manager (which fails on fields other managers own unless
--force-conflicts). kdyn compares the server's answer with the live object
(an object that does not exist yet is compared with nothing). Both sides
leave out status and the metadata the server maintains (managedFields,
resourceVersion, generation, uid, creationTimestamp). The values of Secrets
are masked: "***" where they are equal, "*** (before)" and "*** (after)"
where they differ.

kdyn computes the diff itself; no diff program is needed. As with kubectl,
KUBECTL_EXTERNAL_DIFF names a program to use instead: kdyn writes each
object's two sides into a LIVE- and a MERGED- directory (a side where the
object does not exist has no file; names are GROUP.VERSION.KIND[.NAMESPACE].NAME)
and runs the program once with the two directories as its last arguments.
Words after the program's name are passed on when they consist only of
letters, digits, "-" and "=" (kubectl's rule; others are left out). The
program's exit code is diff's: it should follow the convention below.

Exit status (as kubectl's, with or without --exit-codes):
  0  no differences
  1  differences
  >1 kdyn failed (with --exit-codes, the code names the failure)`,
		Example: `  # What would applying this file change?
  kdyn diff -f app.yaml

  # A whole directory tree, from a CI job that fails on drift
  kdyn diff -f ./manifests -R || echo "drift or error: $?"

  # The same, shown by another program (here: diff -r, colour, side by side)
  KUBECTL_EXTERNAL_DIFF="diff -r -y --color=always" kdyn diff -f ./manifests -R

  # What would applying this kustomization change?
  kdyn diff -k overlays/prod

  # Also show what apply --prune would delete from the ApplySet, and its parent's change
  kdyn diff -f ./manifests -R --prune --applyset=web -n prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !o.serverSide && !cmd.Flags().Changed("field-manager") {
				o.fieldManager = clientSideApplyManager
			}
			return runDiff(cmd.Context(), f, o)
		},
	}
	o.manifests.AddFlags(cmd, "with the objects to compare")
	fl := cmd.Flags()
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl", "The field manager of the dry-run apply (client-side apply: kubectl-client-side-apply unless given).")
	fl.BoolVar(&o.serverSide, "server-side", false, "Compare with a server-side apply instead of a client-side apply.")
	fl.BoolVar(&o.force, "force-conflicts", false, "With --server-side, take over fields that other managers own instead of failing.")
	fl.StringVarP(&o.selector, "selector", "l", "", "Compare only the objects whose labels match this selector.")
	o.prune.addFlags(cmd, "Also show what apply --prune would delete (as removals): with --applyset the members of the ApplySet, and its parent's change; without, as kubectl's older --prune, the objects of the --prune-allowlist kinds that match -l (all with no -l) and were made by client-side apply.")
	return cmd
}

func runDiff(ctx context.Context, f *cli.Factory, o *diffOptions) error {
	code, err := diffManifests(ctx, f, o)
	if err != nil {
		cli.PrintError(f.Streams.ErrOut, err)
		return &cli.ExitError{Code: diffErrorCode(f, err), Silent: true}
	}
	if code != cli.ExitOK {
		return &cli.ExitError{Code: code, Silent: true}
	}
	return nil
}

// diffErrorCode is 2, or with --exit-codes the code that names err when it
// is above 1.
func diffErrorCode(f *cli.Factory, err error) int {
	if c := cli.FailureCode(f, err); c > diffExitChanged {
		return c
	}
	return diffExitError
}

func diffManifests(ctx context.Context, f *cli.Factory, o *diffOptions) (int, error) {
	entries, err := cli.ReadEntries(f, &o.manifests, "diff")
	if err != nil {
		return 0, err
	}
	if entries, err = cli.FilterManifests(entries, o.selector); err != nil {
		return 0, err
	}
	pruning, err := o.prune.check(o.selector, false)
	if err != nil {
		return 0, err
	}
	if o.force && !o.serverSide {
		return 0, cli.Usagef("--force-conflicts only works with --server-side")
	}
	r, err := cli.NewManifestRun(f, cli.ManifestOptions{Action: "diffing", FieldManager: o.fieldManager, DryRun: cli.DryRunServer})
	if err != nil {
		return 0, err
	}
	var set *pruneRun
	var legacy *legacyPrune
	switch pruning {
	case pruneLegacy:
		if legacy, err = newLegacyPrune(ctx, f, r, entries, o.prune.allowlist, o.selector, cli.DryRunServer, cli.DefaultConcurrency); err != nil {
			return 0, err
		}
	case pruneApplySet:
		if set, err = prepareApplySet(ctx, f, o.prune.applySet, r, entries, cli.DryRunServer, cli.DefaultConcurrency); err != nil {
			return 0, err
		}
	}
	d, err := newDiffer(f, os.Getenv)
	if err != nil {
		return 0, err
	}
	defer d.close()
	// kubectl diff computes client-side apply's patch with --overwrite.
	cs := &clientSide{schemas: newPatchSchemas(f), overwrite: true}
	r.Each(ctx, entries, func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
		live, merged, err := diffSides(ctx, t, cs, o.serverSide, o.force)
		if err != nil {
			return nil, err
		}
		return nil, addObjectDiff(d, diffFileName(t.Obj), live, merged)
	})
	if set != nil {
		if err := set.diff(ctx, f, r, d); err != nil {
			r.Fail(err)
		}
	}
	if legacy != nil {
		if err := legacy.diff(ctx, r, d); err != nil {
			r.Fail(err)
		}
	}
	code, err := d.finish()
	switch {
	case err != nil:
		return 0, err
	case r.Failures > 0:
		return diffErrorCode(f, r.FirstErr), nil
	}
	return code, nil
}

// diffSides returns the live object (nil when it does not exist) and what
// applying the manifest would make of it: a client-side apply, or with
// serverSide a server-side apply (forced with force). The run's client
// sends either as a server dry run under --field-manager.
func diffSides(ctx context.Context, t *cli.ManifestTarget, cs *clientSide, serverSide, force bool) (live, merged *unstructured.Unstructured, err error) {
	name := t.Obj.GetName()
	if name == "" {
		return nil, nil, errors.New("the object has no metadata.name")
	}
	if live, err = cs.get(ctx, t); err != nil {
		return nil, nil, err
	}
	if !serverSide {
		merged, _, err = cs.applyTo(ctx, t, live, cli.DryRunServer)
		return live, merged, err
	}
	merged, err = t.Resource.Apply(ctx, name, cli.StripServerFields(t.Obj), metav1.ApplyOptions{Force: force})
	return live, merged, err
}

// addObjectDiff gives d the two sides of one object (either may be nil:
// the object does not exist on that side) under the file name file.
func addObjectDiff(d *differ, file string, live, merged *unstructured.Unstructured) error {
	from, to, err := diffTexts(live, merged)
	if err != nil {
		return err
	}
	return d.add(file, from, to)
}

// diffTexts renders both sides as YAML for comparison: neat, without
// status, with Secret values masked.
func diffTexts(live, merged *unstructured.Unstructured) (from, to []byte, err error) {
	var l, m *unstructured.Unstructured
	if live != nil {
		l = kunstructured.Neat(live, kunstructured.NeatOptions{})
	}
	if merged != nil {
		m = kunstructured.Neat(merged, kunstructured.NeatOptions{})
	}
	maskSecrets(l, m)
	if from, err = objectYAML(l); err != nil {
		return nil, nil, err
	}
	to, err = objectYAML(m)
	return from, to, err
}

func objectYAML(obj *unstructured.Unstructured) ([]byte, error) {
	if obj == nil {
		return nil, nil
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(raw)
}

// diffFileName names an object the way kubectl diff names its files:
// "apps.v1.Deployment.prod.web", "v1.Namespace.prod".
func diffFileName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	parts := []string{}
	if gvk.Group != "" {
		parts = append(parts, gvk.Group)
	}
	parts = append(parts, gvk.Version, gvk.Kind)
	if ns := obj.GetNamespace(); ns != "" {
		parts = append(parts, ns)
	}
	parts = append(parts, obj.GetName())
	return strings.Join(parts, ".")
}

// maskSecrets replaces the values of a Secret's data and stringData on
// both sides (either may be nil) so that none is printed but a change
// still shows: equal values become "***", differing ones "*** (before)"
// and "*** (after)".
func maskSecrets(live, merged *unstructured.Unstructured) {
	isSecret := func(u *unstructured.Unstructured) bool {
		return u != nil && u.GroupVersionKind().Group == "" && u.GetKind() == "Secret"
	}
	if !isSecret(live) && !isSecret(merged) {
		return
	}
	for _, field := range []string{"data", "stringData"} {
		var from, to map[string]any
		if live != nil {
			from, _ = live.Object[field].(map[string]any)
		}
		if merged != nil {
			to, _ = merged.Object[field].(map[string]any)
		}
		for k, fv := range from {
			tv, ok := to[k]
			if ok && !jsonValueEqual(fv, tv) {
				from[k], to[k] = "*** (before)", "*** (after)"
				continue
			}
			from[k] = "***"
			if ok {
				to[k] = "***"
			}
		}
		for k := range to {
			if _, ok := from[k]; !ok {
				to[k] = "***"
			}
		}
	}
}

func jsonValueEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
