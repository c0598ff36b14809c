package apply

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/edit"
)

type createOptions struct {
	manifests    cli.ManifestFlags
	fieldManager string
	dryRun       *cli.DryRunFlag
	record       *cli.RecordFlag
	validate     *cli.ValidateFlag
	output       string
	saveConfig   bool
	failFast     bool
	timeout      time.Duration
	selector     string
	// edit opens each object in the editor before it is created.
	edit, windowsLineEndings bool
}

// NewCreateCommand returns "kdyn create -f": create the objects of
// manifests; one that exists is an error.
func NewCreateCommand(f *cli.Factory) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create resources from files or stdin, or generate namespaces, config maps, secrets and service accounts",
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
  kdyn create -f app.yaml --dry-run=server

  # Generate an object instead (see the subcommands below)
  kdyn create configmap settings --from-file=conf/ --dry-run=client -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCreate(cmd.Context(), f, o) },
	}
	o.manifests.AddFlags(cmd, "with the objects to create")
	o.manifests.AddRawFlag(cmd, "POST")
	fl := cmd.Flags()
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-create", "The name of the manager recorded for the created fields.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.record = cli.AddRecordFlag(cmd)
	o.validate = cli.AddValidateFlag(cmd)
	cli.AddOutputFlags(fl, &o.output, "Print the created objects instead of a summary: name, json, yaml (or any object output of get).")
	fl.BoolVar(&o.saveConfig, "save-config", false, "Record the configuration in the last-applied-configuration annotation, for a later client-side apply.")
	fl.BoolVar(&o.failFast, "fail-fast", false, "Stop at the first document that fails.")
	fl.StringVarP(&o.selector, "selector", "l", "", "Create only the objects whose labels match this selector.")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "How long to wait for a CustomResourceDefinition created in this run to be Established.")
	fl.BoolVar(&o.edit, "edit", false, "Open each object in the editor ($KUBE_EDITOR, else $EDITOR, else vi) before creating it; saving it unchanged skips it. With -o json it is edited as JSON.")
	fl.BoolVar(&o.windowsLineEndings, "windows-line-endings", false, "With --edit, write the file to edit with Windows line endings (CRLF).")
	return cmd
}

func runCreate(ctx context.Context, f *cli.Factory, o *createOptions) error {
	if o.manifests.Raw != "" {
		if o.edit {
			return errors.New("--raw and --edit are mutually exclusive")
		}
		if o.output != "" {
			return cli.Usagef("--raw and --output are mutually exclusive")
		}
		return o.manifests.SendRaw(ctx, f, http.MethodPost)
	}
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	validation, err := o.validate.Directive()
	if err != nil {
		return err
	}
	out, quiet, err := cli.WriteOutput(o.output)
	if err != nil {
		return err
	}
	entries, err := cli.ReadEntries(f, &o.manifests, "create")
	if err != nil {
		return err
	}
	if o.edit {
		if entries, err = editEntries(ctx, f, o, entries); err != nil || len(entries) == 0 {
			return err
		}
	}
	o.record.AnnotateEntries(entries)
	if entries, err = cli.FilterManifests(entries, o.selector); err != nil {
		return err
	}
	r, err := cli.NewManifestRun(f, cli.ManifestOptions{
		Action: "creating", FieldManager: o.fieldManager, DryRun: dry,
		FailFast: o.failFast, TrackCRDs: true, CRDTimeout: o.timeout,
		FieldValidation: validation,
	})
	if err != nil {
		return err
	}
	results := r.Each(ctx, cli.ApplyOrder(entries), func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
		obj := cli.StripServerFields(t.Obj)
		var err error
		if o.saveConfig {
			if obj, err = withLastApplied(t.Obj); err != nil {
				return nil, err
			}
		}
		res := obj
		if dry != cli.DryRunClient {
			if res, err = t.Resource.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		}
		// The server may have generated the name (metadata.generateName).
		cli.Summary(f, quiet, cli.TargetName(res), "created"+dry.Suffix())
		return res, nil
	})
	if quiet {
		if err := cli.PrintResults(f, out, results, len(entries) == 1); err != nil {
			return err
		}
	}
	return r.Finish()
}

// editEntries is create --edit: each object in the editor, one after the
// other, as kubectl opens them; an object saved unchanged (or empty) is
// left out. The edited objects are created afterwards, all of them as
// create creates manifests (kubectl creates each right after its edit and
// reopens the editor when the server refuses it).
func editEntries(ctx context.Context, f *cli.Factory, o *createOptions, entries []*cli.ManifestEntry) ([]*cli.ManifestEntry, error) {
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	kept := entries[:0]
	for _, e := range entries {
		if e.Err() != nil {
			kept = append(kept, e)
			continue
		}
		obj := e.Object()
		if obj.GetNamespace() == "" {
			// The object is shown in the namespace it will be created
			// in, as kubectl shows it.
			gvk := obj.GroupVersionKind()
			if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil && m.Scope.Name() == meta.RESTScopeNameNamespace {
				obj = obj.DeepCopy()
				obj.SetNamespace(ns)
			}
		}
		obj, ok, err := edit.BeforeCreate(ctx, f, obj, o.output, o.windowsLineEndings)
		if err != nil {
			return nil, err
		}
		if ok {
			e.SetObject(obj)
			kept = append(kept, e)
		}
	}
	return kept, nil
}
