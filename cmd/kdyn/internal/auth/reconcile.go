package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/rest"
)

// rbacResources are the kinds auth reconcile works on, by kind.
var rbacResources = map[string]schema.GroupVersionResource{
	"Role":               {Group: rbacGroup, Version: "v1", Resource: "roles"},
	"ClusterRole":        {Group: rbacGroup, Version: "v1", Resource: "clusterroles"},
	"RoleBinding":        {Group: rbacGroup, Version: "v1", Resource: "rolebindings"},
	"ClusterRoleBinding": {Group: rbacGroup, Version: "v1", Resource: "clusterrolebindings"},
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// conflictAttempts is how often an object is reconciled when its update
// meets a conflict (kubectl's retry.RetryOnConflict with three steps).
const conflictAttempts = 3

type reconcileOptions struct {
	manifests              cli.ManifestFlags
	output                 string
	dryRun                 *cli.DryRunFlag
	removeExtraPermissions bool
	removeExtraSubjects    bool
	showManagedFields      bool
}

func newReconcileCommand(f *cli.Factory) *cobra.Command {
	o := &reconcileOptions{}
	cmd := &cobra.Command{
		Use:   "reconcile -f FILENAME",
		Short: "Reconciles rules for RBAC role, role binding, cluster role, and cluster role binding objects",
		Long: `Make the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings of -f hold
at least what the manifests give them, merging rather than replacing.

A missing object is created (and, for a namespaced one, its namespace when
that does not exist yet). A stored role gains the rules of the manifest that
it does not already allow, and the aggregation selectors it lacks; a stored
binding gains the missing subjects; both gain the manifest's labels and
annotations. With --remove-extra-permissions a role keeps only the
manifest's rules, with --remove-extra-subjects a binding only its subjects.
A binding whose roleRef differs is deleted and created again, since a
roleRef cannot change. An object annotated
rbac.authorization.kubernetes.io/autoupdate=false is left alone.

Each object is printed ("KIND/NAME reconciled", or with -o); what had to
change is listed on standard error. Only rbac.authorization.k8s.io/v1
objects are reconciled; other kinds in the manifests are skipped.`,
		Example: `  # Reconcile the RBAC objects of a file
  kdyn auth reconcile -f rbac.yaml

  # See what would change, without changing anything
  kdyn auth reconcile -f rbac.yaml --dry-run=client

  # Make the roles and bindings hold exactly the manifests' rules and subjects
  kdyn auth reconcile -f rbac.yaml --remove-extra-permissions --remove-extra-subjects`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReconcile(cmd.Context(), f, o, args)
		},
	}
	fl := cmd.Flags()
	o.manifests.AddFlags(cmd, "with the objects to reconcile")
	cli.AddOutputFlags(fl, &o.output, `Output format: name, json, yaml, jsonl, jsonpath=..., gjson=..., go-template=... (default: "KIND/NAME reconciled").`)
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json and yaml output.")
	fl.BoolVar(&o.removeExtraPermissions, "remove-extra-permissions", false, "Remove the rules (and aggregation selectors) of stored roles that the manifests do not give.")
	fl.BoolVar(&o.removeExtraSubjects, "remove-extra-subjects", false, "Remove the subjects of stored bindings that the manifests do not give.")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	return cmd
}

// reconciler carries one run of auth reconcile.
type reconciler struct {
	f       *cli.Factory
	o       *reconcileOptions
	rc      *rest.Client
	confirm bool // write (false: --dry-run=client)
	printer *cli.ResultPrinter
	spec    cli.OutputSpec
	printed int
}

func runReconcile(ctx context.Context, f *cli.Factory, o *reconcileOptions, args []string) error {
	if !o.manifests.Given() {
		return errors.New("must specify one of -f and -k")
	}
	if len(args) > 0 {
		return errors.New("no arguments are allowed")
	}
	dry, printer, err := cli.NewWriteResultPrinter(f.Streams.Out, o.dryRun, o.output, o.showManagedFields)
	if err != nil {
		return err
	}
	if dry == cli.DryRunServer {
		return errors.New("--dry-run=server for command reconcile is not supported yet")
	}
	ns, explicitNS, err := f.Namespace()
	if err != nil {
		return err
	}
	entries, err := cli.ReadEntries(f, &o.manifests, "reconcile")
	if err != nil {
		return err
	}
	r := &reconciler{f: f, o: o, confirm: dry == cli.DryRunNone, printer: printer}
	if o.output != "" {
		if r.spec, err = cli.ParseOutput(o.output); err != nil {
			return err
		}
	}
	if r.rc, err = f.RESTClient(); err != nil {
		return err
	}
	for _, e := range entries {
		obj := e.Object()
		if objNS := obj.GetNamespace(); explicitNS && objNS != "" && objNS != ns {
			//lint:ignore ST1005 kubectl's words, which scripts may match
			return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", objNS, ns, objNS)
		}
		if err := r.reconcile(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// reconcile reconciles one object of the manifests; objects of other kinds
// are skipped, RBAC objects of other versions refused, as kubectl does.
func (r *reconciler) reconcile(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	gvr, ok := rbacResources[gvk.Kind]
	if gvk.Group != rbacGroup || !ok {
		r.f.Logger().V(1).Info("skipping an object auth reconcile does not handle", "kind", gvk.String(), "name", obj.GetName())
		return nil
	}
	switch gvk.Version {
	case "v1":
	case "v1beta1", "v1alpha1":
		return fmt.Errorf("only %s/v1 is supported: not *%s.%s", rbacGroup, gvk.Version, gvk.Kind)
	default:
		r.f.Logger().V(1).Info("skipping an object auth reconcile does not handle", "kind", gvk.String(), "name", obj.GetName())
		return nil
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	switch gvk.Kind {
	case "Role", "ClusterRole":
		expected := &roleObject{}
		if err := json.Unmarshal(raw, expected); err != nil {
			return fmt.Errorf("decode %s %q: %w", gvk.Kind, obj.GetName(), err)
		}
		if gvk.Kind == "Role" {
			expected.AggregationRule = nil
		}
		return r.reconcileRole(ctx, gvr, gvk.Kind, expected)
	default:
		expected := &bindingObject{}
		if err := json.Unmarshal(raw, expected); err != nil {
			return fmt.Errorf("decode %s %q: %w", gvk.Kind, obj.GetName(), err)
		}
		return r.reconcileBinding(ctx, gvr, gvk.Kind, expected)
	}
}

// reconcileRole reconciles a Role or ClusterRole and prints the result.
func (r *reconciler) reconcileRole(ctx context.Context, gvr schema.GroupVersionResource, kind string, expected *roleObject) error {
	var res *roleResult
	var err error
	for range conflictAttempts {
		if res, err = r.runRole(ctx, gvr, kind, expected, 0); !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := r.print(gvr, kind, res.role.Name, res.role); err != nil {
		return err
	}
	lines := r.opLines(res.op, res.protected)
	lines = append(lines, ruleLines("missing rules added:", res.missing)...)
	if r.o.removeExtraPermissions {
		lines = append(lines, ruleLines("extra rules removed:", res.extra)...)
	}
	r.report(res.op, lines)
	return nil
}

// runRole is one attempt: read the stored role, compute, and write unless
// a dry run or protected. A role created or deleted meanwhile starts over
// (at most three times).
func (r *reconciler) runRole(ctx context.Context, gvr schema.GroupVersionResource, kind string, expected *roleObject, attempt int) (*roleResult, error) {
	if attempt > 2 {
		return nil, errors.New("exceeded maximum attempts")
	}
	ns := expected.Namespace
	var res *roleResult
	raw, err := cli.ResourceRequest(r.rc.Get(), gvr, ns).Name(expected.Name).DoRaw(ctx)
	switch {
	case apierrors.IsNotFound(err):
		res = reconcileNewRole(expected)
	case err != nil:
		return nil, err
	default:
		existing := &roleObject{}
		if err := json.Unmarshal(raw, existing); err != nil {
			return nil, err
		}
		if kind == "Role" {
			existing.AggregationRule = nil
		}
		res = reconcileRole(existing, expected, r.o.removeExtraPermissions)
	}
	if res.protected || !r.confirm {
		return res, nil
	}
	switch res.op {
	case opCreate:
		if kind == "Role" {
			if err := r.ensureNamespace(ctx, ns); err != nil {
				return nil, err
			}
		}
		out, err := r.write(ctx, r.rc.Post(), gvr, ns, "", res.role)
		if apierrors.IsAlreadyExists(err) {
			return r.runRole(ctx, gvr, kind, expected, attempt+1)
		}
		if err != nil {
			return nil, err
		}
		res.role = &roleObject{}
		return res, json.Unmarshal(out, res.role)
	case opUpdate:
		out, err := r.write(ctx, r.rc.Put(), gvr, ns, res.role.Name, res.role)
		if apierrors.IsNotFound(err) {
			return r.runRole(ctx, gvr, kind, expected, attempt+1)
		}
		if err != nil {
			return nil, err
		}
		res.role = &roleObject{}
		return res, json.Unmarshal(out, res.role)
	}
	return res, nil
}

// reconcileBinding reconciles a RoleBinding or ClusterRoleBinding and
// prints the result.
func (r *reconciler) reconcileBinding(ctx context.Context, gvr schema.GroupVersionResource, kind string, expected *bindingObject) error {
	var res *bindingResult
	var err error
	for range conflictAttempts {
		if res, err = r.runBinding(ctx, gvr, kind, expected, 0); !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := r.print(gvr, kind, res.binding.Name, res.binding); err != nil {
		return err
	}
	lines := r.opLines(res.op, res.protected)
	lines = append(lines, subjectLines("missing subjects added:", res.missing)...)
	if r.o.removeExtraSubjects {
		lines = append(lines, subjectLines("extra subjects removed:", res.extra)...)
	}
	r.report(res.op, lines)
	return nil
}

// runBinding is one attempt for a binding, as runRole for a role; a
// recreate deletes the stored binding (if its UID is still the one read)
// before creating the new one.
func (r *reconciler) runBinding(ctx context.Context, gvr schema.GroupVersionResource, kind string, expected *bindingObject, attempt int) (*bindingResult, error) {
	if attempt > 3 {
		return nil, errors.New("exceeded maximum attempts")
	}
	ns := expected.Namespace
	var res *bindingResult
	var existing *bindingObject
	raw, err := cli.ResourceRequest(r.rc.Get(), gvr, ns).Name(expected.Name).DoRaw(ctx)
	switch {
	case apierrors.IsNotFound(err):
		res = reconcileNewBinding(expected)
	case err != nil:
		return nil, err
	default:
		existing = &bindingObject{}
		if err := json.Unmarshal(raw, existing); err != nil {
			return nil, err
		}
		res = reconcileBinding(existing, expected, r.o.removeExtraSubjects)
	}
	if res.protected || !r.confirm {
		return res, nil
	}
	switch res.op {
	case opRecreate:
		err := r.deleteWithUID(ctx, gvr, existing.Namespace, existing.Name, existing.UID)
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			return r.runBinding(ctx, gvr, kind, expected, attempt+1)
		default:
			return nil, err
		}
		fallthrough
	case opCreate:
		if kind == "RoleBinding" {
			if err := r.ensureNamespace(ctx, ns); err != nil {
				return nil, err
			}
		}
		out, err := r.write(ctx, r.rc.Post(), gvr, ns, "", res.binding)
		if apierrors.IsAlreadyExists(err) {
			return r.runBinding(ctx, gvr, kind, expected, attempt+1)
		}
		if err != nil {
			return nil, err
		}
		res.binding = &bindingObject{}
		return res, json.Unmarshal(out, res.binding)
	case opUpdate:
		out, err := r.write(ctx, r.rc.Put(), gvr, ns, res.binding.Name, res.binding)
		if apierrors.IsNotFound(err) {
			return r.runBinding(ctx, gvr, kind, expected, attempt+1)
		}
		if err != nil {
			return nil, err
		}
		res.binding = &bindingObject{}
		return res, json.Unmarshal(out, res.binding)
	}
	return res, nil
}

// write sends obj with req (a POST to the collection, or a PUT to name)
// and returns the server's answer.
func (r *reconciler) write(ctx context.Context, req *rest.Request, gvr schema.GroupVersionResource, ns, name string, obj any) ([]byte, error) {
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	req = cli.ResourceRequest(req, gvr, ns)
	if name != "" {
		req = req.Name(name)
	}
	return req.ContentType(rest.ContentTypeJSON).Body(body).DoRaw(ctx)
}

// deleteWithUID deletes the object if its UID is still uid.
func (r *reconciler) deleteWithUID(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, uid types.UID) error {
	body, err := json.Marshal(&metav1.DeleteOptions{
		TypeMeta:      metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil {
		return err
	}
	_, err = cli.ResourceRequest(r.rc.Delete(), gvr, ns).Name(name).ContentType(rest.ContentTypeJSON).Body(body).DoRaw(ctx)
	return err
}

// ensureNamespace creates namespace ns when it does not exist, as far as
// the user may: a refused read or create is no failure (the user may only
// be allowed to write roles and bindings).
func (r *reconciler) ensureNamespace(ctx context.Context, ns string) error {
	_, err := cli.ResourceRequest(r.rc.Get(), namespacesGVR, "").Name(ns).DoRaw(ctx)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return err
	}
	body := fmt.Appendf(nil, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":%q}}`, ns)
	_, err = cli.ResourceRequest(r.rc.Post(), namespacesGVR, "").ContentType(rest.ContentTypeJSON).Body(body).DoRaw(ctx)
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return err
	}
	return nil
}

// print prints the reconciled object: "KIND/NAME reconciled", its name,
// or the object itself in kubectl's typed form (kind and apiVersion set,
// members in the Go types' order); YAML documents are separated by "---".
func (r *reconciler) print(gvr schema.GroupVersionResource, kind, name string, obj any) error {
	gk := schema.GroupKind{Group: gvr.Group, Kind: kind}
	tm := metav1.TypeMeta{Kind: kind, APIVersion: gvr.GroupVersion().String()}
	switch o := obj.(type) {
	case *roleObject:
		o.TypeMeta = tm
	case *bindingObject:
		o.TypeMeta = tm
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	r.printed++
	if r.o.output != "" && r.spec.Kind == cli.OutYAML && r.printed > 1 {
		if _, err := io.WriteString(r.f.Streams.Out, "---\n"); err != nil {
			return err
		}
	}
	return r.printer.PrintRaw(gk, name, "reconciled", raw)
}

// opLines is the line on the operation a reconciliation needed (none when
// nothing had to change).
func (r *reconciler) opLines(op reconcileOp, protected bool) []string {
	if op == opNone {
		return nil
	}
	caveat := ""
	if protected {
		caveat = ", but object opted out (" + autoUpdateAnnotation + ": false)"
	}
	return []string{fmt.Sprintf("\treconciliation required %s%s", op, caveat)}
}

// report writes lines to standard error, unless nothing had to change.
func (r *reconciler) report(op reconcileOp, lines []string) {
	if op == opNone {
		return
	}
	for _, l := range lines {
		fmt.Fprintln(r.f.Streams.ErrOut, l)
	}
}

func ruleLines(title string, rules []rule) []string {
	if len(rules) == 0 {
		return nil
	}
	out := []string{"\t" + title}
	for _, ru := range rules {
		out = append(out, "\t\t"+formatRule(ru))
	}
	return out
}

func subjectLines(title string, subjects []subject) []string {
	if len(subjects) == 0 {
		return nil
	}
	out := []string{"\t" + title}
	for _, s := range subjects {
		out = append(out, "\t\t"+formatSubject(s))
	}
	return out
}
