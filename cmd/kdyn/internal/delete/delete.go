package delete

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/ctxsleep"
	"github.com/kdyn/kdyn/rest"
)

// defaultDeleteWait bounds --wait when --timeout is 0.
const defaultDeleteWait = time.Hour

// slowDeleteNote is how long a wait runs before kdyn says what holds the
// object.
const slowDeleteNote = 5 * time.Second

type deleteOptions struct {
	manifests      cli.ManifestFlags
	selector       string
	fieldSelector  string
	all            bool
	allNamespaces  bool
	cascade        string
	gracePeriod    int
	now            bool
	force          bool
	wait           bool
	timeout        time.Duration
	ignoreNotFound bool
	dryRun         *cli.DryRunFlag
	output         string
	interactive    bool
}

// NewCommand returns "kdyn delete".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)] | TYPE/NAME ...)",
		Short: "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		Long: `Delete objects named on the command line (TYPE NAME..., TYPE/NAME...), selected
by label (-l) or all of a type (--all, with -A across namespaces), or those of
manifest files (-f). Objects of a file are deleted in file order, except that
CustomResourceDefinitions and Namespaces go last.

--cascade says what happens to the objects' dependents: background (the
default) deletes them after the owner, foreground before it (the owner stays,
with a foregroundDeletion finalizer, until they are gone), orphan leaves them.
Both foreground and orphan rely on the garbage collector to finish.

By default kdyn waits until the objects are gone (--wait), watching them, for
at most --timeout (0 means one hour). An object held by finalizers is named,
with its finalizers, when the wait times out.`,
		Example: `  # Delete objects by type and name
  kdyn delete configmap settings other
  kdyn delete cm/settings deploy/web

  # Delete the objects of a manifest file, or of a kustomization
  kdyn delete -f app.yaml
  kdyn delete -k overlays/prod

  # Delete by label, or every object of a type in the namespace
  kdyn delete pods -l app=web
  kdyn delete configmaps --all

  # Delete now, without waiting for graceful termination (with care)
  kdyn delete pod web-0 --force

  # Leave the dependents of a deployment in place
  kdyn delete deploy web --cascade=orphan`,
		SuggestFor: []string{"rm", "remove"},
		RunE:       func(cmd *cobra.Command, args []string) error { return runDelete(cmd.Context(), f, o, cmd, args) },
	}
	o.manifests.AddFlags(cmd, "with the objects to delete")
	o.manifests.AddRawFlag(cmd, "DELETE")
	fl := cmd.Flags()
	fl.StringVarP(&o.selector, "selector", "l", "", "Delete the objects of the given types whose labels match this selector.")
	fl.StringVar(&o.fieldSelector, "field-selector", "", "Delete the objects of the given types that match this field selector.")
	fl.BoolVar(&o.all, "all", false, "Delete every object of the given types in the namespace.")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "With --all, -l or --field-selector: in every namespace.")
	fl.StringVar(&o.cascade, "cascade", "background", `What to do with dependents: "background", "foreground" or "orphan".`)
	fl.Lookup("cascade").NoOptDefVal = "background"
	fl.IntVar(&o.gracePeriod, "grace-period", -1, "Seconds the object is given to terminate; -1 uses the object's own default, 0 (with --force) deletes at once.")
	fl.BoolVar(&o.now, "now", false, "Signal the objects to terminate at once (--grace-period=1).")
	fl.BoolVar(&o.force, "force", false, "Delete at once, without waiting for graceful termination (--grace-period=0).")
	fl.BoolVar(&o.wait, "wait", true, "Wait until the objects are gone before returning.")
	fl.DurationVar(&o.timeout, "timeout", 0, "How long --wait waits (0 means one hour).")
	fl.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "Treat an object that does not exist as deleted (the default with --all, -l and --field-selector).")
	o.dryRun = cli.AddDryRunFlag(cmd, true)
	fl.StringVarP(&o.output, "output", "o", "", "name: print only TYPE/NAME of each deleted object.")
	fl.BoolVarP(&o.interactive, "interactive", "i", false, "List the objects and delete them only if the answer on stdin is y.")
	return cmd
}

// Item is one object to delete.
type Item struct {
	GVR             schema.GroupVersionResource // its resource
	GroupKind       schema.GroupKind            // its kind, for messages
	Namespaced      bool                        // whether the resource is namespaced
	Namespace, Name string                      // the object
	UID             types.UID                   // the deleted object's, once Send answered
}

// kind is "deployment.apps" or "configmap", as kubectl prints it.
func (d *Item) kind() string { return strings.ToLower(d.GroupKind.String()) }

// describe is `configmap "x" in namespace "ns"`, for messages.
func (d *Item) describe() string {
	s := fmt.Sprintf("%s %q", d.kind(), d.Name)
	if d.Namespaced && d.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", d.Namespace)
	}
	return s
}

// deleter sends deletions and prints them.
type deleter struct {
	f       *cli.Factory
	r       *cli.ManifestRun
	o       *deleteOptions
	rc      *rest.Client
	dry     cli.DryRunMode
	grace   int
	policy  metav1.DeletionPropagation
	names   bool // -o name
	warnCS  bool // warn once about cluster-scoped objects with -n
	deleted []*Item
	// pending are the objects found while -i previews them; nil when not
	// previewing.
	pending *[]*Item
}

// ParseCascade parses --cascade into a propagation policy; the deprecated
// true and false are accepted with a warning on f's stderr.
func ParseCascade(f *cli.Factory, s string) (metav1.DeletionPropagation, error) {
	switch s {
	case "background":
		return metav1.DeletePropagationBackground, nil
	case "foreground":
		return metav1.DeletePropagationForeground, nil
	case "orphan":
		return metav1.DeletePropagationOrphan, nil
	case "true":
		fmt.Fprintln(f.Streams.ErrOut, `Warning: --cascade=true is deprecated (boolean value) and can be replaced with --cascade=background.`)
		return metav1.DeletePropagationBackground, nil
	case "false":
		fmt.Fprintln(f.Streams.ErrOut, `Warning: --cascade=false is deprecated (boolean value) and can be replaced with --cascade=orphan.`)
		return metav1.DeletePropagationOrphan, nil
	}
	return "", cli.Usagef(`invalid --cascade value %q: must be "background", "foreground" or "orphan"`, s)
}

// graceFor turns --grace-period, --now and --force into the grace period
// to send (-1: none), with kubectl's rules: 0 without --force becomes 1.
func graceFor(grace int, now, force bool) (int, error) {
	if now {
		if grace != -1 {
			return 0, cli.Usagef("--now and --grace-period cannot be specified together")
		}
		grace = 1
	}
	if force {
		if grace > 0 {
			return 0, cli.Usagef("--force and --grace-period greater than 0 cannot be specified together")
		}
		return 0, nil
	}
	if grace == 0 {
		grace = 1
	}
	return grace, nil
}

func runDelete(ctx context.Context, f *cli.Factory, o *deleteOptions, cmd *cobra.Command, args []string) error {
	if o.interactive {
		f.ClaimStdin("used by the interactive confirmation")
	}
	if o.manifests.Raw != "" {
		if o.interactive {
			return cli.Usagef("--interactive can not be used with --raw")
		}
		if len(args) > 0 || o.selector != "" || o.all {
			return cli.Usagef("--raw cannot be used with resource arguments, --selector or --all")
		}
		return o.manifests.SendRaw(ctx, f, http.MethodDelete)
	}
	dry, err := o.dryRun.Mode()
	if err != nil {
		return err
	}
	if o.output != "" && o.output != "name" {
		return cli.Usagef("unexpected -o output mode: %q; delete supports only -o name", o.output)
	}
	policy, err := ParseCascade(f, o.cascade)
	if err != nil {
		return err
	}
	grace, err := graceFor(o.gracePeriod, o.now, o.force)
	if err != nil {
		return err
	}
	if o.all && o.selector != "" {
		return cli.Usagef("cannot set --all and --selector at the same time")
	}
	if o.all && o.fieldSelector != "" {
		return cli.Usagef("cannot set --all and --field-selector at the same time")
	}
	selecting := o.all || o.selector != "" || o.fieldSelector != ""
	if selecting && !cmd.Flags().Changed("ignore-not-found") {
		o.ignoreNotFound = true
	}
	if o.manifests.Given() && len(args) > 0 {
		return cli.Usagef("give either -f/-k or resource arguments, not both")
	}
	if !o.manifests.Given() && len(args) == 0 {
		return cli.Usagef("you must give the objects to delete: TYPE NAME..., TYPE/NAME..., TYPE -l SELECTOR, TYPE --all, -f FILE or -k DIR\n\nSee 'kdyn delete -h' for help and examples")
	}
	if grace == 0 && o.force {
		fmt.Fprintln(f.Streams.ErrOut, "Warning: Immediate deletion does not wait for the resource to confirm that it has terminated; it may keep running on the cluster indefinitely.")
	}
	var entries []*cli.ManifestEntry
	if o.manifests.Given() {
		if selecting {
			return cli.Usagef("-l, --field-selector and --all do not apply to -f or -k")
		}
		var err error
		if entries, err = cli.ReadEntries(f, &o.manifests, "delete"); err != nil {
			return err
		}
	}
	r, err := cli.NewManifestRun(f, cli.ManifestOptions{Action: "deleting", DryRun: dry})
	if err != nil {
		return err
	}
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	d := &deleter{f: f, r: r, o: o, rc: rc, dry: dry, grace: grace, policy: policy, names: o.output == "name", warnCS: r.ExplicitNS && !o.allNamespaces}
	if o.interactive {
		d.pending = &[]*Item{}
	}

	if o.manifests.Given() {
		r.Each(ctx, cli.DeleteOrder(entries), func(ctx context.Context, t *cli.ManifestTarget) (*unstructured.Unstructured, error) {
			if t.Obj.GetName() == "" {
				return nil, errors.New("the object has no metadata.name")
			}
			item := &Item{
				GVR: t.Mapping.Resource, GroupKind: t.Mapping.GroupVersionKind.GroupKind(), Namespaced: t.Namespaced(),
				Namespace: t.Obj.GetNamespace(), Name: t.Obj.GetName(),
			}
			return nil, d.delete(ctx, item)
		})
	} else if err := d.deleteArgs(ctx, args, selecting); err != nil {
		return err
	}
	if d.pending != nil {
		items := *d.pending
		d.pending = nil
		if len(items) == 0 || r.Failures > 0 {
			return r.Finish()
		}
		if !d.confirm(items) {
			fmt.Fprintln(f.Streams.Out, "deletion is cancelled")
			return nil
		}
		for _, item := range items {
			if err := d.delete(ctx, item); err != nil {
				r.Fail(err)
			}
		}
	}
	if o.wait && dry == cli.DryRunNone && len(d.deleted) > 0 {
		d.waitAll(ctx)
	}
	return r.Finish()
}

// deleteArgs deletes the objects named by resource arguments, or those of
// the given types that -l, --field-selector or --all select.
func (d *deleter) deleteArgs(ctx context.Context, args []string, selecting bool) error {
	matches, err := d.f.Resolve(ctx, args)
	if err != nil {
		return err
	}
	named := false
	for _, m := range matches {
		if m.Name != "" {
			named = true
		}
	}
	switch {
	case named && selecting:
		return cli.Usagef("names cannot be given together with --all, --selector or --field-selector")
	case !named && !selecting:
		return cli.Usagef("resource(s) were provided, but no name was specified")
	}
	if named {
		for _, m := range matches {
			item := &Item{GVR: m.GVR, GroupKind: m.GVK.GroupKind(), Namespaced: m.Namespaced, Name: m.Name}
			if m.Namespaced {
				item.Namespace = d.r.Namespace
			}
			if err := d.delete(ctx, item); err != nil {
				d.r.Fail(err)
			}
		}
		return nil
	}
	found := 0
	for _, m := range matches {
		ns := ""
		if m.Namespaced && !d.o.allNamespaces {
			ns = d.r.Namespace
		}
		opts := metav1.ListOptions{LabelSelector: d.o.selector, FieldSelector: d.o.fieldSelector, Limit: 500}
		ri := d.r.Client.Resource(m.GVR).Namespace(ns)
		for {
			list, err := ri.List(ctx, opts)
			if err != nil {
				d.r.Fail(err)
				break
			}
			for i := range list.Items {
				obj := &list.Items[i]
				found++
				item := &Item{GVR: m.GVR, GroupKind: m.GVK.GroupKind(), Namespaced: m.Namespaced, Namespace: obj.GetNamespace(), Name: obj.GetName()}
				if err := d.delete(ctx, item); err != nil {
					d.r.Fail(err)
				}
			}
			if list.GetContinue() == "" {
				break
			}
			opts.Continue = list.GetContinue()
		}
	}
	if found == 0 && d.r.Failures == 0 {
		fmt.Fprintln(d.f.Streams.Out, "No resources found")
	}
	return nil
}

// delete sends one deletion (or, with --dry-run=client, checks that the
// object exists) and prints it. A missing object is no error with
// --ignore-not-found.
func (d *deleter) delete(ctx context.Context, item *Item) error {
	if d.pending != nil {
		// -i: note what exists; the deletion waits for the answer.
		if _, err := d.r.Client.Resource(item.GVR).Namespace(item.Namespace).Get(ctx, item.Name, metav1.GetOptions{}); err != nil {
			if d.o.ignoreNotFound && apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		*d.pending = append(*d.pending, item)
		return nil
	}
	if d.warnCS && !item.Namespaced {
		fmt.Fprintln(d.f.Streams.ErrOut, "Warning: deleting cluster-scoped resources, which the namespace given with -n does not scope")
		d.warnCS = false
	}
	var err error
	if d.dry == cli.DryRunClient {
		_, err = d.r.Client.Resource(item.GVR).Namespace(item.Namespace).Get(ctx, item.Name, metav1.GetOptions{})
	} else {
		item.UID, err = d.send(ctx, item)
	}
	if err != nil {
		if d.o.ignoreNotFound && apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	d.print(item)
	if d.dry == cli.DryRunNone {
		d.deleted = append(d.deleted, item)
	}
	return nil
}

// confirm lists the objects -i found and asks, as kubectl words it; only
// "y" (either case) on stdin goes on.
func (d *deleter) confirm(items []*Item) bool {
	out := d.f.Streams.Out
	fmt.Fprintf(out, "You are about to delete the following %d resource(s):\n", len(items))
	for _, item := range items {
		fmt.Fprintf(out, "%s/%s\n", item.kind(), item.Name)
	}
	fmt.Fprint(out, "Do you want to continue? (y/N): ")
	var answer string
	if _, err := fmt.Fscanln(d.f.Streams.In, &answer); err != nil {
		return false
	}
	return strings.EqualFold(answer, "y")
}

// send DELETEs the object and returns the UID the server answered with
// (of the deleted object, or of its Status details).
func (d *deleter) send(ctx context.Context, item *Item) (types.UID, error) {
	return Send(ctx, d.rc, item, d.policy, d.grace, d.dry)
}

// Send DELETEs the object and returns the UID the server answered with.
// It builds the request the dynamic client's Delete sends, and reads the
// answer, which Delete discards: the UID tells the wait for the object to
// be gone from a new object of the same name.
func Send(ctx context.Context, rc *rest.Client, item *Item, policy metav1.DeletionPropagation, grace int, dry cli.DryRunMode) (types.UID, error) {
	opts := metav1.DeleteOptions{
		TypeMeta:          metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		PropagationPolicy: &policy,
	}
	if dry == cli.DryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if grace >= 0 {
		g := int64(grace)
		opts.GracePeriodSeconds = &g
	}
	body, err := json.Marshal(&opts)
	if err != nil {
		return "", err
	}
	raw, err := cli.ResourceRequest(rc.Delete(), item.GVR, item.Namespace).Name(item.Name).ContentType(rest.ContentTypeJSON).Body(body).DoRaw(ctx)
	if err != nil {
		return "", err
	}
	if gjson.GetBytes(raw, "kind").String() == "Status" {
		return types.UID(gjson.GetBytes(raw, "details.uid").String()), nil
	}
	return types.UID(gjson.GetBytes(raw, "metadata.uid").String()), nil
}

func (d *deleter) print(item *Item) {
	if d.names {
		fmt.Fprintf(d.f.Streams.Out, "%s/%s\n", item.kind(), item.Name)
		return
	}
	op := "deleted"
	if d.grace == 0 {
		op = "force deleted"
	}
	fmt.Fprintln(d.f.Streams.Out, DeletedLine(item, op)+d.dry.Suffix())
}

// DeletedLine is kubectl's `configmap "x" deleted from ns namespace`
// (without the namespace part for cluster-scoped objects); a dry run's
// suffix goes after it, as in kubectl's.
func DeletedLine(item *Item, op string) string {
	s := fmt.Sprintf("%s %q %s", item.kind(), item.Name, op)
	if item.Namespaced && item.Namespace != "" {
		s += " from " + item.Namespace + " namespace"
	}
	return s
}

// waitAll waits for every deleted object to be gone, within one deadline.
func (d *deleter) waitAll(ctx context.Context) {
	timeout := d.o.timeout
	if timeout <= 0 {
		timeout = defaultDeleteWait
	}
	deadline := time.Now().Add(timeout)
	for _, item := range d.deleted {
		ri := d.r.Client.Resource(item.GVR).Namespace(item.Namespace)
		err := WaitDeleted(ctx, deadline, ri, item, timeout, d.f.Streams.ErrOut)
		if err == nil || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
			continue // as kubectl: a wait we may not do is no failure
		}
		d.r.Fail(err)
		if ctx.Err() != nil {
			return
		}
	}
}

// WaitDeleted returns when the object is gone or has been replaced by one
// with another UID. It watches the object (re-reading it when a watch
// ends) until the deadline; the timeout error names what still holds the
// object (its finalizers, its deletion timestamp).
func WaitDeleted(ctx context.Context, deadline time.Time, ri dynamic.ResourceInterface, item *Item, timeout time.Duration, notes io.Writer) error {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var last *unstructured.Unstructured
	gone := func(obj *unstructured.Unstructured, err error) bool {
		return apierrors.IsNotFound(err) || (err == nil && item.UID != "" && obj.GetUID() != item.UID)
	}
	timedOut := func() error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// One last look, so that an object gone meanwhile is no failure.
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		obj, err := ri.Get(cctx, item.Name, metav1.GetOptions{})
		if gone(obj, err) {
			return nil
		}
		if err == nil {
			last = obj
		}
		return fmt.Errorf("%w after %s waiting for %s to be deleted%s", cli.ErrTimeout, timeout, item.describe(), holdDescription(last))
	}
	noted := false
	slow := time.NewTimer(slowDeleteNote)
	defer slow.Stop()
	for {
		obj, err := ri.Get(wctx, item.Name, metav1.GetOptions{})
		switch {
		case gone(obj, err):
			return nil
		case wctx.Err() != nil:
			return timedOut()
		case err != nil:
			return err
		}
		last = obj
		w, err := ri.Watch(wctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", item.Name).String(),
			ResourceVersion: obj.GetResourceVersion(),
		})
		if err != nil {
			if wctx.Err() != nil {
				return timedOut()
			}
			if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
				return err
			}
			// Poll instead, briefly.
			if serr := ctxsleep.Sleep(wctx, time.Second); serr != nil {
				return timedOut()
			}
			continue
		}
		deleted := watchDeletionDone(wctx, w, item, &last, slow.C, &noted, notes)
		w.Stop()
		if deleted {
			return nil
		}
		if wctx.Err() != nil {
			return timedOut()
		}
	}
}

// watchDeletionDone reads w until the object is deleted (true), or the
// watch or ctx ends (false: read the object again).
func watchDeletionDone(ctx context.Context, w watch.Interface, item *Item, last **unstructured.Unstructured, slow <-chan time.Time, noted *bool, notes io.Writer) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-slow:
			if !*noted {
				*noted = true
				if h := holdDescription(*last); h != "" {
					fmt.Fprintf(notes, "waiting for %s to be deleted%s\n", item.describe(), h)
				}
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false
			}
			switch ev.Type {
			case watch.Deleted:
				if obj, ok := ev.Object.(*unstructured.Unstructured); !ok || item.UID == "" || obj.GetUID() == item.UID {
					return true
				}
			case watch.Added, watch.Modified:
				if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
					if item.UID != "" && obj.GetUID() != item.UID {
						return true
					}
					*last = obj
				}
			case watch.Error:
				return false
			}
		}
	}
}

// holdDescription says why an object is still there: ": deletion pending
// since T, held by finalizers a, b".
func holdDescription(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	ts := obj.GetDeletionTimestamp()
	fin := obj.GetFinalizers()
	switch {
	case ts != nil && len(fin) > 0:
		return fmt.Sprintf(": deletion pending since %s, held by finalizers %s", ts.UTC().Format(time.RFC3339), strings.Join(fin, ", "))
	case ts != nil:
		return fmt.Sprintf(": deletion pending since %s (graceful termination)", ts.UTC().Format(time.RFC3339))
	case len(fin) > 0:
		return fmt.Sprintf(": it is not marked for deletion; finalizers %s", strings.Join(fin, ", "))
	}
	return ": it still exists"
}
