package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// Target is one object named on the command line (TYPE NAME, TYPE/NAME)
// or found by -l / --all.
type Target struct {
	Match     restmapper.Match // its resource type
	Namespace string           // "" for cluster-scoped objects
	Name      string           // the object's name
	// Obj is the object as listed, when it was found by a selector.
	Obj *unstructured.Unstructured
}

// Resource returns the dynamic client for the target's resource and namespace.
func (t Target) Resource(c dynamic.Interface) dynamic.ResourceInterface {
	return c.Resource(t.Match.GVR).Namespace(t.Namespace)
}

// KindName is kubectl's -o name form: "deployment.apps/web".
func (t Target) KindName() string { return printers.KindName(t.Match.GVK.GroupKind(), t.Name) }

// ObjectName is kubectl's "resource/name" form used in wait's errors:
// "configmaps/x", "deployments/web".
func (t Target) ObjectName() string { return t.Match.GVR.Resource + "/" + t.Name }

// Selection is how objects are picked besides names.
type Selection struct {
	Selector      string // -l
	FieldSelector string // --field-selector
	All           bool   // --all
	AllNamespaces bool   // -A
}

// Selecting reports whether objects are picked by selector or --all
// rather than by name.
func (s Selection) Selecting() bool { return s.Selector != "" || s.FieldSelector != "" || s.All }

// ListOptions are the list options of the selectors.
func (s Selection) ListOptions() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: s.Selector, FieldSelector: s.FieldSelector}
}

// errNoResourceArgs is kubectl's wording when no resource is given.
const errNoResourceArgs = "one or more resources must be specified as <resource> <name> or <resource>/<name>"

// ResolveSelection resolves resource arguments and checks that they and the
// selection flags agree: names, or a type with -l / --field-selector / --all.
// It returns the matches and the namespace to use for namespaced types
// ("" with -A).
func ResolveSelection(ctx context.Context, f *Factory, args []string, sel Selection) ([]restmapper.Match, string, error) {
	if len(args) == 0 {
		return nil, "", Usagef(errNoResourceArgs)
	}
	if sel.All && sel.Selector != "" {
		return nil, "", Usagef("cannot set --all and --selector at the same time")
	}
	if sel.All && sel.FieldSelector != "" {
		return nil, "", Usagef("cannot set --all and --field-selector at the same time")
	}
	matches, err := f.Resolve(ctx, args)
	if err != nil {
		return nil, "", err
	}
	named := false
	for _, m := range matches {
		if m.Name != "" {
			named = true
		}
	}
	switch {
	case named && sel.Selecting():
		return nil, "", Usagef("name cannot be provided when a selector or --all is specified")
	case named && sel.AllNamespaces:
		return nil, "", Usagef("-A/--all-namespaces selects objects with -l or --all; named objects are looked up in one namespace (use -n)")
	case !named && !sel.Selecting():
		return nil, "", Usagef("resource(s) were provided, but no name, label selector, or --all flag specified")
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, "", err
	}
	if sel.AllNamespaces {
		ns = ""
	}
	return matches, ns, nil
}

// ResolveObjects returns the objects the arguments name, or those the
// selection finds (listed, paged). Selected objects carry the listed object.
func ResolveObjects(ctx context.Context, f *Factory, args []string, sel Selection) ([]Target, error) {
	matches, ns, err := ResolveSelection(ctx, f, args, sel)
	if err != nil {
		return nil, err
	}
	var out []Target
	if !sel.Selecting() {
		for _, m := range matches {
			out = append(out, Target{Match: m, Namespace: NamespaceFor(m, ns), Name: m.Name})
		}
		return out, nil
	}
	client, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	for _, m := range matches {
		for obj, err := range dynamic.Items(ctx, client.Resource(m.GVR).Namespace(NamespaceFor(m, ns)), sel.ListOptions(), dynamic.PageOptions{}) {
			if err != nil {
				return nil, err
			}
			out = append(out, Target{Match: m, Namespace: obj.GetNamespace(), Name: obj.GetName(), Obj: obj})
		}
	}
	return out, nil
}

// NamespaceFor is ns for a namespaced match and "" for a cluster-scoped one.
func NamespaceFor(m restmapper.Match, ns string) string {
	if !m.Namespaced {
		return ""
	}
	return ns
}

// ResultPrinter prints the outcome of a change the way kubectl does:
// "configmap/x labeled" by default, "configmap/x" with -o name, the object
// with any other -o.
type ResultPrinter struct {
	w      io.Writer
	spec   OutputSpec
	dflt   bool   // no -o
	suffix string // after the operation: " (dry run)", " (server dry run)"
	// ShowManagedFields keeps metadata.managedFields in json, yaml and
	// jsonl output, which leave them out otherwise, as kubectl's do.
	ShowManagedFields bool
}

// NewResultPrinter returns the printer for -o output (one of the object
// outputs, or "" for the one-line summary), writing to w; dryRun marks the
// summaries " (server dry run)" (SetDryRun tells the two dry runs apart).
func NewResultPrinter(w io.Writer, output string, dryRun bool) (*ResultPrinter, error) {
	p := &ResultPrinter{w: w}
	if dryRun {
		p.SetDryRun(DryRunServer)
	}
	if output == "" {
		p.dflt = true
		return p, nil
	}
	spec, err := ParseOutput(output)
	if err != nil {
		return nil, err
	}
	if spec.IsTable() {
		return nil, Usagef("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,gjson,json,jsonl,jsonpath,name,yaml", output)
	}
	p.spec = spec
	return p, nil
}

// NewWriteResultPrinter reads --dry-run and -o for a command that changes
// objects: the dry run asked for, and the printer of the results, its
// summaries marked with the dry run's suffix; showManaged keeps
// managedFields in json and yaml.
func NewWriteResultPrinter(w io.Writer, dryRun *DryRunFlag, output string, showManaged bool) (DryRunMode, *ResultPrinter, error) {
	dry, err := dryRun.Mode()
	if err != nil {
		return DryRunNone, nil, err
	}
	p, err := NewResultPrinter(w, output, false)
	if err != nil {
		return DryRunNone, nil, err
	}
	p.SetDryRun(dry)
	p.ShowManagedFields = showManaged
	return dry, p, nil
}

// SetDryRun marks the summaries with the dry run's suffix: " (dry run)"
// for DryRunClient, " (server dry run)" for DryRunServer.
func (p *ResultPrinter) SetDryRun(d DryRunMode) { p.suffix = d.Suffix() }

// Print reports operation on the object named gk/name; obj is printed for
// object outputs (and may be nil for the default and name outputs).
func (p *ResultPrinter) Print(gk schema.GroupKind, name, operation string, obj *unstructured.Unstructured) error {
	kn := printers.KindName(gk, name)
	switch {
	case p.dflt:
		_, err := fmt.Fprintf(p.w, "%s %s%s\n", kn, operation, p.suffix)
		return err
	case p.spec.Kind == OutName:
		_, err := fmt.Fprintln(p.w, kn)
		return err
	}
	if obj == nil {
		return fmt.Errorf("no object to print for %s", kn)
	}
	if p.spec.HidesManagedFields() && !p.ShowManagedFields {
		obj = kunstructured.StripManagedFields(obj)
	}
	pr, err := p.spec.ObjectPrinter(p.w, false)
	if err != nil {
		return err
	}
	if err := pr.Begin(true); err != nil {
		return err
	}
	if err := pr.Print(printers.ItemFromObject(obj)); err != nil {
		return err
	}
	return pr.Finish()
}

// PrintRaw is Print for an object given as the server's JSON text, whose
// member order -o json keeps: kubectl prints the typed objects its
// commands decode in the order the server sends.
func (p *ResultPrinter) PrintRaw(gk schema.GroupKind, name, operation string, raw []byte) error {
	if p.dflt || p.spec.Kind == OutName {
		return p.Print(gk, name, operation, nil)
	}
	return PrintObjectJSON(p.w, p.spec, raw, true, p.ShowManagedFields)
}

// ObjErrors collects the errors of commands that carry on past a failed
// object, as kubectl does, and turns them into the command's result.
type ObjErrors struct {
	Factory *Factory // where errors are printed, and --exit-codes
	n       int
	last    error
}

// Add reports err now (on stderr) when several objects are processed.
func (e *ObjErrors) Add(err error) {
	e.n++
	e.last = err
	PrintError(e.Factory.Streams.ErrOut, err)
}

// Result returns nil, or a silent exit error carrying the last error's code.
func (e *ObjErrors) Result() error {
	if e.n == 0 {
		return nil
	}
	return &ExitError{Code: ExitCode(e.last, e.Factory.Flags.ExitCodes), Silent: true, Err: e.last}
}

// NamedTargets resolves arguments that must name objects (TYPE NAME...,
// TYPE/NAME...), as patch and edit take them.
func NamedTargets(ctx context.Context, f *Factory, args []string) ([]Target, error) {
	if len(args) == 0 {
		return nil, Usagef(errNoResourceArgs)
	}
	matches, err := f.Resolve(ctx, args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, m := range matches {
		if m.Name == "" {
			return nil, Usagef("resource(s) were provided, but no name was specified")
		}
		out = append(out, Target{Match: m, Namespace: NamespaceFor(m, ns), Name: m.Name})
	}
	return out, nil
}

// Describe names the selection in messages.
func (s Selection) Describe() string {
	var parts []string
	if s.Selector != "" {
		parts = append(parts, "-l "+s.Selector)
	}
	if s.FieldSelector != "" {
		parts = append(parts, "--field-selector "+s.FieldSelector)
	}
	if s.All {
		parts = append(parts, "--all")
	}
	return strings.Join(parts, " ")
}

// Subresources is --subresource as the dynamic client's subresources
// argument: none for "".
func Subresources(sub string) []string {
	if sub == "" {
		return nil
	}
	return []string{sub}
}

// ManifestObject is an object a manifest names: the target (its resource
// by kind, its name, the namespace the manifest gives or ""), the object
// as written, and where it was written.
type ManifestObject struct {
	Target
	Written *unstructured.Unstructured
	Where   string // "app.yaml: document 2"
}

// ManifestTargets reads the manifests of m (for verb, as ReadEntries does)
// and names the object of each document, in order. A document that cannot
// be read, or whose kind the server does not serve, is an error naming the
// document.
func ManifestTargets(ctx context.Context, f *Factory, m *ManifestFlags, verb string) ([]ManifestObject, error) {
	entries, err := ReadEntries(f, m, verb)
	if err != nil {
		return nil, err
	}
	mapper, err := f.RESTMapper()
	if err != nil {
		return nil, err
	}
	var out []ManifestObject
	for _, e := range entries {
		if err := e.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Where(), err)
		}
		obj := e.Object()
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Where(), err)
		}
		t := Target{Match: restmapper.Match{GVR: mapping.Resource, GVK: mapping.GroupVersionKind,
			Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace, Name: obj.GetName()}, Name: obj.GetName()}
		if t.Match.Namespaced {
			t.Namespace = obj.GetNamespace()
		}
		out = append(out, ManifestObject{Target: t, Written: obj, Where: e.Where()})
	}
	return out, nil
}

// LiveManifestTargets are the live objects the manifests of m name (for
// verb, as ManifestTargets reads them), each in its manifest's namespace,
// else the command's.
func LiveManifestTargets(ctx context.Context, f *Factory, m *ManifestFlags, verb string) ([]Target, error) {
	named, err := ManifestTargets(ctx, f, m, verb)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return nil, err
	}
	targets := make([]Target, len(named))
	for i, n := range named {
		targets[i] = n.Target
		if n.Match.Namespaced && n.Namespace == "" {
			targets[i].Namespace = ns
		}
	}
	return targets, nil
}
