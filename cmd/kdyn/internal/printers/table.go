package printers

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// NewTabWriter returns a tabwriter with kubectl's settings.
func NewTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
}

// TableOptions shape the server's Table the way kubectl's flags do.
type TableOptions struct {
	// NoHeaders omits the header line.
	NoHeaders bool
	// Wide includes the columns the server marks as extra (priority > 0).
	Wide bool
	// WithNamespace prepends a NAMESPACE column (for -A).
	WithNamespace bool
	// ShowLabels appends a LABELS column.
	ShowLabels bool
	// LabelColumns appends one column per label key (-L).
	LabelColumns []string
	// KindPrefix, when set, prints names as KIND/NAME (several types in
	// one get), e.g. "deployment.apps".
	KindPrefix string
	// EventType, when set, prepends an EVENT column (--output-watch-events).
	EventType string
}

// Headers returns the header cells for t.
func Headers(t *metav1.Table, o TableOptions) []string {
	var h []string
	if o.EventType != "" {
		h = append(h, "EVENT")
	}
	if o.WithNamespace {
		h = append(h, "NAMESPACE")
	}
	for _, c := range t.ColumnDefinitions {
		if c.Priority != 0 && !o.Wide {
			continue
		}
		h = append(h, strings.ToUpper(c.Name))
	}
	for _, l := range o.LabelColumns {
		parts := strings.Split(l, "/")
		h = append(h, strings.ToUpper(parts[len(parts)-1]))
	}
	if o.ShowLabels {
		h = append(h, "LABELS")
	}
	return h
}

// NameColumn returns the index of t's name column — the first column of
// format "name" and type string — or -1 when it has none.
func NameColumn(t *metav1.Table) int {
	for i, c := range t.ColumnDefinitions {
		if c.Format == "name" && c.Type == "string" {
			return i
		}
	}
	return -1
}

// RowCells returns the cells of one row as text.
func RowCells(t *metav1.Table, row *metav1.TableRow, o TableOptions) []string {
	var out []string
	if o.EventType != "" {
		out = append(out, o.EventType)
	}
	var md metav1.Object
	if o.WithNamespace || o.ShowLabels || len(o.LabelColumns) > 0 {
		md = rowMeta(row)
	}
	if o.WithNamespace {
		ns := ""
		if md != nil {
			ns = md.GetNamespace()
		}
		out = append(out, ns)
	}
	// The kind goes before the name, in the column the server formats as
	// a name, as kubectl decorates it: the first column of most tables,
	// but not of Events' (their first is LAST SEEN; their NAME is wide).
	nameColumn := -1
	if o.KindPrefix != "" {
		nameColumn = NameColumn(t)
	}
	for i, cell := range row.Cells {
		if i >= len(t.ColumnDefinitions) {
			break // a server sending more cells than columns must not break us
		}
		if t.ColumnDefinitions[i].Priority != 0 && !o.Wide {
			continue
		}
		s := cellText(cell)
		if i == nameColumn {
			s = o.KindPrefix + "/" + s
		}
		out = append(out, s)
	}
	if len(o.LabelColumns) > 0 || o.ShowLabels {
		var lbls map[string]string
		if md != nil {
			lbls = md.GetLabels()
		}
		for _, k := range o.LabelColumns {
			out = append(out, lbls[k])
		}
		if o.ShowLabels {
			out = append(out, labels.FormatLabels(lbls))
		}
	}
	return out
}

// cellText renders a cell as kubectl does: nil as empty, text cut at the
// first line break, terminal escapes made visible.
func cellText(cell any) string {
	if cell == nil {
		return ""
	}
	s, ok := cell.(string)
	if !ok {
		s = fmt.Sprint(cell)
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i] + "..."
	}
	return strings.ReplaceAll(s, "\x1b", "^[")
}

// rowMeta decodes a row's embedded object metadata.
func rowMeta(row *metav1.TableRow) metav1.Object {
	if row.Object.Object != nil {
		if m, err := meta.Accessor(row.Object.Object); err == nil {
			return m
		}
	}
	if len(row.Object.Raw) == 0 {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(row.Object.Raw); err != nil {
		return nil
	}
	row.Object.Object = u
	return u
}

// RowObject returns a row's embedded object (with includeObject=Object).
func RowObject(row *metav1.TableRow) (*unstructured.Unstructured, bool) {
	if u, ok := row.Object.Object.(*unstructured.Unstructured); ok {
		return u, true
	}
	if len(row.Object.Raw) == 0 {
		if row.Object.Object != nil {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(row.Object.Object)
			if err == nil {
				return &unstructured.Unstructured{Object: m}, true
			}
		}
		return nil, false
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(row.Object.Raw); err != nil {
		return nil, false
	}
	row.Object.Object = u
	return u, true
}

// WriteRow writes cells tab-separated.
func WriteRow(w io.Writer, cells []string) error {
	_, err := io.WriteString(w, strings.Join(cells, "\t")+"\n")
	return err
}

// PrintTable writes t (header unless NoHeaders, then rows) to w, which
// should be a tabwriter the caller flushes. An empty table prints nothing.
func PrintTable(w io.Writer, t *metav1.Table, o TableOptions) error {
	if len(t.Rows) == 0 {
		return nil
	}
	if !o.NoHeaders {
		if err := WriteRow(w, Headers(t, o)); err != nil {
			return err
		}
	}
	for i := range t.Rows {
		if err := WriteRow(w, RowCells(t, &t.Rows[i], o)); err != nil {
			return err
		}
	}
	return nil
}

// SortRows sorts table rows by a key computed from each row's object
// (stable; rows without an object sort first).
func SortRows(t *metav1.Table, key func(*unstructured.Unstructured) string, less func(a, b string) bool) {
	keys := make([]string, len(t.Rows))
	for i := range t.Rows {
		if u, ok := RowObject(&t.Rows[i]); ok {
			keys[i] = key(u)
		}
	}
	idx := make([]int, len(t.Rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(keys[idx[a]], keys[idx[b]]) })
	rows := make([]metav1.TableRow, len(t.Rows))
	for i, j := range idx {
		rows[i] = t.Rows[j]
	}
	t.Rows = rows
}
