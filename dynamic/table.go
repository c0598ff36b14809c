package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/internal/fastjson"
	"github.com/kdyn/kdyn/rest"
)

// AcceptTable asks the server to print objects as a metav1.Table — its
// columns (including a CRD's additionalPrinterColumns) and rows — falling
// back to plain JSON for servers that cannot.
const AcceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// TableClient reads objects printed by the server, as kubectl's default
// output does.
type TableClient struct {
	client *rest.Client
}

// Tables returns a Table client sharing c's connection.
func (c *DynamicClient) Tables() *TableClient { return &TableClient{client: c.client} }

// TableResource reads one resource as tables.
type TableResource struct {
	rc resourceClient
}

// Resource returns the Table client for one resource.
func (t *TableClient) Resource(gvr schema.GroupVersionResource) *TableResource {
	return &TableResource{rc: resourceClient{client: t.client, resource: gvr}}
}

// Namespace returns the Table client for one namespace.
func (t *TableResource) Namespace(ns string) *TableResource {
	out := *t
	out.rc.namespace = ns
	return &out
}

// TableOptions choose what the server includes.
type TableOptions struct {
	// IncludeObject is "None", "Metadata" (default on the server) or
	// "Object": what each row's Object holds.
	IncludeObject metav1.IncludeObjectPolicy
}

// Get returns one object (or a subresource of it, such as status or
// scale) as a Table with one row.
func (t *TableResource) Get(ctx context.Context, name string, opts metav1.GetOptions, topts TableOptions, subresources ...string) (*metav1.Table, error) {
	if name == "" {
		return nil, errNameRequired
	}
	r := t.rc.request(t.rc.client.Get(), name, subresources).Accept(AcceptTable).VersionedParams(&opts)
	return doTable(ctx, r, topts)
}

// List returns the objects matching opts as a Table (one page; the
// Table's metadata carries the continue token).
func (t *TableResource) List(ctx context.Context, opts metav1.ListOptions, topts TableOptions) (*metav1.Table, error) {
	r := t.rc.request(t.rc.client.Get(), "", nil).Accept(AcceptTable).VersionedParams(&opts)
	return doTable(ctx, r, topts)
}

func doTable(ctx context.Context, r *rest.Request, topts TableOptions) (*metav1.Table, error) {
	if topts.IncludeObject != "" {
		r = r.Param("includeObject", string(topts.IncludeObject))
	}
	res := r.Do(ctx)
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	return DecodeTable(body)
}

// DecodeTable decodes a metav1.Table in one pass without reflection: cells
// keep apimachinery's number rule (int64 for integers), and each row's
// object becomes an *unstructured.Unstructured (its metadata, unless the
// Table was asked for with IncludeObject=Object).
func DecodeTable(body []byte) (*metav1.Table, error) {
	m, err := fastjson.DecodeObjectShared(body)
	if err != nil {
		return nil, errorf("decode table: %w", err)
	}
	kind, _ := m["kind"].(string)
	if kind != "Table" {
		return nil, errorf("the server answered with %q, not a Table; it cannot print this resource", kind)
	}
	tbl := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: kind}}
	tbl.APIVersion, _ = m["apiVersion"].(string)
	if md, ok := m["metadata"].(map[string]any); ok {
		tbl.ResourceVersion, _ = md["resourceVersion"].(string)
		tbl.Continue, _ = md["continue"].(string)
		if n, ok := md["remainingItemCount"].(int64); ok {
			tbl.RemainingItemCount = &n
		}
	}
	cols, _ := m["columnDefinitions"].([]any)
	for _, c := range cols {
		cm, _ := c.(map[string]any)
		var d metav1.TableColumnDefinition
		d.Name, _ = cm["name"].(string)
		d.Type, _ = cm["type"].(string)
		d.Format, _ = cm["format"].(string)
		d.Description, _ = cm["description"].(string)
		if p, ok := cm["priority"].(int64); ok {
			d.Priority = int32(p)
		}
		tbl.ColumnDefinitions = append(tbl.ColumnDefinitions, d)
	}
	rows, _ := m["rows"].([]any)
	tbl.Rows = make([]metav1.TableRow, 0, len(rows))
	for _, r := range rows {
		rm, _ := r.(map[string]any)
		row := metav1.TableRow{}
		row.Cells, _ = rm["cells"].([]any)
		if obj, ok := rm["object"].(map[string]any); ok {
			row.Object.Object = &unstructured.Unstructured{Object: obj}
		}
		if conds, ok := rm["conditions"].([]any); ok {
			for _, c := range conds {
				cm, _ := c.(map[string]any)
				var rc metav1.TableRowCondition
				t, _ := cm["type"].(string)
				st, _ := cm["status"].(string)
				rc.Type, rc.Status = metav1.RowConditionType(t), metav1.ConditionStatus(st)
				rc.Reason, _ = cm["reason"].(string)
				rc.Message, _ = cm["message"].(string)
				row.Conditions = append(row.Conditions, rc)
			}
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl, nil
}
