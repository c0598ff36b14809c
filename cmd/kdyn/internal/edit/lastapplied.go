package edit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// lastAppliedHeader heads the file of apply edit-last-applied, in
// kubectl's words.
const lastAppliedHeader = `# Please edit the 'last-applied-configuration' annotations below.
# Lines beginning with a '#' will be ignored, and an empty file will abort the edit.
#
`

// errNoLastApplied is kubectl's refusal when no object named has the
// annotation.
var errNoLastApplied = errors.New("no last-applied-configuration annotation found on resources, to create the annotation, use command `kubectl apply set-last-applied --create-annotation`")

// lastAppliedOptions are the flags of apply edit-last-applied.
type lastAppliedOptions struct {
	output             string
	fieldManager       string
	windowsLineEndings bool
	validate           *cli.ValidateFlag
	record             *cli.RecordFlag
	manifests          cli.ManifestFlags
}

// NewEditLastAppliedCommand returns "apply edit-last-applied": the
// last-applied-configuration annotations of objects, edited in the user's
// editor and written back, as kubectl's.
func NewEditLastAppliedCommand(f *cli.Factory) *cobra.Command {
	o := &lastAppliedOptions{}
	cmd := &cobra.Command{
		Use:   "edit-last-applied (RESOURCE/NAME | -f FILENAME)",
		Short: "Edit latest last-applied-configuration annotations of a resource/object",
		Long: `Edit the configuration the last client-side apply recorded on objects (the
kubectl.kubernetes.io/last-applied-configuration annotation) in your
editor, and write it back, as kubectl does: the live objects are left as
they are; only the annotation, which the next client-side apply compares
with, changes.

The editor is the one of 'kdyn edit' ($KUBE_EDITOR, else $EDITOR, else vi).
Several objects are edited together, as a List. The file is YAML, or JSON
with -o json; with -o the edited configurations are also printed in that
format instead of "KIND/NAME edited". A file that does not parse opens
again with the error at the top; a write the server refuses ends the edit,
your text kept in a temporary file whose name is printed. Objects without
the annotation are left out (set it with 'apply set-last-applied
--create-annotation').`,
		Example: `  # Edit the last-applied configuration of a deployment, in YAML
  kdyn apply edit-last-applied deployment/nginx

  # Of the objects of a manifest, in JSON
  kdyn apply edit-last-applied -f deploy.yaml -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEditLastApplied(cmd.Context(), f, o, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "", "The format to edit in, and to print the edited configurations in: yaml or json (default: edit YAML and print \"KIND/NAME edited\").")
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-client-side-apply", "Name of the manager recorded in managedFields for this change.")
	fl.BoolVar(&o.windowsLineEndings, "windows-line-endings", false, "Write the file to edit with Windows line endings (CRLF).")
	o.validate = cli.AddValidateFlag(cmd)
	o.record = cli.AddRecordFlag(cmd)
	o.manifests.AddFlags(cmd, "naming the objects whose configuration to edit")
	return cmd
}

// lastAppliedTargets are the objects the arguments or -f name, as kubectl
// takes them: TYPE/NAME..., TYPE NAME..., a TYPE alone for all its objects
// in the namespace, or the objects of the manifests.
func lastAppliedTargets(ctx context.Context, f *cli.Factory, o *lastAppliedOptions, args []string) ([]cli.Target, error) {
	switch {
	case o.manifests.Given():
		if len(args) > 0 {
			for _, a := range args {
				if strings.Contains(a, "/") {
					return nil, cli.Usagef("resource/name arguments cannot be provided when a path is specified")
				}
			}
			return nil, cli.FilesAndArgsError()
		}
		return cli.LiveManifestTargets(ctx, f, &o.manifests, "apply edit-last-applied")
	case len(args) == 0:
		return nil, cli.Usagef("%s", cli.NoResourcesMessage)
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		return cli.ResolveObjects(ctx, f, args, cli.Selection{All: true})
	}
	return cli.NamedTargets(ctx, f, args)
}

// decodeLastApplied parses an object's last-applied configuration.
func decodeLastApplied(t cli.Target, cfg string) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(cfg), &m); err != nil {
		return nil, fmt.Errorf("the last-applied configuration of %s is not JSON: %v", t.KindName(), err)
	}
	if m == nil {
		return nil, fmt.Errorf("the last-applied configuration of %s is not an object", t.KindName())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// lastAppliedItems are the objects of an edited file: a List's items, or
// the object itself.
func lastAppliedItems(obj *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	items, ok := obj.Object["items"].([]any)
	if !ok || !strings.HasSuffix(obj.GetKind(), "List") {
		return []*unstructured.Unstructured{obj}, nil
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errors.New("the List's items must be objects")
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, errors.New("each object must keep its apiVersion and kind")
		}
		out = append(out, u)
	}
	return out, nil
}

// lastAppliedEdit is one edited configuration: the object and its
// resource.
type lastAppliedEdit struct {
	obj     *unstructured.Unstructured
	mapping *meta.RESTMapping
}

// namespaced reports whether the edited object's resource is namespaced.
func (e lastAppliedEdit) namespaced() bool {
	return e.mapping.Scope.Name() == meta.RESTScopeNameNamespace
}

// kindName is the object's "KIND.GROUP/NAME".
func (e lastAppliedEdit) kindName() string {
	return printers.KindName(e.mapping.GroupVersionKind.GroupKind(), e.obj.GetName())
}

// runEditLastApplied reads the annotations of the objects named, edits
// them and writes back each configuration that changed.
func runEditLastApplied(ctx context.Context, f *cli.Factory, o *lastAppliedOptions, args []string) error {
	if _, err := o.validate.Directive(); err != nil {
		return err
	}
	editor, err := editorCommand(os.Getenv)
	if err != nil {
		return err
	}
	targets, err := lastAppliedTargets(ctx, f, o, args)
	if err != nil {
		return err
	}
	client, err := f.WriteClient(o.fieldManager, cli.DryRunNone)
	if err != nil {
		return err
	}
	if client, err = o.validate.Client(client); err != nil {
		return err
	}
	var originals []*unstructured.Unstructured
	for _, t := range targets {
		live := t.Obj
		if live == nil {
			if live, err = t.Resource(client).Get(ctx, t.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		cfg := live.GetAnnotations()[kunstructured.LastAppliedAnnotation]
		if cfg == "" {
			continue
		}
		obj, err := decodeLastApplied(t, cfg)
		if err != nil {
			return err
		}
		originals = append(originals, obj)
	}
	if len(originals) == 0 {
		return errNoLastApplied
	}
	// As kubectl, -o is both the format of the file and that of the
	// result; a format other than yaml and json fails only now.
	format := "yaml"
	switch o.output {
	case "", "yaml":
	case "json":
		format = "json"
	default:
		return cli.Usagef("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", o.output)
	}
	p, err := cli.NewResultPrinter(f.Streams.Out, o.output, false)
	if err != nil {
		return err
	}
	shown := originals[0]
	if len(originals) > 1 {
		items := make([]any, len(originals))
		for i, obj := range originals {
			items[i] = obj.Object
		}
		shown = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}}
	}
	mapper, err := f.RESTMapper()
	if err != nil {
		return err
	}
	var edits []lastAppliedEdit
	s := &objectEdit{
		f: f, editor: editor, format: format, header: lastAppliedHeader, crlf: o.windowsLineEndings,
		check: func(_, edited *unstructured.Unstructured) error {
			items, err := lastAppliedItems(edited)
			if err != nil {
				return err
			}
			edits = edits[:0]
			for _, it := range items {
				gvk := it.GroupVersionKind()
				m, err := mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
				if err != nil {
					//lint:ignore ST1005 kubectl's wording, which scripts may match
					return fmt.Errorf("The edited file had a syntax error: %v", err)
				}
				edits = append(edits, lastAppliedEdit{obj: it, mapping: m})
			}
			return nil
		},
		save: func(ctx context.Context, _ *unstructured.Unstructured) error {
			return saveLastApplied(ctx, f, o, client, p, originals, edits)
		},
	}
	_, err = s.run(ctx, shown)
	return err
}

// saveLastApplied writes the edited configurations back as kubectl does:
// each object, its namespace set to the command's (another one is
// refused, and nothing is written), becomes its annotation, patched onto
// the object it names, which it prints as "edited" (or, with -o, in that
// format). One whose configuration is its original's is "skipped"; as in
// kubectl, originals are matched by uid, which configurations seldom
// have, so each is then compared with the first original.
func saveLastApplied(ctx context.Context, f *cli.Factory, o *lastAppliedOptions, client dynamic.Interface, p *cli.ResultPrinter, originals []*unstructured.Unstructured, edits []lastAppliedEdit) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	for _, e := range edits {
		if !e.namespaced() {
			continue
		}
		switch got := e.obj.GetNamespace(); got {
		case "":
			e.obj.SetNamespace(ns)
		case ns:
		default:
			//lint:ignore ST1005 kubectl's words, period included
			return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", got, ns, got)
		}
	}
	cause := o.record.Cause()
	for _, e := range edits {
		cli.SetChangeCause(e.obj, cause)
	}
	for _, e := range edits {
		var original *unstructured.Unstructured
		for _, obj := range originals {
			if obj.GetUID() == e.obj.GetUID() {
				original = obj
				break
			}
		}
		if original == nil {
			return fmt.Errorf("no original object found for %s", e.kindName())
		}
		before, err := json.Marshal(original.Object)
		if err != nil {
			return err
		}
		after, err := json.Marshal(e.obj.Object)
		if err != nil {
			return err
		}
		gk := e.mapping.GroupVersionKind.GroupKind()
		if bytes.Equal(before, after) {
			if err := p.Print(gk, e.obj.GetName(), "skipped", e.obj); err != nil {
				return err
			}
			continue
		}
		// The annotation is the configuration's JSON with a newline, as
		// kubectl's encoder writes it.
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			kunstructured.LastAppliedAnnotation: string(after) + "\n"}}})
		if err != nil {
			return err
		}
		rc := client.Resource(e.mapping.Resource)
		var ri dynamic.ResourceInterface = rc
		if e.namespaced() {
			ri = rc.Namespace(ns)
		}
		if _, err := ri.Patch(ctx, e.obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
		if err := p.Print(gk, e.obj.GetName(), "edited", e.obj); err != nil {
			return err
		}
	}
	return nil
}
