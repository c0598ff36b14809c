package edit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// metaField describes the metadata map that label or annotate changes;
// the two commands share one implementation.
type metaField struct {
	field   string // "labels", "annotations"
	noun    string // "label", "annotation"
	command string // "label", "annotate"
	done    string // "labeled", "annotated"
	file    string // the file name in kubectl's --local errors: "pod", "rsrc"
}

var (
	labelsField      = metaField{field: "labels", noun: "label", command: "label", done: "labeled", file: "pod"}
	annotationsField = metaField{field: "annotations", noun: "annotation", command: "annotate", done: "annotated", file: "rsrc"}
)

// kubectl's wording for what a label command did.
const (
	msgLabeled       = "labeled"
	msgUnlabeled     = "unlabeled"
	msgLabelsChanged = "label(s) changed"
	msgNotLabeled    = "not labeled"
)

type metaOptions struct {
	mf              metaField
	overwrite       bool
	list            bool
	resourceVersion string
	sel             cli.Selection
	output          string
	fieldManager    string
	dryRun          *cli.DryRunFlag
	record          *cli.RecordFlag
	// showManagedFields keeps managedFields in json and yaml output.
	showManagedFields bool
	// manifests (-f) name the objects; with local the manifests' objects
	// themselves are changed and printed, and nothing is sent.
	manifests cli.ManifestFlags
	local     bool
}

// NewLabelCommand returns "kdyn label".
func NewLabelCommand(f *cli.Factory) *cobra.Command {
	cmd := newMetaCommand(f, labelsField)
	cmd.Short = "Update the labels on a resource"
	cmd.Long = fmt.Sprintf(`Add, change or remove labels of one or more objects.

KEY=VALUE sets a label and KEY- removes one. A key is an optional DNS
subdomain prefix and "/" followed by a name of at most 63 characters; a value
is at most %d characters; both begin and end with a letter or digit and may
hold letters, digits, '-', '_' and '.'. They are checked before anything is
sent.

Changing a label that already has another value needs --overwrite. The change
is sent as a JSON merge patch of metadata.labels holding only the keys that
change (null for removed ones), so other labels are untouched even if they
change meanwhile. With --resource-version the patch carries that
resourceVersion, and fails with a conflict if the object has changed since.`, validation.LabelValueMaxLength)
	cmd.Example = `  # Add a label
  kdyn label pods web-0 tier=frontend

  # Change a label that already has a value
  kdyn label --overwrite deploy/web tier=backend

  # Remove a label
  kdyn label cm settings tier-

  # Label every ConfigMap with app=web, in every namespace
  kdyn label cm -l app=web -A audited=true

  # Only if the object is still at resourceVersion 1234
  kdyn label cm settings owner=team-a --resource-version=1234

  # Print the labels of an object
  kdyn label cm settings --list`
	return cmd
}

// NewAnnotateCommand returns "kdyn annotate".
func NewAnnotateCommand(f *cli.Factory) *cobra.Command {
	cmd := newMetaCommand(f, annotationsField)
	cmd.Short = "Update the annotations on a resource"
	cmd.Long = `Add, change or remove annotations of one or more objects.

KEY=VALUE sets an annotation (the value may hold any text, "=" included) and
KEY- removes one. Keys have the form of label keys: an optional DNS subdomain
prefix and "/" followed by a name of at most 63 characters.

Changing an annotation that already has another value needs --overwrite. The
change is sent as a JSON merge patch of metadata.annotations holding only the
keys that change (null for removed ones). With --resource-version the patch
carries that resourceVersion, and fails with a conflict if the object has
changed since.`
	cmd.Example = `  # Add an annotation
  kdyn annotate deploy web description='the storefront'

  # Change an annotation that already has a value
  kdyn annotate --overwrite cm settings owner=team-b

  # Remove an annotation
  kdyn annotate cm settings owner-

  # Annotate every ConfigMap of a namespace
  kdyn annotate cm --all -n prod reviewed=2024-05-01

  # Print the annotations of an object
  kdyn annotate cm settings --list`
	return cmd
}

func newMetaCommand(f *cli.Factory, mf metaField) *cobra.Command {
	o := &metaOptions{mf: mf}
	cmd := &cobra.Command{
		Use:  fmt.Sprintf("%s [--overwrite] (TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR | TYPE --all) KEY_1=VAL_1 ... KEY_N=VAL_N [KEY-] [--resource-version=VERSION]", mf.command),
		RunE: func(cmd *cobra.Command, args []string) error { return runMeta(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.overwrite, "overwrite", false, fmt.Sprintf("Allow changing %ss that already have a value; without it such a change is refused.", mf.noun))
	fl.BoolVar(&o.list, "list", false, fmt.Sprintf("Print the %ss of the objects (key=value lines) instead of changing them.", mf.noun))
	fl.StringVar(&o.resourceVersion, "resource-version", "", "Change the object only if this is its current resourceVersion (one object only).")
	fl.StringVarP(&o.sel.Selector, "selector", "l", "", "Label selector of the objects to change (e.g. -l app=web,tier!=db).")
	fl.StringVar(&o.sel.FieldSelector, "field-selector", "", "Field selector of the objects to change (e.g. --field-selector metadata.name=web).")
	fl.BoolVar(&o.sel.All, "all", false, "Change every object of the given types in the namespace.")
	fl.BoolVarP(&o.sel.AllNamespaces, "all-namespaces", "A", false, "With -l or --all, select objects in every namespace.")
	cli.AddOutputFlags(fl, &o.output, fmt.Sprintf("Output format: name, json, yaml, jsonl, jsonpath=..., gjson=..., custom-columns=... (default: \"KIND/NAME %s\").", mf.done))
	fl.StringVar(&o.fieldManager, "field-manager", "kubectl-"+mf.command, "Name of the manager recorded in managedFields for this change.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	o.record = cli.AddRecordFlag(cmd)
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	o.manifests.AddFlags(cmd, "with the objects to "+mf.command)
	fl.BoolVar(&o.local, "local", false, fmt.Sprintf("Change the %ss of the objects of -f and print them, without contacting the server.", mf.noun))
	return cmd
}

// splitMetaArgs separates resource arguments from KEY=VALUE and KEY-
// arguments, which must come after every resource.
func splitMetaArgs(args []string, mf metaField) (resources, pairs []string, err error) {
	for _, a := range args {
		if strings.Contains(a, "=") || (len(a) > 1 && strings.HasSuffix(a, "-")) {
			pairs = append(pairs, a)
			continue
		}
		if len(pairs) > 0 {
			return nil, nil, cli.Usagef("all resources must be specified before %s changes: %s", mf.noun, a)
		}
		resources = append(resources, a)
	}
	return resources, pairs, nil
}

// parseMetaPairs parses KEY=VALUE and KEY- arguments, validating keys (and
// label values) as the API server would.
func parseMetaPairs(pairs []string, mf metaField) (set map[string]string, remove []string, err error) {
	set = map[string]string{}
	for _, p := range pairs {
		if key, ok := strings.CutSuffix(p, "-"); ok && !strings.Contains(p, "=") {
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				return nil, nil, cli.Usagef("invalid %s key %q: %s", mf.noun, key, strings.Join(errs, "; "))
			}
			remove = append(remove, key)
			continue
		}
		var key, value string
		if mf == labelsField {
			parts := strings.Split(p, "=")
			if len(parts) != 2 {
				return nil, nil, cli.Usagef("invalid label spec: %s", p)
			}
			key, value = parts[0], parts[1]
		} else {
			key, value, _ = strings.Cut(p, "=")
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, nil, cli.Usagef("invalid %s key %q: %s", mf.noun, key, strings.Join(errs, "; "))
		}
		if mf == labelsField {
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				return nil, nil, cli.Usagef("invalid label value: %q: %s", p, strings.Join(errs, "; "))
			}
		}
		set[key] = value
	}
	var both []string
	for _, k := range remove {
		if _, ok := set[k]; ok {
			both = append(both, k)
		}
	}
	if len(both) > 0 {
		if mf == labelsField {
			return nil, nil, cli.Usagef("can not both modify and remove a label in the same command")
		}
		return nil, nil, cli.Usagef("can not both modify and remove the following annotation(s) in the same command: %s", strings.Join(both, ", "))
	}
	return set, remove, nil
}

// metaChange is what label or annotate does to one object's map.
type metaChange struct {
	// patch holds the keys that change: their new value, or nil to remove.
	patch map[string]any
	// result is the map after the change.
	result map[string]string
	// missing are keys asked to be removed that the object does not have.
	missing []string
}

// annotateChangeCauseKey may always be overwritten, as kubectl allows.
const annotateChangeCauseKey = "kubernetes.io/change-cause"

// computeMetaChange applies set and remove to current, refusing to change
// an existing value without overwrite, with kubectl's messages.
func computeMetaChange(current, set map[string]string, remove []string, overwrite bool, mf metaField) (metaChange, error) {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !overwrite {
		var errs []error
		var clashes []string
		for _, k := range keys {
			cur, ok := current[k]
			if !ok || cur == set[k] || (mf == annotationsField && k == annotateChangeCauseKey) {
				continue
			}
			if mf == labelsField {
				errs = append(errs, fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", k, cur))
			} else {
				clashes = append(clashes, fmt.Sprintf("'%s' already has a value (%s)", k, cur))
			}
		}
		if len(errs) > 0 {
			return metaChange{}, utilerrors.NewAggregate(errs)
		}
		if len(clashes) > 0 {
			return metaChange{}, fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(clashes, "; "))
		}
	}
	ch := metaChange{patch: map[string]any{}, result: make(map[string]string, len(current)+len(set))}
	for k, v := range current {
		ch.result[k] = v
	}
	for _, k := range keys {
		if cur, ok := current[k]; !ok || cur != set[k] {
			ch.patch[k] = set[k]
		}
		ch.result[k] = set[k]
	}
	for _, k := range remove {
		if _, ok := current[k]; !ok {
			ch.missing = append(ch.missing, k)
			continue
		}
		ch.patch[k] = nil
		delete(ch.result, k)
	}
	return ch, nil
}

// labelMessage is kubectl's word for what happened to an object's labels.
func labelMessage(before, after map[string]string) string {
	added, removed := false, false
	for k, v := range before {
		nv, ok := after[k]
		if !ok {
			removed = true
		} else if nv != v {
			added = true
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			added = true
		}
	}
	switch {
	case added && removed:
		return msgLabelsChanged
	case added:
		return msgLabeled
	case removed:
		return msgUnlabeled
	}
	return msgNotLabeled
}

// metaPatch is the JSON merge patch of one metadata map, with an optional
// resourceVersion precondition and change cause (--record).
func metaPatch(field string, changes map[string]any, resourceVersion, cause string) ([]byte, error) {
	md := map[string]any{}
	if len(changes) > 0 {
		md[field] = changes
	}
	if cause != "" {
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			md["annotations"] = ann
		}
		ann[cli.ChangeCauseAnnotation] = cause
	}
	if resourceVersion != "" {
		md["resourceVersion"] = resourceVersion
	}
	return json.Marshal(map[string]any{"metadata": md})
}

func runMeta(ctx context.Context, f *cli.Factory, o *metaOptions, args []string) error {
	mf := o.mf
	resources, pairs, err := splitMetaArgs(args, mf)
	if err != nil {
		return err
	}
	set, remove, err := parseMetaPairs(pairs, mf)
	if err != nil {
		return err
	}
	if len(set) == 0 && len(remove) == 0 && !o.list {
		return cli.Usagef("at least one %s update is required", mf.noun)
	}
	if o.list && o.output != "" {
		return cli.Usagef("--list and --output may not be specified together")
	}
	dry, p, err := cli.NewWriteResultPrinter(f.Streams.Out, o.dryRun, o.output, o.showManagedFields)
	if err != nil {
		return err
	}
	if o.local {
		return metaLocal(f, o, p, dry, resources, set, remove)
	}
	var targets []cli.Target
	switch {
	case o.manifests.Given() && len(resources) > 0:
		return errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
	case o.manifests.Given():
		targets, err = cli.LiveManifestTargets(ctx, f, &o.manifests, mf.command)
	case len(resources) == 0:
		return errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
	default:
		targets, err = cli.ResolveObjects(ctx, f, resources, o.sel)
	}
	if err != nil {
		return err
	}
	if o.resourceVersion != "" && len(targets) != 1 {
		return cli.Usagef("--resource-version may only be used with a single resource")
	}
	if len(targets) == 0 {
		ns, _, _ := f.Namespace()
		if o.sel.AllNamespaces || ns == "" {
			fmt.Fprintln(f.Streams.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(f.Streams.ErrOut, "No resources found in %s namespace.\n", ns)
		}
		return nil
	}
	client, err := f.WriteClient(o.fieldManager, dry)
	if err != nil {
		return err
	}
	errs := &cli.ObjErrors{Factory: f}
	for _, t := range targets {
		err := metaOne(ctx, f, o, p, dry, client.Resource(t.Match.GVR).Namespace(t.Namespace), t, set, remove, len(targets) > 1)
		if err != nil {
			if len(targets) == 1 {
				return err
			}
			errs.Add(err)
		}
	}
	return errs.Result()
}

// metaLocal is label or annotate --local: the objects of the manifests,
// changed here and printed, as kubectl prints them.
func metaLocal(f *cli.Factory, o *metaOptions, p *cli.ResultPrinter, dry cli.DryRunMode, resources []string, set map[string]string, remove []string) error {
	switch {
	case dry == cli.DryRunServer:
		return errors.New("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	case len(resources) > 0:
		return fmt.Errorf("can only use local files by -f %[1]s.yaml or --filename=%[1]s.json when --local=true is set", o.mf.file)
	case !o.manifests.Given():
		return fmt.Errorf("one or more files must be specified as -f %[1]s.yaml or --filename=%[1]s.json", o.mf.file)
	}
	entries, err := cli.ReadEntries(f, &o.manifests, o.mf.command)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := e.Err(); err != nil {
			return fmt.Errorf("%s: %w", e.Where(), err)
		}
		obj := e.Object()
		ch, msg, err := o.change(obj, set, remove)
		if err != nil {
			return err
		}
		if o.list {
			t := cli.Target{Name: obj.GetName(), Namespace: obj.GetNamespace()}
			t.Match.GVK = obj.GroupVersionKind()
			if err := printMetaList(f, o.mf, t, ch.result, len(entries) > 1); err != nil {
				return err
			}
			continue
		}
		if err := p.Print(obj.GroupVersionKind().GroupKind(), obj.GetName(), msg, withMetaMap(obj, o.mf, ch.result, o.resourceVersion)); err != nil {
			return err
		}
	}
	return nil
}

// change is what set and remove do to obj's labels or annotations, and
// kubectl's word for it.
func (o *metaOptions) change(obj *unstructured.Unstructured, set map[string]string, remove []string) (ch metaChange, msg string, err error) {
	current := obj.GetLabels()
	if o.mf == annotationsField {
		current = obj.GetAnnotations()
	}
	if ch, err = computeMetaChange(current, set, remove, o.overwrite, o.mf); err != nil {
		return metaChange{}, "", err
	}
	msg = o.mf.done
	if o.mf == labelsField {
		msg = labelMessage(current, ch.result)
	}
	return ch, msg, nil
}

type metaClient interface {
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
}

func metaOne(ctx context.Context, f *cli.Factory, o *metaOptions, p *cli.ResultPrinter, dry cli.DryRunMode, rc metaClient, t cli.Target, set map[string]string, remove []string, many bool) error {
	mf := o.mf
	obj := t.Obj
	if obj == nil {
		var err error
		if obj, err = rc.Get(ctx, t.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	ch, msg, err := o.change(obj, set, remove)
	if err != nil {
		return err
	}
	if o.list {
		// Like kubectl, --list shows the result of any changes given
		// without sending them.
		return printMetaList(f, mf, t, ch.result, many)
	}
	cause := o.record.Cause()
	if dry == cli.DryRunClient {
		// As kubectl: the object as read, with the new map (set even when
		// empty) and the --resource-version given.
		out := withMetaMap(obj, mf, ch.result, o.resourceVersion)
		o.record.Annotate(out)
		return p.Print(t.Match.GVK.GroupKind(), t.Name, msg, out)
	}
	if mf == labelsField {
		for _, k := range ch.missing {
			fmt.Fprintf(f.Streams.Out, "label %q not found.\n", k)
		}
	}
	result := obj
	if len(ch.patch) > 0 || o.resourceVersion != "" || cause != "" {
		body, err := metaPatch(mf.field, ch.patch, o.resourceVersion, cause)
		if err != nil {
			return err
		}
		result, err = rc.Patch(ctx, t.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if err != nil {
			return err
		}
	}
	return p.Print(t.Match.GVK.GroupKind(), t.Name, msg, result)
}

// withMetaMap returns a copy of obj with its labels or annotations set to m
// and, when given, resourceVersion set.
func withMetaMap(obj *unstructured.Unstructured, mf metaField, m map[string]string, resourceVersion string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if m == nil {
		m = map[string]string{}
	}
	if mf == labelsField {
		out.SetLabels(m)
	} else {
		out.SetAnnotations(m)
	}
	if resourceVersion != "" {
		out.SetResourceVersion(resourceVersion)
	}
	return out
}

// printMetaList prints key=value lines, sorted; for several objects each
// block has a heading and indented lines.
func printMetaList(f *cli.Factory, mf metaField, t cli.Target, m map[string]string, many bool) error {
	w := f.Streams.Out
	indent := ""
	if many {
		fmt.Fprintf(w, "Listing %ss for %s:\n", mf.noun, t.KindName())
		indent = " "
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "%s%s=%s\n", indent, k, m[k]); err != nil {
			return err
		}
	}
	return nil
}
