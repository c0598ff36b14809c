package get

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// watchSession prints the changes of several types at once. Unlike
// kubectl's, a watch does not end when the server closes the stream: it
// resumes from the last resourceVersion seen, and after a 410 (expired
// resourceVersion) it relists and prints only what changed — each object
// version is printed once, and objects deleted meanwhile are printed as
// DELETED.
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
	// --request-timeout bounds a watch as kubectl's: it ends then, without
	// an error.
	timeout, err := f.RequestTimeout()
	if err != nil {
		return err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
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
	errs := make(chan error, len(targets))
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.watchTarget(ctx, t)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && ctx.Err() == nil {
			return err
		}
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

// tracked is the last version printed of one object.
type tracked struct {
	rv  string
	obj *unstructured.Unstructured // object output
	row *metav1.TableRow           // table output
}

type targetWatch struct {
	s       *watchSession
	t       getTarget
	ns      string
	printed map[string]*tracked
	table   *metav1.Table // column definitions, for table output
}

func (s *watchSession) watchTarget(ctx context.Context, t getTarget) error {
	tw := &targetWatch{s: s, t: t, ns: s.ns, printed: map[string]*tracked{}}
	if !t.match.Namespaced {
		tw.ns = ""
	}
	rv, err := tw.relist(ctx, !s.o.watchOnly)
	if err != nil {
		return err
	}
	backoff := time.Second
	needRelist := false
	for ctx.Err() == nil {
		if needRelist {
			// After a 410 the only way back is a full relist: retry it until
			// it works, so that what changed (and what was deleted) while the
			// stream was gone is printed, rather than watching from "now".
			next, err := tw.relist(ctx, true)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.warn(t, err)
				if !s.sleep(ctx, &backoff) {
					return nil
				}
				continue
			}
			rv, needRelist = next, false
		}
		next, gone, err := tw.watchOnce(ctx, rv)
		if next != "" {
			// Keep the last resourceVersion seen, whatever ended the stream:
			// resuming from an older one makes the server send (and us print)
			// versions again.
			rv = next
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case gone:
			needRelist = true
			continue
		case err != nil:
			if apierrors.IsForbidden(err) {
				return err
			}
			s.warn(t, err)
			if !s.sleep(ctx, &backoff) {
				return nil
			}
			continue
		}
		backoff = time.Second
	}
	return nil
}

func (s *watchSession) sleep(ctx context.Context, backoff *time.Duration) bool {
	d := *backoff + time.Duration(rand.Int64N(int64(*backoff/2)+1))
	*backoff = min(*backoff*2, 30*time.Second)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func (s *watchSession) warn(t getTarget, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.f.Streams.ErrOut, "watch of %s interrupted, resuming: %s\n", t.match.GVR.GroupResource(), strings.TrimPrefix(cli.ErrorMessage(err), "error: "))
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

// relist lists the type (paged) and prints what differs from what was
// printed: new or changed objects, and DELETED for objects that are gone.
// With print false (--watch-only) it only records the state. It returns
// the list's resourceVersion to watch from.
func (tw *targetWatch) relist(ctx context.Context, print bool) (string, error) {
	client, err := tw.s.f.DynamicClient()
	if err != nil {
		return "", err
	}
	opts := tw.listOptions()
	opts.Limit = tw.s.o.chunkSize
	seen := map[string]bool{}
	listRV := ""
	first := len(tw.printed) == 0
	for {
		var items []tracked
		var keys []string
		var cont string
		if tw.s.out.IsTable() {
			tbl, err := client.Tables().Resource(tw.t.match.GVR).Namespace(tw.ns).List(ctx, opts, dynamic.TableOptions{})
			if err != nil {
				return "", err
			}
			if tw.table == nil {
				tw.table = &metav1.Table{ColumnDefinitions: tbl.ColumnDefinitions}
			}
			if listRV == "" {
				listRV = tbl.ResourceVersion
			}
			cont = tbl.Continue
			for i := range tbl.Rows {
				row := &tbl.Rows[i]
				md, ok := rowMetadata(row)
				if !ok || !tw.wanted(md.GetName()) {
					continue
				}
				keys = append(keys, md.GetNamespace()+"/"+md.GetName())
				items = append(items, tracked{rv: md.GetResourceVersion(), row: row})
			}
		} else {
			l, err := client.Resource(tw.t.match.GVR).Namespace(tw.ns).List(ctx, opts)
			if err != nil {
				return "", err
			}
			if listRV == "" {
				listRV = l.GetResourceVersion()
			}
			cont = l.GetContinue()
			for i := range l.Items {
				obj := &l.Items[i]
				if !tw.wanted(obj.GetName()) {
					continue
				}
				keys = append(keys, obj.GetNamespace()+"/"+obj.GetName())
				items = append(items, tracked{rv: obj.GetResourceVersion(), obj: obj})
			}
		}
		// A page is printed at once, so that its rows form one aligned table.
		var batch []watchEvent
		for i, key := range keys {
			seen[key] = true
			prev := tw.printed[key]
			if prev != nil && prev.rv == items[i].rv {
				continue
			}
			ev := watch.Modified
			if prev == nil {
				ev = watch.Added
			}
			it := items[i]
			tw.printed[key] = &it
			if print {
				batch = append(batch, watchEvent{typ: ev, it: &it})
			}
		}
		if err := tw.emit(batch...); err != nil {
			return "", err
		}
		if cont == "" || tw.s.o.chunkSize <= 0 {
			break
		}
		opts.Continue = cont
	}
	if !first {
		var batch []watchEvent
		for key, prev := range tw.printed {
			if !seen[key] {
				delete(tw.printed, key)
				batch = append(batch, watchEvent{typ: watch.Deleted, it: prev})
			}
		}
		if err := tw.emit(batch...); err != nil {
			return "", err
		}
	}
	return listRV, nil
}

// watchOnce watches from rv until the stream ends. It returns the last
// resourceVersion seen, and gone=true when the server said rv is too old.
func (tw *targetWatch) watchOnce(ctx context.Context, rv string) (last string, gone bool, err error) {
	rc, err := tw.s.f.RESTClient()
	if err != nil {
		return "", false, err
	}
	opts := tw.listOptions()
	opts.ResourceVersion = rv
	opts.AllowWatchBookmarks = true
	opts.Watch = true
	opts.TimeoutSeconds = ptr.To(int64(300 + rand.IntN(300)))
	req := cli.ResourceRequest(rc.Get(), tw.t.match.GVR, tw.ns).VersionedParams(&opts)
	if tw.s.out.IsTable() {
		req = req.Accept(dynamic.AcceptTable)
	}
	w, err := req.Watch(ctx)
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return "", true, nil
		}
		return "", false, err
	}
	defer w.Stop()
	last = rv
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			st, _ := ev.Object.(*metav1.Status)
			if st != nil && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
				return last, true, nil
			}
			if st != nil {
				return last, false, &apierrors.StatusError{ErrStatus: *st}
			}
			return last, false, fmt.Errorf("watch error")
		case watch.Bookmark:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				if v := u.GetResourceVersion(); v != "" {
					last = v
				}
			}
			continue
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		items, err := tw.eventItems(u)
		if err != nil {
			return last, false, err
		}
		for _, it := range items {
			var md metav1.Object
			if it.obj != nil {
				md = it.obj
			} else if m, ok := rowMetadata(it.row); ok {
				md = m
			} else {
				continue
			}
			if md.GetResourceVersion() != "" {
				last = md.GetResourceVersion()
			}
			if !tw.wanted(md.GetName()) {
				continue
			}
			key := md.GetNamespace() + "/" + md.GetName()
			prev := tw.printed[key]
			if ev.Type == watch.Deleted {
				delete(tw.printed, key)
			} else {
				if prev != nil && prev.rv == it.rv {
					continue
				}
				cp := it
				tw.printed[key] = &cp
			}
			if err := tw.emit(watchEvent{typ: ev.Type, it: &it}); err != nil {
				return last, false, err
			}
		}
	}
	return last, false, nil
}

// eventItems turns an event object into printable items: the object, or
// the rows of a Table for table output.
func (tw *targetWatch) eventItems(u *unstructured.Unstructured) ([]tracked, error) {
	if !tw.s.out.IsTable() {
		return []tracked{{rv: u.GetResourceVersion(), obj: u}}, nil
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	var tbl metav1.Table
	if err := utiljson.Unmarshal(b, &tbl); err != nil {
		return nil, err
	}
	if tw.table == nil || len(tw.table.ColumnDefinitions) == 0 {
		tw.table = &metav1.Table{ColumnDefinitions: tbl.ColumnDefinitions}
	}
	var out []tracked
	for i := range tbl.Rows {
		row := &tbl.Rows[i]
		md, ok := rowMetadata(row)
		if !ok {
			continue
		}
		out = append(out, tracked{rv: md.GetResourceVersion(), row: row})
	}
	return out, nil
}

func rowMetadata(row *metav1.TableRow) (*unstructured.Unstructured, bool) {
	return printers.RowObject(row)
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
