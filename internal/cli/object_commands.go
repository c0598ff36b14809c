package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/printers"
	"github.com/kdyn/kdyn/restmapper"
)

// addObjectCommands registers the commands that change or watch existing
// objects: patch, label, annotate, edit and wait.
func addObjectCommands(root *cobra.Command, f *factory) {
	root.AddCommand(
		newPatchCommand(f),
		newLabelCommand(f),
		newAnnotateCommand(f),
		newEditCommand(f),
		newWaitCommand(f),
	)
}

// objTarget is one object named on the command line (TYPE NAME, TYPE/NAME)
// or found by -l / --all.
type objTarget struct {
	match     restmapper.Match
	namespace string // "" for cluster-scoped objects
	name      string
	// obj is the object as listed, when it was found by a selector.
	obj *unstructured.Unstructured
}

// resource returns the dynamic client for the target's resource and namespace.
func (t objTarget) resource(c *dynamic.DynamicClient) dynamic.ResourceInterface {
	return c.Resource(t.match.GVR).Namespace(t.namespace)
}

// kindName is kubectl's -o name form: "deployment.apps/web".
func (t objTarget) kindName() string { return printers.KindName(t.match.GVK.GroupKind(), t.name) }

// objectName is kubectl's "resource/name" form used in wait's errors:
// "configmaps/x", "deployments/web".
func (t objTarget) objectName() string { return t.match.GVR.Resource + "/" + t.name }

// objSelection is how objects are picked besides names.
type objSelection struct {
	selector      string
	fieldSelector string
	all           bool
	allNamespaces bool
}

func (s objSelection) selecting() bool { return s.selector != "" || s.fieldSelector != "" || s.all }

func (s objSelection) listOptions() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: s.selector, FieldSelector: s.fieldSelector}
}

// errNoResourceArgs is kubectl's wording when no resource is given.
const errNoResourceArgs = "one or more resources must be specified as <resource> <name> or <resource>/<name>"

// resolveSelection resolves resource arguments and checks that they and the
// selection flags agree: names, or a type with -l / --field-selector / --all.
// It returns the matches and the namespace to use for namespaced types
// ("" with -A).
func resolveSelection(ctx context.Context, f *factory, args []string, sel objSelection) ([]restmapper.Match, string, error) {
	if len(args) == 0 {
		return nil, "", usagef(errNoResourceArgs)
	}
	if sel.all && sel.selector != "" {
		return nil, "", usagef("cannot set --all and --selector at the same time")
	}
	if sel.all && sel.fieldSelector != "" {
		return nil, "", usagef("cannot set --all and --field-selector at the same time")
	}
	matches, err := f.resolve(ctx, args)
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
	case named && sel.selecting():
		return nil, "", usagef("name cannot be provided when a selector or --all is specified")
	case named && sel.allNamespaces:
		return nil, "", usagef("-A/--all-namespaces selects objects with -l or --all; named objects are looked up in one namespace (use -n)")
	case !named && !sel.selecting():
		return nil, "", usagef("resource(s) were provided, but no name, label selector, or --all flag specified")
	}
	ns, _, err := f.namespace()
	if err != nil {
		return nil, "", err
	}
	if sel.allNamespaces {
		ns = ""
	}
	return matches, ns, nil
}

// resolveObjects returns the objects the arguments name, or those the
// selection finds (listed, paged). Selected objects carry the listed object.
func resolveObjects(ctx context.Context, f *factory, args []string, sel objSelection) ([]objTarget, error) {
	matches, ns, err := resolveSelection(ctx, f, args, sel)
	if err != nil {
		return nil, err
	}
	var out []objTarget
	if !sel.selecting() {
		for _, m := range matches {
			out = append(out, objTarget{match: m, namespace: nsFor(m, ns), name: m.Name})
		}
		return out, nil
	}
	client, err := f.dynamicClient()
	if err != nil {
		return nil, err
	}
	for _, m := range matches {
		for obj, err := range dynamic.Items(ctx, client.Resource(m.GVR).Namespace(nsFor(m, ns)), sel.listOptions(), dynamic.PageOptions{}) {
			if err != nil {
				return nil, err
			}
			out = append(out, objTarget{match: m, namespace: obj.GetNamespace(), name: obj.GetName(), obj: obj})
		}
	}
	return out, nil
}

// nsFor is ns for a namespaced match and "" for a cluster-scoped one.
func nsFor(m restmapper.Match, ns string) string {
	if !m.Namespaced {
		return ""
	}
	return ns
}

// addObjDryRunFlag adds kubectl's --dry-run flag. kdyn has no client-side
// dry run: the server's is the faithful one. A bare --dry-run means
// "client", as in kubectl, and is refused as such.
func addObjDryRunFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "dry-run", "none", `Must be "none" or "server". With "server", the request is sent with dryRun=All: the server validates and admits it, answers with the result, and persists nothing.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

// objDryRun parses --dry-run.
func objDryRun(v string) (bool, error) {
	switch v {
	case "", "none":
		return false, nil
	case "server":
		return true, nil
	case "client":
		return false, usagef("--dry-run=client is not supported by kdyn: use --dry-run=server, which the server validates and admits without persisting")
	}
	return false, usagef("Invalid dry-run value (%s). Must be \"none\" or \"server\".", v)
}

// dryRunOpt is the dryRun request option.
func dryRunOpt(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// resultPrinter prints the outcome of a change the way kubectl does:
// "configmap/x labeled" by default, "configmap/x" with -o name, the object
// with any other -o.
type resultPrinter struct {
	w      io.Writer
	spec   outputSpec
	dflt   bool // no -o
	dryRun bool
}

func newResultPrinter(w io.Writer, output string, dryRun bool) (*resultPrinter, error) {
	if output == "" {
		return &resultPrinter{w: w, dflt: true, dryRun: dryRun}, nil
	}
	spec, err := parseOutput(output)
	if err != nil {
		return nil, err
	}
	if spec.isTable() {
		return nil, usagef("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,gjson,json,jsonl,jsonpath,name,yaml", output)
	}
	return &resultPrinter{w: w, spec: spec, dryRun: dryRun}, nil
}

// print reports operation on the object named gk/name; obj is printed for
// object outputs (and may be nil for the default and name outputs).
func (p *resultPrinter) print(gk schema.GroupKind, name, operation string, obj *unstructured.Unstructured) error {
	kn := printers.KindName(gk, name)
	switch {
	case p.dflt:
		if p.dryRun {
			operation += " (server dry run)"
		}
		_, err := fmt.Fprintf(p.w, "%s %s\n", kn, operation)
		return err
	case p.spec.kind == outName:
		_, err := fmt.Fprintln(p.w, kn)
		return err
	}
	if obj == nil {
		return fmt.Errorf("no object to print for %s", kn)
	}
	pr, err := p.spec.objectPrinter(p.w, false)
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

// objErrors collects the errors of commands that carry on past a failed
// object, as kubectl does, and turns them into the command's result.
type objErrors struct {
	f    *factory
	n    int
	last error
}

// add reports err now (on stderr) when several objects are processed.
func (e *objErrors) add(err error) {
	e.n++
	e.last = err
	printError(e.f.streams.ErrOut, err)
}

// result returns nil, or a silent exit error carrying the last error's code.
func (e *objErrors) result() error {
	if e.n == 0 {
		return nil
	}
	return &exitError{code: exitCode(e.last, e.f.flags.exitCodes), silent: true, err: e.last}
}

// namedTargets resolves arguments that must name objects (TYPE NAME...,
// TYPE/NAME...), as patch and edit take them.
func namedTargets(ctx context.Context, f *factory, args []string) ([]objTarget, error) {
	if len(args) == 0 {
		return nil, usagef(errNoResourceArgs)
	}
	matches, err := f.resolve(ctx, args)
	if err != nil {
		return nil, err
	}
	ns, _, err := f.namespace()
	if err != nil {
		return nil, err
	}
	var out []objTarget
	for _, m := range matches {
		if m.Name == "" {
			return nil, usagef("resource(s) were provided, but no name was specified")
		}
		out = append(out, objTarget{match: m, namespace: nsFor(m, ns), name: m.Name})
	}
	return out, nil
}
