package printers

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kind goes before the name in the column the server formats as a
// name: the first of a ConfigMap's table, but in an Event's table the
// wide NAME column, never LAST SEEN (kubectl prints "67s", not
// "event/67s", in a mixed list).
func TestKindPrefixGoesOnTheNameColumn(t *testing.T) {
	cms := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Data", Type: "integer"}},
		Rows:              []metav1.TableRow{{Cells: []any{"settings", int64(2)}}},
	}
	events := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Last Seen", Type: "string"}, {Name: "Type", Type: "string"}, {Name: "Reason", Type: "string"},
			{Name: "Name", Type: "string", Format: "name", Priority: 1},
		},
		Rows: []metav1.TableRow{{Cells: []any{"67s", "Normal", "Created", "web.18a2b"}}},
	}
	for _, tc := range []struct {
		name  string
		table *metav1.Table
		opts  TableOptions
		want  []string
	}{
		{"configmap", cms, TableOptions{KindPrefix: "configmap"}, []string{"configmap/settings", "2"}},
		{"event", events, TableOptions{KindPrefix: "event"}, []string{"67s", "Normal", "Created"}},
		{"event, wide", events, TableOptions{KindPrefix: "event", Wide: true}, []string{"67s", "Normal", "Created", "event/web.18a2b"}},
		{"no name column", &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "X", Type: "string"}}, Rows: []metav1.TableRow{{Cells: []any{"x"}}}},
			TableOptions{KindPrefix: "thing"}, []string{"x"}},
	} {
		if got := RowCells(tc.table, &tc.table.Rows[0], tc.opts); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
