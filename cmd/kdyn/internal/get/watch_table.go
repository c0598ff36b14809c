package get

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/rest"
)

// tableRows are rows of a Table the server printed, as get --watch follows
// them in table output: one row of a list page, or the rows of one watch
// event (the server prints one object per event). The embedded object,
// which informer.Follow reads the resourceVersion of, is the last row's
// object metadata, or the event's own object when it has no row (a
// bookmark).
type tableRows struct {
	*unstructured.Unstructured
	columns []metav1.TableColumnDefinition
	rows    []*metav1.TableRow
}

// tableSource is the informer.Source of table output: lists and watches
// of Tables.
type tableSource struct {
	tables *dynamic.TableResource
	rc     *rest.Client
	gvr    schema.GroupVersionResource
	ns     string
	// columns are the last list's column definitions, for watch events
	// that come without them.
	columns []metav1.TableColumnDefinition
}

var _ informer.Source[*tableRows] = (*tableSource)(nil)

// List lists one page as a Table and hands over each row that carries its
// object's metadata (the others cannot be followed).
func (s *tableSource) List(ctx context.Context, opts metav1.ListOptions, each func(*tableRows) error) (informer.ListPage, error) {
	tbl, err := s.tables.List(ctx, opts, dynamic.TableOptions{})
	if err != nil {
		return informer.ListPage{}, err
	}
	if len(tbl.ColumnDefinitions) > 0 {
		s.columns = tbl.ColumnDefinitions
	}
	for i := range tbl.Rows {
		row := &tbl.Rows[i]
		md, ok := printers.RowObject(row)
		if !ok {
			continue
		}
		if err := each(&tableRows{Unstructured: md, columns: tbl.ColumnDefinitions, rows: []*metav1.TableRow{row}}); err != nil {
			return informer.ListPage{}, err
		}
	}
	return informer.ListPage{ResourceVersion: tbl.ResourceVersion, Continue: tbl.Continue}, nil
}

// Watch watches with the Table media type: each event's object is a Table.
func (s *tableSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	w, err := cli.ResourceRequest(s.rc.Get(), s.gvr, s.ns).VersionedParams(&opts).Accept(dynamic.AcceptTable).Watch(ctx)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			r := eventRows(u)
			if len(r.columns) == 0 {
				r.columns = s.columns
			}
			ev.Object = r
		}
		return ev, true
	}), nil
}

// eventRows are the rows of a watch event's Table; an object that is not
// a Table (a bookmark) has none.
func eventRows(u *unstructured.Unstructured) *tableRows {
	out := &tableRows{Unstructured: u}
	if u.GetKind() != "Table" {
		return out
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		return out
	}
	tbl, err := dynamic.DecodeTable(b)
	if err != nil {
		return out
	}
	out.columns = tbl.ColumnDefinitions
	for i := range tbl.Rows {
		row := &tbl.Rows[i]
		if md, ok := printers.RowObject(row); ok {
			out.Unstructured = md
			out.rows = append(out.rows, row)
		}
	}
	return out
}
