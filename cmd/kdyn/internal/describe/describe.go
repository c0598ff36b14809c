package describe

import (
	"context"

	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/restmapper"
)

type options struct {
	manifests     cli.ManifestFlags
	selector      string
	allNamespaces bool
	showEvents    bool
	chunkSize     int64
}

// NewCommand returns "kdyn describe".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME)",
		Short: "Show details of a specific resource or group of resources",
		Long: `Print a detailed description of objects, with their events, as kubectl
describe does: pods in kubectl's pod layout, every other kind (custom
resources included) field by field.

"kdyn describe TYPE NAME" describes the object NAME, or, when there is none,
every object whose name starts with NAME.`,
		Example: `  # A pod, with its containers and events
  kdyn describe pod web-0

  # Every pod whose name starts with "web"
  kdyn describe pods web

  # Custom resources by label, without events
  kdyn describe widgets -l team=a --show-events=false

  # The objects of a manifest
  kdyn describe -f app.yaml`,
		SuggestFor: []string{"inspect"},
		RunE:       func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), f, args) },
	}
	o.manifests.AddFlags(cmd, "with the objects to describe")
	fl := cmd.Flags()
	fl.StringVarP(&o.selector, "selector", "l", "", "Label selector of the objects to describe (e.g. -l app=web).")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Describe the objects of every namespace.")
	fl.BoolVar(&o.showEvents, "show-events", true, "Show the objects' events.")
	fl.Int64Var(&o.chunkSize, "chunk-size", 500, "List large lists in chunks of this size (0: one request).")
	return cmd
}

// target is one object to describe: its resource and name.
type target struct {
	match restmapper.Match
	ns    string
	obj   *unstructured.Unstructured // when already read (a list)
}

func (o *options) run(ctx context.Context, f *cli.Factory, args []string) error {
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
	}
	var targets []target
	switch {
	case o.manifests.Given():
		if len(args) > 0 {
			return cli.FilesAndArgsError()
		}
		if targets, err = o.fromManifests(ctx, f, ns); err != nil {
			return err
		}
	case len(args) == 0:
		return cli.Usagef("You must specify the type of resource to describe. Use \"kdyn api-resources\" for a complete list of supported resources.")
	default:
		matches, err := f.Resolve(ctx, args)
		if err != nil {
			return err
		}
		for _, m := range matches {
			if m.Name == "" {
				listed, err := o.list(ctx, f, m, ns, "")
				if err != nil {
					return err
				}
				targets = append(targets, listed...)
				continue
			}
			targets = append(targets, target{match: m, ns: nsFor(m, ns)})
		}
	}
	d := &describer{f: f, o: o}
	// kubectl's rule: a single TYPE NAME that does not exist is a prefix.
	prefix := len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[0], ",") && len(targets) == 1
	var firstErr error
	for i, t := range targets {
		err := d.describe(ctx, t)
		if err != nil && prefix && apierrors.IsNotFound(err) && i == 0 {
			listed, lerr := o.list(ctx, f, t.match, t.ns, args[1])
			if lerr != nil || len(listed) == 0 {
				return err
			}
			// kubectl ends each of these with a newline instead of
			// separating them.
			d.suffix = "\n"
			for _, l := range listed {
				if err := d.describe(ctx, l); err != nil {
					return err
				}
			}
			return nil
		}
		if err != nil {
			cli.PrintError(f.Streams.ErrOut, err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if len(targets) == 0 && firstErr == nil {
		if ns == "" {
			fmt.Fprintln(f.Streams.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(f.Streams.ErrOut, "No resources found in %s namespace.\n", ns)
		}
	}
	if firstErr != nil {
		return &cli.ExitError{Code: cli.FailureCode(f, firstErr), Silent: true, Err: firstErr}
	}
	return nil
}

func nsFor(m restmapper.Match, ns string) string {
	if !m.Namespaced {
		return ""
	}
	return ns
}

// list lists the objects of a type (by -l), keeping those whose name has
// prefix.
func (o *options) list(ctx context.Context, f *cli.Factory, m restmapper.Match, ns, prefix string) ([]target, error) {
	client, err := f.DynamicClient()
	if err != nil {
		return nil, err
	}
	opts := metav1.ListOptions{LabelSelector: o.selector, Limit: o.chunkSize}
	var out []target
	for {
		list, err := client.Resource(m.GVR).Namespace(nsFor(m, ns)).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].GetName(), prefix) {
				out = append(out, target{match: m, ns: list.Items[i].GetNamespace(), obj: &list.Items[i]})
			}
		}
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}

// fromManifests are the objects the manifests name, in the manifest's
// namespace, else ns.
func (o *options) fromManifests(ctx context.Context, f *cli.Factory, ns string) ([]target, error) {
	named, err := cli.ManifestTargets(ctx, f, &o.manifests, "describe")
	if err != nil {
		return nil, err
	}
	var out []target
	for _, t := range named {
		objNS := t.Namespace
		if objNS == "" {
			objNS = ns
		}
		out = append(out, target{match: t.Match, ns: nsFor(t.Match, objNS)})
	}
	return out, nil
}

// describer prints descriptions, "\n\n" between two, or each followed
// by suffix when set.
type describer struct {
	f       *cli.Factory
	o       *options
	printed int
	suffix  string
}

// get reads one object, for a describer that shows a related one.
func (d *describer) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (gjson.Result, error) {
	client, err := d.f.DynamicClient()
	if err != nil {
		return gjson.Result{}, err
	}
	obj, err := client.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return gjson.Result{}, err
	}
	raw, err := obj.MarshalJSON()
	if err != nil {
		return gjson.Result{}, err
	}
	return gjson.ParseBytes(raw), nil
}

func (d *describer) describe(ctx context.Context, t target) error {
	obj := t.obj
	if obj == nil {
		client, err := d.f.DynamicClient()
		if err != nil {
			return err
		}
		if obj, err = client.Resource(t.match.GVR).Namespace(t.ns).Get(ctx, t.match.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	raw, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	w := newWriter()
	doc := gjson.ParseBytes(raw)
	list := newLister(d.f, d.o.chunkSize)
	showEvents := d.o.showEvents
	switch gk := t.match.GVK.GroupKind(); gk {
	case schema.GroupKind{Kind: "Pod"}:
		describePod(w, obj, doc)
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		describeReplicaSet(ctx, w, list, obj, doc)
	case schema.GroupKind{Kind: "ReplicationController"}:
		describeReplicationController(ctx, w, list, obj, doc)
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		describeDeployment(ctx, w, list, obj, doc)
	case schema.GroupKind{Kind: "Service"}:
		describeService(ctx, w, list, obj, doc)
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		describeDaemonSet(ctx, w, list, obj, doc)
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		describeStatefulSet(ctx, w, list, obj, doc)
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		describePVC(ctx, w, list, obj, doc)
	case schema.GroupKind{Kind: "Node"}:
		if err := describeNode(ctx, w, list, d.get, obj, doc); err != nil {
			return err
		}
	case schema.GroupKind{Kind: "Namespace"}:
		// As kubectl's: quotas and limit ranges, and no events.
		if err := describeNamespace(ctx, w, list, obj, doc); err != nil {
			return err
		}
		showEvents = false
	default:
		describeGeneric(w, obj)
	}
	if showEvents {
		rc, err := d.f.RESTClient()
		if err != nil {
			return err
		}
		// Events are best effort, as in kubectl: a user who may not list
		// them still gets the description.
		if events, err := listEvents(ctx, rc, obj, d.o.chunkSize); err == nil {
			if t.match.GVK.GroupKind() == (schema.GroupKind{Kind: "Node"}) {
				// As kubectl: a kubelet's events name its node by name
				// where the uid goes, a controller's by uid.
				byName := obj.DeepCopy()
				byName.SetUID(types.UID(obj.GetName()))
				more, _ := listEvents(ctx, rc, byName, d.o.chunkSize)
				events = append(events, more...)
			}
			writeEvents(w, events)
		}
	}
	if d.printed > 0 && d.suffix == "" {
		fmt.Fprint(d.f.Streams.Out, "\n\n")
	}
	d.printed++
	_, err = fmt.Fprint(d.f.Streams.Out, w.String()+d.suffix)
	return err
}
