package get

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/informer"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// watchSession prints the changes of several types at once, each followed
// by informer.Follow. Unlike kubectl's, a watch does not end when the
// server closes the stream: it resumes from the last resourceVersion seen,
// and after a 410 (expired resourceVersion) it relists and prints only
// what changed — each object version is printed once, and objects deleted
// meanwhile are printed as DELETED. Failures after the first list are
// reported on stderr and retried with a backoff; 400, 401, 403 and 404
// end the command.
type watchSession struct {
	f   *cli.Factory
	o   *getOptions
	out cli.OutputSpec
	ns  string

	mu      sync.Mutex
	p       printers.Printer
	tw      *tabwriter.Writer
	headers map[string]bool
}

func runWatch(ctx context.Context, f *cli.Factory, o *getOptions, out cli.OutputSpec, targets []getTarget, ns string) error {
	ctx, timeout, stop, err := f.WatchContext(ctx)
	if err != nil {
		return err
	}
	defer stop()
	s := &watchSession{f: f, o: o, out: out, ns: ns, headers: map[string]bool{}}
	if !out.IsTable() {
		if out.Kind == cli.OutJSONPath || (out.Kind == cli.OutGJSON && strings.HasPrefix(out.Arg, "items")) {
			return cli.Usagef("-o %s needs the whole list and cannot be used with --watch", o.output)
		}
		p, err := out.ObjectPrinter(f.Streams.Out, o.noHeaders)
		if err != nil {
			return err
		}
		if yp, ok := p.(*printers.YAMLPrinter); ok {
			yp.Separate = true
		}
		if err := p.Begin(true); err != nil {
			return err
		}
		if jp, ok := p.(*printers.JSONPrinter); ok {
			_ = jp
			p = &eachJSON{w: f.Streams.Out}
		}
		s.p = p
	} else {
		s.tw = printers.NewTabWriter(f.Streams.Out)
	}
	// One target's failure ends them all.
	g, gctx := errgroup.WithContext(ctx)
	for _, t := range targets {
		g.Go(func() error { return s.watchTarget(gctx, t) })
	}
	if err := g.Wait(); err != nil && ctx.Err() == nil {
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// As kubectl, which logs the watch's end at -v 5: why it ended.
		f.Logger().V(1).Info("watch ended: the request timeout passed", "timeout", timeout.String(), "error", ctx.Err().Error())
	}
	return nil
}

// eachJSON prints each object as its own pretty JSON document (kubectl's
// -o json under --watch).
type eachJSON struct {
	w interface{ Write([]byte) (int, error) }
}

func (e *eachJSON) Begin(bool) error { return nil }
func (e *eachJSON) Print(it *printers.Item) error {
	p := printers.NewJSONPrinter(e.w)
	_ = p.Begin(true)
	if err := p.Print(it); err != nil {
		return err
	}
	return p.Finish()
}
func (e *eachJSON) Finish() error { return nil }

// tracked is one object as get --watch prints it, and the last version
// printed of it.
type tracked struct {
	key, name, rv string
	obj           *unstructured.Unstructured // object output
	row           *metav1.TableRow           // table output
}

type targetWatch struct {
	s       *watchSession
	t       getTarget
	ns      string
	printed map[string]*tracked
	seen    map[string]bool // the keys of the list in progress
	lists   int             // lists complete
	table   *metav1.Table   // column definitions, for table output
}

func (s *watchSession) watchTarget(ctx context.Context, t getTarget) error {
	tw := &targetWatch{s: s, t: t, ns: s.ns, printed: map[string]*tracked{}}
	if !t.match.Namespaced {
		tw.ns = ""
	}
	client, err := s.f.DynamicClient()
	if err != nil {
		return err
	}
	// As kubectl, which gets named objects before it watches them: one
	// that does not exist is an error (NotFound), not an empty watch.
	for _, name := range t.names {
		if _, err := client.Resource(t.match.GVR).Namespace(tw.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	if !s.out.IsTable() {
		return follow(ctx, tw, cli.ResourceSource(client.Resource(t.match.GVR).Namespace(tw.ns)), func(u *unstructured.Unstructured) []tracked {
			return []tracked{{key: informer.Key(u), name: u.GetName(), rv: u.GetResourceVersion(), obj: u}}
		})
	}
	rc, err := s.f.RESTClient()
	if err != nil {
		return err
	}
	src := &tableSource{tables: client.Tables().Resource(t.match.GVR).Namespace(tw.ns), rc: rc, gvr: t.match.GVR, ns: tw.ns}
	return follow(ctx, tw, src, tw.rows)
}

// follow prints what informer.Follow sees of one target: the first list
// (recorded only, with --watch-only), then each change. A list after a
// 410 prints what differs from what was printed: new or changed objects,
// and DELETED for objects that are gone. items turns what the source hands
// over into printable items.
func follow[T informer.Object](ctx context.Context, tw *targetWatch, src informer.Source[T], items func(T) []tracked) error {
	pageSize := tw.s.o.chunkSize
	if pageSize <= 0 {
		pageSize = -1 // one request
	}
	return informer.Follow(ctx, src, informer.FollowOptions{
		ListOptions: tw.listOptions(),
		PageSize:    pageSize,
		FailFast:    true,
		OnError: func(err error) error {
			tw.s.warn(tw.t, err)
			return nil
		},
	}, informer.FollowFuncs[T]{
		Page: func(page []T, first, last bool) (bool, error) {
			var its []tracked
			for _, obj := range page {
				its = append(its, items(obj)...)
			}
			return false, tw.listed(its, first, last)
		},
		Event: func(typ watch.EventType, obj T) (bool, error) {
			return false, tw.event(typ, items(obj))
		},
	})
}

func (s *watchSession) warn(t getTarget, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintln(s.f.Streams.ErrOut, cli.ResumingMessage(t.match.GVR.GroupResource().String(), err))
}

func (tw *targetWatch) listOptions() metav1.ListOptions {
	opts := metav1.ListOptions{LabelSelector: tw.s.o.selector, FieldSelector: tw.s.o.fieldSelector, ShardSelector: tw.s.o.shardSelector}
	if len(tw.t.names) == 1 {
		sel := "metadata.name=" + tw.t.names[0]
		if opts.FieldSelector != "" {
			sel = opts.FieldSelector + "," + sel
		}
		opts.FieldSelector = sel
	}
	return opts
}

func (tw *targetWatch) wanted(name string) bool {
	if len(tw.t.names) <= 1 {
		return true
	}
	for _, n := range tw.t.names {
		if n == name {
			return true
		}
	}
	return false
}

// listed prints one page of a list: what differs from what was printed
// (nothing of the first list with --watch-only, which only records it),
// and after the last page DELETED for the objects the list did not have.
// A page is printed at once, so that its rows form one aligned table.
func (tw *targetWatch) listed(items []tracked, first, last bool) error {
	if first {
		tw.seen = map[string]bool{}
	}
	print := tw.lists > 0 || !tw.s.o.watchOnly
	var batch []watchEvent
	for _, it := range items {
		if !tw.wanted(it.name) {
			continue
		}
		tw.seen[it.key] = true
		prev := tw.printed[it.key]
		if prev != nil && prev.rv == it.rv {
			continue
		}
		ev := watch.Modified
		if prev == nil {
			ev = watch.Added
		}
		tw.printed[it.key] = &it
		if print {
			batch = append(batch, watchEvent{typ: ev, it: &it})
		}
	}
	if err := tw.emit(batch...); err != nil || !last {
		return err
	}
	tw.lists++
	batch = nil
	for key, prev := range tw.printed {
		if !tw.seen[key] {
			delete(tw.printed, key)
			batch = append(batch, watchEvent{typ: watch.Deleted, it: prev})
		}
	}
	return tw.emit(batch...)
}

// event prints the items of one watch event, but not an object version
// printed already.
func (tw *targetWatch) event(typ watch.EventType, items []tracked) error {
	for _, it := range items {
		if !tw.wanted(it.name) {
			continue
		}
		if typ == watch.Deleted {
			delete(tw.printed, it.key)
		} else {
			if prev := tw.printed[it.key]; prev != nil && prev.rv == it.rv {
				continue
			}
			tw.printed[it.key] = &it
		}
		if err := tw.emit(watchEvent{typ: typ, it: &it}); err != nil {
			return err
		}
	}
	return nil
}

// rows are the printable items of table output, and keep the Table's
// column definitions for the header.
func (tw *targetWatch) rows(r *tableRows) []tracked {
	if len(r.columns) > 0 && (tw.table == nil || len(tw.table.ColumnDefinitions) == 0) {
		tw.table = &metav1.Table{ColumnDefinitions: r.columns}
	}
	out := make([]tracked, 0, len(r.rows))
	for _, row := range r.rows {
		if md, ok := printers.RowObject(row); ok {
			out = append(out, tracked{key: informer.Key(md), name: md.GetName(), rv: md.GetResourceVersion(), row: row})
		}
	}
	return out
}

// watchEvent is one change to print.
type watchEvent struct {
	typ watch.EventType
	it  *tracked
}

// emit prints events together, serialized across the session, and flushes
// the output once after them.
func (tw *targetWatch) emit(events ...watchEvent) error {
	if len(events) == 0 {
		return nil
	}
	s := tw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		if err := tw.print(e.typ, e.it); err != nil {
			return err
		}
	}
	if s.out.IsTable() {
		return s.tw.Flush()
	}
	if fl, ok := s.p.(cli.Flusher); ok {
		return fl.Flush()
	}
	return nil
}

// print writes one event, unflushed; the caller holds s.mu.
func (tw *targetWatch) print(ev watch.EventType, it *tracked) error {
	s := tw.s
	if s.out.IsTable() {
		popts := printers.TableOptions{
			NoHeaders: s.o.noHeaders, Wide: s.out.Kind == cli.OutWide, ShowLabels: s.o.showLabels, LabelColumns: s.o.labelColumns,
			WithNamespace: s.o.allNamespaces && tw.t.match.Namespaced,
		}
		if tw.t.multi || s.o.showKind {
			popts.KindPrefix = kindPrefix(tw.t.match)
		}
		if s.o.outputWatchEvents {
			popts.EventType = string(ev)
		}
		key := tw.t.match.GVR.String()
		if !s.headers[key] && !s.o.noHeaders && tw.table != nil {
			s.headers[key] = true
			printers.WriteRow(s.tw, printers.Headers(tw.table, popts))
		}
		return printers.WriteRow(s.tw, printers.RowCells(tw.table, it.row, popts))
	}
	obj := it.obj
	if s.o.neat {
		obj = kunstructured.Neat(obj, kunstructured.NeatOptions{})
	} else if !(&getter{o: s.o, out: s.out}).keepManagedFields() && len(obj.GetManagedFields()) > 0 {
		obj = kunstructured.StripManagedFields(obj)
	}
	item := printers.ItemFromObject(obj)
	if s.o.outputWatchEvents && s.out.Kind != cli.OutName {
		// The printers see the event, as kubectl's do; -o name prints the
		// object's name alone, as kubectl's does.
		raw, err := item.Raw()
		if err != nil {
			return err
		}
		event := &unstructured.Unstructured{Object: map[string]any{"type": string(ev), "object": obj.Object}}
		item = printers.ItemFromRawObject([]byte(fmt.Sprintf(`{"type":%q,"object":%s}`, ev, raw)), event)
	}
	return s.p.Print(item)
}
