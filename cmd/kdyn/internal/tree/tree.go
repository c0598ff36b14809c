package tree

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/restmapper"
)

type treeOptions struct {
	up            bool
	allNamespaces bool
	parallel      int
}

// NewCommand returns "kdyn tree".
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &treeOptions{}
	cmd := &cobra.Command{
		Use:   "tree TYPE NAME | TYPE/NAME [--up] [-A]",
		Short: "Show the objects an object owns (ownerReferences), as a tree",
		Long: `Show the dependents of an object — the objects whose ownerReferences name it,
then theirs, and so on — as a tree, with each object's age and a status:
the Ready, Available or Established condition when the object has one,
otherwise status.phase.

Dependents are found by listing the metadata of every listable resource
type (one request per type and page, 8 types at a time): namespaced types in
the object's namespace (for a cluster-scoped object, in the current
namespace; with -A in every namespace) and cluster-scoped types. Types that
cannot be listed (forbidden, or failing) are named on stderr at the end:
dependents of those types may be missing. The status costs one GET per
object in the tree whose type has a status subresource; other objects have
no status to show.

With --up, the tree goes the other way: below the object are its owners,
below each owner its own owners, up to objects that have none (one GET per
owner).`,
		Example: `  # What a Deployment owns: ReplicaSets, their Pods
  kdyn tree deployment web

  # The owners of a Pod, up to the top
  kdyn tree pod/web-5d9c7b9f4-x2x9z --up

  # What a cluster-scoped object owns, in every namespace
  kdyn tree clusterrole aggregate -A`,
		RunE: func(cmd *cobra.Command, args []string) error { return runTree(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.up, "up", false, "Show the owners of the object instead of its dependents.")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Look for dependents in every namespace, not only the object's (or the current) one.")
	fl.IntVar(&o.parallel, "parallel", 8, "Requests in flight at once while looking for dependents and statuses.")
	return cmd
}

// treeNode is one object of a tree.
type treeNode struct {
	Kind      string
	Name      string
	Namespace string
	Created   time.Time
	Status    string
	Children  []*treeNode

	uid types.UID
	gvr schema.GroupVersionResource
	// needsStatus: the type has a status subresource, so the object is
	// fetched to show one.
	needsStatus bool
}

func runTree(ctx context.Context, f *cli.Factory, o *treeOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("You must specify the object: kdyn tree TYPE NAME, or TYPE/NAME")
	}
	matches, err := f.Resolve(ctx, args)
	if err != nil {
		return err
	}
	if len(matches) != 1 || matches[0].Name == "" {
		return cli.Usagef("tree takes exactly one object: TYPE NAME, or TYPE/NAME")
	}
	root := matches[0]
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	client, err := f.DynamicClient()
	if err != nil {
		return err
	}
	rootNS := ""
	if root.Namespaced {
		rootNS = ns
	}
	obj, err := client.Resource(root.GVR).Namespace(rootNS).Get(ctx, root.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	top := nodeFromObject(obj, root.GVK.Kind, root.GVR)
	top.Status = objectStatus(obj.Object)
	m, err := f.RESTMapper()
	if err != nil {
		return err
	}
	// The user named the root, not the types searched: their deprecation
	// warnings would be noise.
	client, err = f.QuietDynamicClient()
	if err != nil {
		return err
	}
	var notSearched []string
	if o.up {
		addOwners(ctx, client, m, top, obj, map[types.UID]bool{top.uid: true}, 0)
	} else {
		// A namespaced object's dependents are in its namespace; a
		// cluster-scoped one's may be anywhere: the current namespace
		// unless -A.
		searchNS := ns
		switch {
		case o.allNamespaces:
			searchNS = metav1.NamespaceAll
		case root.Namespaced:
			searchNS = top.Namespace
		}
		var derr error
		notSearched, derr = addDependents(ctx, client, m, top, searchNS, max(1, o.parallel))
		if derr != nil {
			notSearched = append(notSearched, cli.ErrorMessage(derr))
		}
		fetchStatuses(ctx, client, top, max(1, o.parallel))
	}
	if err := renderTree(f.Streams.Out, top, time.Now()); err != nil {
		return err
	}
	if len(notSearched) > 0 {
		w := f.Streams.ErrOut
		fmt.Fprintf(w, "\nNot searched (%d):\n", len(notSearched))
		for _, s := range notSearched {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}

func nodeFromObject(obj metav1.Object, kind string, gvr schema.GroupVersionResource) *treeNode {
	return &treeNode{
		Kind: kind, Name: obj.GetName(), Namespace: obj.GetNamespace(), Created: obj.GetCreationTimestamp().Time,
		uid: obj.GetUID(), gvr: gvr,
	}
}

// ownedObject is a listed object that has owners.
type ownedObject struct {
	res  *discovery.Resource
	meta metav1.ObjectMeta
}

// addDependents lists the metadata of every listable type (namespaced
// types in ns, "" for all namespaces; cluster-scoped types), at most
// parallel at once, and hangs the objects owned by top, transitively,
// below it. It returns the types that could not be listed, and the
// partial-discovery error, if any.
func addDependents(ctx context.Context, client *dynamic.DynamicClient, m *restmapper.Mapper, top *treeNode, ns string, parallel int) ([]string, error) {
	resources, derr := m.Resources(ctx, restmapper.SupportsVerbs("list"))
	var (
		mu      sync.Mutex
		byOwner = map[types.UID][]*ownedObject{}
		failed  = map[int]string{}
		eg      errgroup.Group
	)
	// A type that cannot be listed is named in failed, not fatal: no
	// function returns an error to the group.
	eg.SetLimit(parallel)
	mc := client.Metadata()
	for i, r := range resources {
		eg.Go(func() error {
			if ctx.Err() != nil {
				return nil // cancelled while waiting for a slot
			}
			var lister dynamic.MetadataResourceInterface = mc.Resource(r.GVR())
			if r.Namespaced && ns != "" {
				lister = mc.Resource(r.GVR()).Namespace(ns)
			}
			opts := metav1.ListOptions{Limit: 500}
			for {
				l, err := lister.List(ctx, opts)
				if err != nil {
					mu.Lock()
					failed[i] = fmt.Sprintf("%s: %s", r.GVR().GroupResource(), cli.ErrorMessage(err))
					mu.Unlock()
					return nil
				}
				mu.Lock()
				for j := range l.Items {
					it := &l.Items[j]
					for _, ref := range it.OwnerReferences {
						byOwner[ref.UID] = append(byOwner[ref.UID], &ownedObject{res: r, meta: it.ObjectMeta})
					}
				}
				mu.Unlock()
				if l.Continue == "" {
					return nil
				}
				opts.Continue = l.Continue
			}
		})
	}
	_ = eg.Wait()
	hangDependents(top, byOwner, map[types.UID]bool{top.uid: true})
	var notSearched []string
	for i := range resources {
		if msg, ok := failed[i]; ok {
			notSearched = append(notSearched, msg)
		}
	}
	return notSearched, derr
}

// hangDependents adds the objects owned by n below it, recursively;
// ancestors stops ownership cycles. An object with two owners in the tree
// appears below both.
func hangDependents(n *treeNode, byOwner map[types.UID][]*ownedObject, ancestors map[types.UID]bool) {
	for _, o := range byOwner[n.uid] {
		if ancestors[o.meta.UID] {
			continue
		}
		child := nodeFromObject(&o.meta, o.res.Kind, o.res.GVR())
		child.needsStatus = hasStatusSubresource(o.res)
		ancestors[child.uid] = true
		hangDependents(child, byOwner, ancestors)
		delete(ancestors, child.uid)
		n.Children = append(n.Children, child)
	}
	sortTreeChildren(n)
}

func sortTreeChildren(n *treeNode) {
	sort.SliceStable(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

func hasStatusSubresource(r *discovery.Resource) bool {
	for _, s := range r.Subresources {
		if s.Name == "status" {
			return true
		}
	}
	return false
}

// fetchStatuses GETs, at most parallel at once, each object below top
// whose type has a status subresource, once per object, and sets its
// status. Errors leave the status empty.
func fetchStatuses(ctx context.Context, client *dynamic.DynamicClient, top *treeNode, parallel int) {
	byUID := map[types.UID][]*treeNode{}
	var walk func(n *treeNode)
	walk = func(n *treeNode) {
		if n != top && n.needsStatus {
			byUID[n.uid] = append(byUID[n.uid], n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(top)
	// A failed GET leaves that status empty and stops none of the others.
	var eg errgroup.Group
	eg.SetLimit(parallel)
	for _, nodes := range byUID {
		eg.Go(func() error {
			n := nodes[0]
			obj, err := client.Resource(n.gvr).Namespace(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return nil
			}
			st := objectStatus(obj.Object)
			for _, n := range nodes {
				n.Status = st
			}
			return nil
		})
	}
	_ = eg.Wait()
}

// addOwners hangs the owners of obj below n, recursively, with one GET
// per owner. seen stops cycles; depth bounds pathological chains.
func addOwners(ctx context.Context, client *dynamic.DynamicClient, m *restmapper.Mapper, n *treeNode, obj *unstructured.Unstructured, seen map[types.UID]bool, depth int) {
	if depth > 32 {
		return
	}
	for _, ref := range obj.GetOwnerReferences() {
		owner := &treeNode{Kind: ref.Kind, Name: ref.Name, uid: ref.UID}
		n.Children = append(n.Children, owner)
		if seen[ref.UID] {
			owner.Status = "(cycle)"
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			owner.Status = "bad apiVersion " + ref.APIVersion
			continue
		}
		mapping, err := m.RESTMappingWithContext(ctx, schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
		if err != nil {
			owner.Status = "unknown kind"
			continue
		}
		ns := ""
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = obj.GetNamespace()
		}
		owner.Namespace = ns
		o, err := client.Resource(mapping.Resource).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			owner.Status = "NotFound"
			continue
		case err != nil:
			owner.Status = string(apierrors.ReasonForError(err))
			if owner.Status == "" {
				owner.Status = "Error"
			}
			continue
		case o.GetUID() != ref.UID:
			owner.Status = "NotFound (another object has the name)"
			continue
		}
		owner.Created = o.GetCreationTimestamp().Time
		owner.Status = objectStatus(o.Object)
		seen[ref.UID] = true
		addOwners(ctx, client, m, owner, o, seen, depth+1)
		delete(seen, ref.UID)
	}
	sortTreeChildren(n)
}

// objectStatus is a short Ready-ish status: the Ready, Available or
// Established condition ("Ready", "NotReady (Reason)", "Ready=Unknown"),
// else status.phase, else "".
func objectStatus(obj map[string]any) string {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, want := range []string{"Ready", "Available", "Established"} {
		for _, c := range conds {
			cm, ok := c.(map[string]any)
			if !ok || cm["type"] != want {
				continue
			}
			status, _ := cm["status"].(string)
			reason, _ := cm["reason"].(string)
			switch status {
			case "True":
				return want
			case "False":
				if reason != "" {
					return "Not" + want + " (" + reason + ")"
				}
				return "Not" + want
			default:
				if status == "" {
					status = "Unknown"
				}
				return want + "=" + status
			}
		}
	}
	phase, _, _ := unstructured.NestedString(obj, "status", "phase")
	return phase
}

// renderTree prints the tree with box-drawing characters: NAME (Kind/name),
// AGE and STATUS columns, with NAMESPACE first when the tree spans more
// than one namespace (cluster-scoped objects count as one).
func renderTree(w io.Writer, top *treeNode, now time.Time) error {
	namespaces := map[string]bool{}
	var collect func(n *treeNode)
	collect = func(n *treeNode) {
		namespaces[n.Namespace] = true
		for _, c := range n.Children {
			collect(c)
		}
	}
	collect(top)
	withNS := len(namespaces) > 1
	tw := printers.NewTabWriter(w)
	header := []string{"NAME", "AGE", "STATUS"}
	if withNS {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if err := printers.WriteRow(tw, header); err != nil {
		return err
	}
	var emit func(n *treeNode, prefix, branch string) error
	emit = func(n *treeNode, prefix, branch string) error {
		age := "<unknown>"
		if !n.Created.IsZero() {
			age = duration.HumanDuration(now.Sub(n.Created))
		}
		cells := []string{prefix + branch + n.Kind + "/" + n.Name, age, n.Status}
		if withNS {
			ns := n.Namespace
			if ns == "" {
				ns = "-"
			}
			cells = append([]string{ns}, cells...)
		}
		if err := printers.WriteRow(tw, cells); err != nil {
			return err
		}
		childPrefix := prefix
		switch branch {
		case "├── ":
			childPrefix += "│   "
		case "└── ":
			childPrefix += "    "
		}
		for i, c := range n.Children {
			b := "├── "
			if i == len(n.Children)-1 {
				b = "└── "
			}
			if err := emit(c, childPrefix, b); err != nil {
				return err
			}
		}
		return nil
	}
	if err := emit(top, "", ""); err != nil {
		return err
	}
	return tw.Flush()
}
