package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// newViewLastAppliedCommand returns "apply view-last-applied": the
// configuration client-side apply recorded on objects, as YAML or JSON.
func newViewLastAppliedCommand(f *cli.Factory) *cobra.Command {
	var manifests cli.ManifestFlags
	var sel cli.Selection
	output := "yaml"
	cmd := &cobra.Command{
		Use:   "view-last-applied (TYPE [NAME | -l label] | TYPE/NAME | -f FILENAME)",
		Short: "View the latest last-applied-configuration annotations of a resource/object",
		Long: `Print the configuration the last client-side apply recorded on objects (the
kubectl.kubernetes.io/last-applied-configuration annotation), as YAML
(default) or JSON. Objects without one print nothing.`,
		Example: `  kdyn apply view-last-applied deploy/nginx
  kdyn apply view-last-applied -f deploy.yaml -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return cli.Usagef("Unexpected -o output mode: %s, the flag 'output' must be one of yaml|json", output)
			}
			objs, err := liveObjects(cmd.Context(), f, &manifests, args, sel)
			if err != nil {
				return err
			}
			for _, obj := range objs {
				cfg := obj.GetAnnotations()[kunstructured.LastAppliedAnnotation]
				if cfg == "" {
					if manifests.Given() {
						return fmt.Errorf("no last-applied-configuration annotation found on resource: %s", obj.GetName())
					}
					continue
				}
				if output == "json" {
					var b bytes.Buffer
					if err := json.Indent(&b, []byte(cfg), "", "  "); err != nil {
						return err
					}
					fmt.Fprint(f.Streams.Out, b.String())
					continue
				}
				y, err := yaml.JSONToYAML([]byte(cfg))
				if err != nil {
					return err
				}
				fmt.Fprint(f.Streams.Out, string(y))
			}
			return nil
		},
	}
	manifests.AddFlags(cmd, "with the objects to show")
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "yaml", "Output format: yaml or json.")
	fl.StringVarP(&sel.Selector, "selector", "l", "", "Label selector of the objects.")
	fl.BoolVar(&sel.All, "all", false, "Every object of the given types in the namespace.")
	return cmd
}

// liveObjects reads the objects that -f or the arguments name.
func liveObjects(ctx context.Context, f *cli.Factory, manifests *cli.ManifestFlags, args []string, sel cli.Selection) ([]*unstructured.Unstructured, error) {
	client, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	if manifests.Given() {
		if len(args) > 0 {
			return nil, cli.FilesAndArgsError()
		}
		entries, err := cli.ReadEntries(f, manifests, "view-last-applied")
		if err != nil {
			return nil, err
		}
		r, err := cli.NewManifestRun(f, cli.ManifestOptions{Action: "reading"})
		if err != nil {
			return nil, err
		}
		r.Each(ctx, entries, func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
			obj, err := t.Resource.Get(ctx, t.Obj.GetName(), metav1.GetOptions{})
			if err == nil {
				out = append(out, obj)
			}
			return nil, err
		})
		return out, r.Finish()
	}
	targets, err := cli.ResolveObjects(ctx, f, args, sel)
	if err != nil {
		return nil, err
	}
	for _, t := range targets {
		obj := t.Obj
		if obj == nil {
			if obj, err = client.Resource(t.Match.GVR).Namespace(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

// newSetLastAppliedCommand returns "apply set-last-applied": record a
// manifest as the last-applied configuration of the live object, without
// changing anything else.
func newSetLastAppliedCommand(f *cli.Factory) *cobra.Command {
	var manifests cli.ManifestFlags
	var createAnnotation bool
	var output string
	var dryRun *cli.DryRunFlag
	cmd := &cobra.Command{
		Use:   "set-last-applied -f FILENAME",
		Short: "Set the last-applied-configuration annotation on a live object to match the contents of a file",
		Long: `Record the manifests of -f as the configuration the last client-side apply
applied to their live objects (the kubectl.kubernetes.io/last-applied-
configuration annotation), as if "apply -f" had been run, without changing
any other field. An object without the annotation needs --create-annotation.`,
		Example: `  kdyn apply set-last-applied -f deploy.yaml
  kdyn apply set-last-applied -f deploy.yaml --create-annotation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if !manifests.Given() {
				return cli.Usagef("Must specify --filename")
			}
			dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, dryRun, output, false)
			if err != nil {
				return err
			}
			entries, err := cli.ReadEntries(f, &manifests, "set-last-applied")
			if err != nil {
				return err
			}
			r, err := cli.NewManifestRun(f, cli.ManifestOptions{Action: "setting the last-applied configuration of", DryRun: dry})
			if err != nil {
				return err
			}
			r.Each(ctx, entries, func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
				live, err := t.Resource.Get(ctx, t.Obj.GetName(), metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				current, had := live.GetAnnotations()[kunstructured.LastAppliedAnnotation]
				if !had && !createAnnotation {
					return nil, fmt.Errorf("no last-applied-configuration annotation found on resource: %s, to create the annotation, run the command with --create-annotation", live.GetName())
				}
				// kubectl records the manifest as read (its namespace set),
				// unlike apply, which drops the annotation and adds an
				// empty map.
				cfg, err := json.Marshal(t.Obj.Object)
				if err != nil {
					return nil, err
				}
				want := string(cfg) + "\n"
				if current == want {
					fmt.Fprintf(f.Streams.Out, "set-last-applied %s: no changes required.\n", live.GetName())
					return nil, nil
				}
				patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{kunstructured.LastAppliedAnnotation: want}}})
				if err != nil {
					return nil, err
				}
				res := live
				if dry == cli.DryRunClient {
					if res, err = kunstructured.ApplyMergePatch(live, patch); err != nil {
						return nil, err
					}
				} else if res, err = t.Resource.Patch(ctx, live.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					return nil, err
				}
				return res, p.Print(t.Mapping.GroupVersionKind.GroupKind(), live.GetName(), "configured", res)
			})
			return r.Finish()
		},
	}
	manifests.AddFlags(cmd, "with the configurations to record")
	fl := cmd.Flags()
	fl.BoolVar(&createAnnotation, "create-annotation", false, "Create the annotation on objects that have none.")
	cli.AddOutputFlags(fl, &output, "Output format: name, json, yaml, ... (default: \"KIND/NAME configured\").")
	dryRun = cli.AddDryRunFlag(cmd, true)
	return cmd
}
