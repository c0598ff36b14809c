package get

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

type getOptions struct {
	manifests         cli.ManifestFlags
	output            string
	templates         cli.TemplateFlags
	noHeaders         bool
	showLabels        bool
	showKind          bool
	labelColumns      []string
	selector          string
	fieldSelector     string
	shardSelector     string
	allNamespaces     bool
	sortBy            string
	chunkSize         int64
	ignoreNotFound    bool
	subresource       string
	raw               string
	watch             bool
	watchOnly         bool
	outputWatchEvents bool
	neat              bool
	showManagedFields bool
	failIfEmpty       bool
	allTypes          bool
	parallel          int
}

// NewCommand returns "kdyn get", with -w (see watch.go).
func NewCommand(f *cli.Factory) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get [(-o|--output=)FORMAT] TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] | TYPE/NAME...",
		Short: "Display one or many resources",
		Long: `Display one or many resources, of any type the server serves: built-in kinds,
CRDs (found even when created a moment ago) and aggregated APIs.

The default output is the server's own table (CRD printer columns included).
-o jsonl prints one object per line and streams page by page, so memory stays
flat on huge lists. -w keeps watching through server restarts and expired
resource versions, printing each change once.`,
		Example: `  # List pods, deployments and services in one go
  kdyn get pods,deploy,svc

  # One object as YAML, without server noise
  kdyn get deploy/web -o yaml --neat

  # Every ConfigMap in the cluster as JSON lines
  kdyn get cm -A -o jsonl

  # kubectl's JSONPath, or a gjson path per object
  kdyn get pods -o jsonpath='{.items[*].metadata.name}'
  kdyn get pods -o gjson=spec.containers.#.image

  # Sort, select and pick columns
  kdyn get pods -l app=web --sort-by=.metadata.creationTimestamp -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName

  # Watch pods and deployments together, one JSON event per line
  kdyn get pods,deploy -w -o jsonl --output-watch-events

  # Every listable type in a namespace
  kdyn get all-resources -n prod`,
		SuggestFor: []string{"list", "ls"},
		RunE:       func(cmd *cobra.Command, args []string) error { return runGet(cmd.Context(), f, o, args) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.output, "output", "o", "", "Output format: table (default), wide, name, json, yaml, jsonl, jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE, go-template-file=FILE, gjson=PATH, custom-columns=SPEC, custom-columns-file=FILE.")
	fl.BoolVar(&o.noHeaders, "no-headers", false, "Do not print headers (table and custom-columns output).")
	fl.BoolVar(&o.showLabels, "show-labels", false, "Show all labels as the last column.")
	fl.BoolVar(&o.showKind, "show-kind", false, "List the resource type with each name.")
	fl.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "Labels to show as columns (repeatable or comma-separated).")
	fl.StringVarP(&o.selector, "selector", "l", "", "Label selector (e.g. -l app=web,tier!=db).")
	fl.StringVar(&o.fieldSelector, "field-selector", "", "Field selector (e.g. --field-selector metadata.name=web).")
	fl.StringVar(&o.shardSelector, "shard-selector", "", "Shard selector of sharded list and watch (KEP-5866, feature gate ShardedListAndWatch), passed to the server as is, e.g. \"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')\".")
	fl.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List across all namespaces.")
	fl.StringVar(&o.sortBy, "sort-by", "", "Sort by a JSONPath ({.metadata.name}) or a gjson path (metadata.name).")
	fl.Int64Var(&o.chunkSize, "chunk-size", 500, "Return large lists in chunks of this size (0 = one request).")
	fl.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "Treat a named object that does not exist as no error.")
	fl.StringVar(&o.subresource, "subresource", "", "Get a subresource of the named objects (e.g. status, scale).")
	fl.StringVar(&o.raw, "raw", "", "GET this raw URI path from the server and print the answer.")
	fl.BoolVarP(&o.watch, "watch", "w", false, "After listing, watch for changes (resumes across disconnects).")
	fl.BoolVar(&o.watchOnly, "watch-only", false, "Watch for changes without listing first.")
	fl.BoolVar(&o.outputWatchEvents, "output-watch-events", false, "Print the watch event type (ADDED, MODIFIED, DELETED) with each object.")
	o.manifests.AddFlags(cmd, "with the objects to get")
	o.templates.Register(fl)
	fl.BoolVar(&o.showManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in json, yaml and jsonl output (kubectl hides them).")
	fl.BoolVar(&o.neat, "neat", false, "Drop managedFields, status, resourceVersion, uid, creationTimestamp, generation and last-applied-configuration.")
	fl.BoolVar(&o.failIfEmpty, "fail-if-empty", false, "Exit non-zero when nothing was found (code 3 with --exit-codes).")
	fl.BoolVar(&o.allTypes, "all-types", false, "Get every listable type (same as 'get all-resources').")
	fl.IntVar(&o.parallel, "parallel", 8, "Types listed at once by --all-types.")
	return cmd
}

// getTarget is one type to get, with the names asked for (none = list).
type getTarget struct {
	match restmapper.Match
	names []string
	multi bool   // print KIND/NAME
	ns    string // the objects' namespace when a manifest names it (-f)
}

func runGet(ctx context.Context, f *cli.Factory, o *getOptions, args []string) error {
	out, err := o.templates.Output(o.output)
	if err != nil {
		return err
	}
	if o.raw != "" {
		if len(args) > 0 {
			return cli.Usagef("arguments may not be passed when --raw is specified")
		}
		return cli.Raw(ctx, f, http.MethodGet, o.raw, nil)
	}
	if o.watchOnly {
		o.watch = true
	}
	if o.allTypes || (len(args) > 0 && (args[0] == "all-resources" || args[0] == "all-types")) {
		if len(args) > 1 || (o.allTypes && len(args) > 0) {
			return cli.Usagef("--all-types takes no resource arguments")
		}
		if o.subresource != "" {
			return cli.Usagef(subresourceNeedsNames)
		}
		return runGetAllTypes(ctx, f, o, out)
	}
	if o.manifests.Given() {
		if len(args) > 0 {
			return cli.FilesAndArgsError()
		}
		targets, err := manifestTargets(ctx, f, o)
		if err != nil {
			return err
		}
		ns, _, err := f.Namespace()
		if err != nil {
			return err
		}
		if o.watch {
			// One object is watched as by name; kubectl refuses more.
			if len(targets) != 1 || len(targets[0].names) != 1 {
				n := 0
				for _, t := range targets {
					n += len(t.names)
				}
				return fmt.Errorf("watch is only supported on individual resources and resource collections - %d resources were found", n)
			}
			if targets[0].ns != "" {
				ns = targets[0].ns
			}
			return runWatch(ctx, f, o, out, targets, ns)
		}
		g := &getter{f: f, o: o, out: out, ns: ns}
		return g.run(ctx, targets)
	}
	if len(args) == 0 {
		return cli.Usagef("You must specify the type of resource to get. Use \"kdyn api-resources\" for a complete list of supported resources.")
	}
	matches, err := f.Resolve(ctx, args)
	if err != nil {
		return err
	}
	targets := groupTargets(matches, args)
	for _, t := range targets {
		if o.subresource != "" && len(t.names) == 0 {
			return cli.Usagef(subresourceNeedsNames)
		}
	}
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
		for _, t := range targets {
			if len(t.names) > 0 && !o.manifests.Given() {
				return errors.New("a resource cannot be retrieved by name across all namespaces")
			}
		}
	}
	if o.watch {
		return runWatch(ctx, f, o, out, targets, ns)
	}
	g := &getter{f: f, o: o, out: out, ns: ns}
	return g.run(ctx, targets)
}

// manifestTargets are the objects of the manifests -f names, as kubectl's
// get -f reads them: each by its kind and name, in the manifest's namespace
// (else the command's), in file order; KIND/NAME when several kinds.
func manifestTargets(ctx context.Context, f *cli.Factory, o *getOptions) ([]getTarget, error) {
	named, err := cli.ManifestTargets(ctx, f, &o.manifests, "get")
	if err != nil {
		return nil, err
	}
	var targets []getTarget
	kinds := map[schema.GroupVersionKind]bool{}
	for _, t := range named {
		if t.Name == "" {
			return nil, fmt.Errorf("%s: the object has no metadata.name", t.Where)
		}
		kinds[t.Match.GVK] = true
		if n := len(targets); n > 0 && targets[n-1].match.GVR == t.Match.GVR && targets[n-1].ns == t.Namespace {
			targets[n-1].names = append(targets[n-1].names, t.Name)
			continue
		}
		targets = append(targets, getTarget{match: t.Match, names: []string{t.Name}, ns: t.Namespace})
	}
	for i := range targets {
		targets[i].multi = len(kinds) > 1
	}
	return targets, nil
}

// subresourceNeedsNames refuses --subresource on a list, as kubectl does.
const subresourceNeedsNames = "--subresource gets a subresource of named objects: name them (kdyn get TYPE NAME... --subresource=status); it cannot be used to list"

// groupTargets pairs each matched type with its names, in argument order.
func groupTargets(matches []restmapper.Match, args []string) []getTarget {
	var targets []getTarget
	index := map[schema.GroupVersionResource]int{}
	for _, m := range matches {
		i, ok := index[m.GVR]
		if !ok {
			i = len(targets)
			index[m.GVR] = i
			targets = append(targets, getTarget{match: m})
		}
		if m.Name != "" {
			targets[i].names = append(targets[i].names, m.Name)
		}
	}
	multi := len(targets) > 1 || strings.Contains(args[0], "/")
	for _, a := range strings.Split(args[0], ",") {
		if len(matches) > 0 && isCategoryArg(matches, a) {
			multi = true
		}
	}
	for i := range targets {
		targets[i].multi = multi
	}
	return targets
}

func isCategoryArg(matches []restmapper.Match, arg string) bool {
	n := 0
	for _, m := range matches {
		if m.Arg == arg {
			n++
		}
	}
	return n > 1
}

type getter struct {
	f   *cli.Factory
	o   *getOptions
	out cli.OutputSpec
	ns  string

	printed int
	failed  bool
	// firstErr is the first per-object error, whose kind --exit-codes
	// reports.
	firstErr error
}

func (g *getter) listOptions() metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: g.o.selector, FieldSelector: g.o.fieldSelector, ShardSelector: g.o.shardSelector}
}

func (g *getter) nsFor(t getTarget) string {
	switch {
	case !t.match.Namespaced:
		return ""
	case t.ns != "":
		return t.ns
	}
	return g.ns
}

// single reports whether exactly one object is asked for by name, which
// json/yaml/jsonpath print alone rather than as a List.
func single(targets []getTarget) bool {
	return len(targets) == 1 && len(targets[0].names) == 1
}

func (g *getter) run(ctx context.Context, targets []getTarget) error {
	if g.out.IsTable() {
		if err := g.runTables(ctx, targets); err != nil {
			return err
		}
	} else {
		if err := g.runObjects(ctx, targets); err != nil {
			return err
		}
	}
	return g.finish(targets)
}

func (g *getter) finish(targets []getTarget) error {
	anyNamed := false
	for _, t := range targets {
		if len(t.names) > 0 {
			anyNamed = true
		}
	}
	if g.printed == 0 && !g.failed && !anyNamed {
		g.printNoResources(targets)
		if g.o.failIfEmpty {
			return &cli.ExitError{Code: cli.FailureCode(g.f, cli.ErrEmpty), Silent: !g.f.Flags.ExitCodes, Err: cli.ErrEmpty}
		}
	}
	if g.failed {
		// The errors are printed already; the exit code names the first
		// (3 for a not-found object, 5 for a forbidden one, … with
		// --exit-codes).
		return &cli.ExitError{Code: cli.ExitCode(g.firstErr, g.f.Flags.ExitCodes), Silent: true}
	}
	return nil
}

// printNoResources says that nothing was found, as kubectl does for its
// human-readable output (the table, wide) only: an object output (json,
// yaml, name, a template, …) prints its empty result and nothing else.
func (g *getter) printNoResources(targets []getTarget) {
	// --ignore-not-found silences it too, as in kubectl.
	if !g.out.IsTable() || g.o.ignoreNotFound {
		return
	}
	namespaced := false
	for _, t := range targets {
		if t.match.Namespaced {
			namespaced = true
		}
	}
	if g.ns != "" && namespaced {
		fmt.Fprintf(g.f.Streams.ErrOut, "No resources found in %s namespace.\n", g.ns)
	} else {
		fmt.Fprintln(g.f.Streams.ErrOut, "No resources found")
	}
}

// reportError prints a per-object error and marks the command failed,
// unless it is a not-found that --ignore-not-found forgives.
func (g *getter) reportError(err error) {
	if g.o.ignoreNotFound && apierrors.IsNotFound(err) {
		return
	}
	if !g.failed {
		g.firstErr = err
	}
	g.failed = true
	cli.PrintError(g.f.Streams.ErrOut, err)
}

// reportTargetError is reportError for a request about target t: when the
// server says it does not serve the resource at all (the cached discovery
// was stale, e.g. a deleted CRD), discovery is asked again and the error is
// worded as the resource type's absence, with suggestions.
func (g *getter) reportTargetError(ctx context.Context, t getTarget, err error) {
	if cli.IsTypeNotFound(err) && t.match.Arg != "" {
		if m, merr := g.f.RESTMapper(); merr == nil && m.Refresh(ctx) == nil {
			if _, rerr := m.ResolveTypes(ctx, t.match.Arg); rerr != nil {
				err = rerr
			}
		}
	}
	g.reportError(err)
}

func kindPrefix(m restmapper.Match) string {
	gk := m.GVK.GroupKind()
	return strings.ToLower(gk.String())
}

// runTables prints the server's Table for each target, one table per type
// separated by blank lines, as kubectl does.
func (g *getter) runTables(ctx context.Context, targets []getTarget) error {
	client, err := g.f.DynamicClient()
	if err != nil {
		return err
	}
	w := g.f.Streams.Out
	var sortKey func(*unstructured.Unstructured) string
	if g.o.sortBy != "" {
		if sortKey, err = printers.SortKey(g.o.sortBy); err != nil {
			return err
		}
	}
	topts := dynamic.TableOptions{}
	if sortKey != nil {
		topts.IncludeObject = metav1.IncludeObject
	}
	tablesPrinted := 0
	for _, t := range targets {
		tr := client.Tables().Resource(t.match.GVR).Namespace(g.nsFor(t))
		var table *metav1.Table
		add := func(part *metav1.Table) {
			if table == nil {
				table = part
				return
			}
			table.Rows = append(table.Rows, part.Rows...)
		}
		if len(t.names) > 0 {
			for _, name := range t.names {
				part, err := tr.Get(ctx, name, metav1.GetOptions{}, topts, cli.Subresources(g.o.subresource)...)
				if err != nil {
					g.reportTargetError(ctx, t, err)
					continue
				}
				add(part)
			}
		} else {
			opts := g.listOptions()
			opts.Limit = g.o.chunkSize
			for {
				part, err := tr.List(ctx, opts, topts)
				if err != nil {
					g.reportTargetError(ctx, t, err)
					break
				}
				add(part)
				if part.Continue == "" || g.o.chunkSize <= 0 {
					break
				}
				opts.Continue = part.Continue
			}
		}
		if table == nil || len(table.Rows) == 0 {
			continue
		}
		if sortKey != nil {
			printers.SortRows(table, sortKey, printers.LessValue)
		}
		popts := printers.TableOptions{
			NoHeaders: g.o.noHeaders, Wide: g.out.Kind == cli.OutWide, ShowLabels: g.o.showLabels, LabelColumns: g.o.labelColumns,
			WithNamespace: g.o.allNamespaces && t.match.Namespaced,
		}
		if t.multi || g.o.showKind {
			popts.KindPrefix = kindPrefix(t.match)
		}
		if tablesPrinted > 0 && !g.o.noHeaders {
			fmt.Fprintln(w)
		}
		tw := printers.NewTabWriter(w)
		if err := printers.PrintTable(tw, table, popts); err != nil {
			return err
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		tablesPrinted++
		g.printed += len(table.Rows)
	}
	return nil
}

// runObjects streams objects of every target through one printer.
func (g *getter) runObjects(ctx context.Context, targets []getTarget) error {
	p, err := g.out.ObjectPrinter(g.f.Streams.Out, g.o.noHeaders)
	if err != nil {
		return err
	}
	var sortKey func(*unstructured.Unstructured) string
	if g.o.sortBy != "" {
		if sortKey, err = printers.SortKey(g.o.sortBy); err != nil {
			return err
		}
	}
	if err := p.Begin(single(targets) && sortKey == nil); err != nil {
		return err
	}
	var held []*printers.Item
	emit := func(it *printers.Item) error {
		if g.o.neat {
			obj, err := it.Object()
			if err != nil {
				return err
			}
			it = printers.ItemFromObject(kunstructured.Neat(obj, kunstructured.NeatOptions{KeepStatus: g.o.subresource == "status"}))
		}
		g.printed++
		if sortKey != nil {
			held = append(held, it)
			return nil
		}
		return p.Print(it)
	}
	rc, err := g.f.RESTClient()
	if err != nil {
		return err
	}
	for _, t := range targets {
		if len(t.names) > 0 {
			for _, name := range t.names {
				raw, err := g.getRaw(ctx, rc, t, name)
				if err != nil {
					g.reportTargetError(ctx, t, err)
					continue
				}
				if !g.keepManagedFields() {
					raw = printers.StripManagedFieldsJSON(raw)
				}
				if err := emit(printers.ItemFromRaw(raw)); err != nil {
					return err
				}
			}
			continue
		}
		opts := g.listOptions()
		opts.Limit = g.o.chunkSize
		if err := g.printPages(ctx, rc, t, opts, emit); err != nil {
			return err
		}
	}
	if sortKey != nil {
		keys := make([]string, len(held))
		for i, it := range held {
			obj, err := it.Object()
			if err != nil {
				return err
			}
			keys[i] = sortKey(obj)
		}
		idx := make([]int, len(held))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return printers.LessValue(keys[idx[a]], keys[idx[b]]) })
		for _, i := range idx {
			if err := p.Print(held[i]); err != nil {
				return err
			}
		}
	}
	return p.Finish()
}

// printPages streams one target's pages (fetched ahead, see fetchPages)
// through emit.
func (g *getter) printPages(ctx context.Context, rc *rest.Client, t getTarget, opts metav1.ListOptions, emit func(*printers.Item) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for p := range fetchPages(ctx, rc, t.match.GVR, g.nsFor(t), opts, g.o.chunkSize > 0) {
		if p.err != nil {
			g.reportTargetError(ctx, t, p.err)
			return nil
		}
		var itemErr error
		if _, err := eachListItem(p.body, g.keepManagedFields(), func(raw []byte) bool {
			itemErr = emit(printers.ItemFromRaw(raw))
			return itemErr == nil
		}); err != nil {
			return err
		}
		if itemErr != nil {
			return itemErr
		}
	}
	return nil
}

// keepManagedFields reports whether printed objects keep
// metadata.managedFields: kubectl hides them in json and yaml output
// unless --show-managed-fields; kdyn does the same for jsonl and name
// output, and keeps them for queries (jsonpath, gjson, custom-columns,
// --sort-by), which may ask for them.
func (g *getter) keepManagedFields() bool {
	if g.o.showManagedFields {
		return true
	}
	switch g.out.Kind {
	case cli.OutJSON, cli.OutYAML, cli.OutJSONL, cli.OutName:
		return g.o.sortBy != ""
	}
	return true
}

func (g *getter) getRaw(ctx context.Context, rc *rest.Client, t getTarget, name string) ([]byte, error) {
	req := cli.ResourceRequest(rc.Get(), t.match.GVR, g.nsFor(t)).Name(name)
	if g.o.subresource != "" {
		req = req.SubResource(g.o.subresource)
	}
	return req.DoRaw(ctx)
}

// runGetAllTypes lists every listable type in parallel (bounded),
// tolerating types the user may not list; those are reported at the end.
func runGetAllTypes(ctx context.Context, f *cli.Factory, o *getOptions, out cli.OutputSpec) error {
	m, err := f.RESTMapper()
	if err != nil {
		return err
	}
	verbs := []string{"list"}
	if o.watch {
		verbs = append(verbs, "watch")
	}
	resources, derr := m.Resources(ctx, restmapper.SupportsVerbs(verbs...))
	ns, _, err := f.Namespace()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		ns = ""
	}
	var targets []getTarget
	for _, r := range resources {
		if ns != "" && !r.Namespaced && !o.allNamespaces {
			continue // like kubectl's namespaced view: only namespaced types in a namespace
		}
		targets = append(targets, getTarget{match: restmapper.Match{GVR: r.GVR(), GVK: r.GVK(), Namespaced: r.Namespaced, Resource: r}, multi: true})
	}
	// Probe each type in parallel; print in discovery order.
	type probe struct {
		empty bool
		err   error
	}
	probes := make([]probe, len(targets))
	rc, err := f.RESTClient()
	if err != nil {
		return err
	}
	// A type that cannot be listed is reported, not fatal: each probe keeps
	// its own error and returns none to the group.
	var eg errgroup.Group
	eg.SetLimit(max(1, o.parallel))
	for i, t := range targets {
		eg.Go(func() error {
			tns := ns
			if !t.match.Namespaced {
				tns = ""
			}
			page, err := cli.ListRaw(ctx, rc, t.match.GVR, tns, metav1.ListOptions{Limit: 1, LabelSelector: o.selector, FieldSelector: o.fieldSelector, ShardSelector: o.shardSelector})
			if err != nil {
				probes[i].err = err
				return nil
			}
			probes[i].empty = gjson.GetBytes(page, "items.#").Int() == 0
			return nil
		})
	}
	_ = eg.Wait()
	var keep, listable []getTarget
	var denied []string
	for i, t := range targets {
		switch {
		case probes[i].err != nil:
			denied = append(denied, fmt.Sprintf("%s: %s", t.match.GVR.GroupResource(), cli.ErrorMessage(probes[i].err)))
		default:
			listable = append(listable, t)
			if !probes[i].empty {
				keep = append(keep, t)
			}
		}
	}
	reportDenied := func() {
		if len(denied) > 0 || derr != nil {
			w := f.Streams.ErrOut
			if len(denied) > 0 {
				fmt.Fprintf(w, "\nNot listed (%d types):\n", len(denied))
			} else {
				fmt.Fprintf(w, "\nNot listed (discovery failed for some groups):\n")
			}
			for _, d := range denied {
				fmt.Fprintf(w, "  %s\n", d)
			}
			if derr != nil {
				fmt.Fprintf(w, "  %s\n", cli.ErrorMessage(derr))
			}
		}
	}
	if o.watch {
		// Every type that may be listed is watched, the empty ones too;
		// the watch lasts until interrupted, so the types left out are
		// reported first.
		reportDenied()
		if len(listable) == 0 {
			return nil
		}
		return runWatch(ctx, f, o, out, listable, ns)
	}
	g := &getter{f: f, o: o, out: out, ns: ns}
	var result error
	if len(keep) > 0 {
		if err := g.run(ctx, keep); err != nil {
			return err
		}
	} else {
		g.printNoResources(targets)
		if o.failIfEmpty {
			result = &cli.ExitError{Code: cli.FailureCode(f, cli.ErrEmpty), Silent: !f.Flags.ExitCodes, Err: cli.ErrEmpty}
		}
	}
	reportDenied()
	return result
}
