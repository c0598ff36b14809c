package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type createOptions struct {
	manifests    manifestFlags
	fieldManager string
	dryRun       string
	output       string
	saveConfig   bool
	failFast     bool
	timeout      time.Duration
}

func newCreateCommand(f *factory) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create resources from files or stdin",
		Long: `Create the objects of manifest files (YAML or JSON). An object that already
exists is an error (AlreadyExists); use apply to create or update.

Namespaces and CustomResourceDefinitions are created first, and objects of
a CRD created in the same run wait for it to be Established. A failed
document is reported with its file and document, and the others are still
created (unless --fail-fast).`,
		Example: `  # Create the objects of a file
  kdyn create -f app.yaml

  # Create from stdin and print the stored objects' names
  cat app.yaml | kdyn create -f - -o name

  # Check with the server without storing anything
  kdyn create -f app.yaml --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCreate(cmd.Context(), f, o) },
	}
	o.manifests.addFlags(cmd, "with the objects to create")
	fl := cmd.Flags()
	fl.StringVar(&o.fieldManager, "field-manager", "kdyn", "The name of the manager recorded for the created fields.")
	addDryRunFlag(cmd, &o.dryRun)
	fl.StringVarP(&o.output, "output", "o", "", "Print the created objects instead of a summary: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.saveConfig, "save-config", false, "Record the configuration in the last-applied-configuration annotation, for a later client-side apply.")
	fl.BoolVar(&o.failFast, "fail-fast", false, "Stop at the first document that fails.")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "How long to wait for a CustomResourceDefinition created in this run to be Established.")
	return cmd
}

func runCreate(ctx context.Context, f *factory, o *createOptions) error {
	dry, err := parseDryRun(o.dryRun)
	if err != nil {
		return err
	}
	out, quiet, err := writeOutput(o.output)
	if err != nil {
		return err
	}
	entries, err := readEntries(f, &o.manifests, "create")
	if err != nil {
		return err
	}
	r, err := newManifestRun(f, "creating")
	if err != nil {
		return err
	}
	r.dryRun, r.failFast, r.crdTimeout = dry, o.failFast, o.timeout
	r.trackCRDs = true
	results := r.each(ctx, applyOrder(entries), func(ctx context.Context, t *manifestTarget) (*unstructured.Unstructured, error) {
		obj := stripServerFields(t.obj)
		var err error
		if o.saveConfig {
			if obj, err = withLastApplied(t.obj); err != nil {
				return nil, err
			}
		}
		res := obj
		if dry != dryRunClient {
			if res, err = t.ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: o.fieldManager, DryRun: dry.server()}); err != nil {
				return nil, err
			}
		}
		// The server may have generated the name (metadata.generateName).
		summary(f, quiet, targetName(res), "created"+dry.suffix())
		return res, nil
	})
	if quiet {
		if err := printResults(f, out, results, len(entries) == 1); err != nil {
			return err
		}
	}
	return r.finish()
}
