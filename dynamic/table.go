package dynamic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

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

// Get returns one object as a Table with one row.
func (t *TableResource) Get(ctx context.Context, name string, opts metav1.GetOptions, topts TableOptions) (*metav1.Table, error) {
	if name == "" {
		return nil, errNameRequired
	}
	r := t.rc.request(t.rc.client.Get(), name, nil).Accept(AcceptTable).VersionedParams(&opts)
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
	var tbl metav1.Table
	if err := utiljson.Unmarshal(body, &tbl); err != nil {
		return nil, errorf("decode table: %w", err)
	}
	if tbl.Kind != "Table" {
		return nil, errorf("the server answered with %q, not a Table; it cannot print this resource", tbl.Kind)
	}
	return &tbl, nil
}
