package dynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/rest"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// pagingServer serves n ConfigMaps in pages of the requested limit; the
// continue token is the next index. expireAt makes the page starting at
// that index answer 410 once.
type pagingServer struct {
	n        int
	expireAt int
	mu       sync.Mutex
	expired  bool
	requests []string
}

func (p *pagingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	p.requests = append(p.requests, r.URL.RawQuery)
	p.mu.Unlock()
	start, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit == 0 {
		limit = p.n
	}
	p.mu.Lock()
	if q.Get("continue") != "" && start == p.expireAt && !p.expired {
		p.expired = true
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusGone)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","message":"The provided continue parameter is too old","code":410}`))
		return
	}
	p.mu.Unlock()
	end := min(start+limit, p.n)
	var items []string
	for i := start; i < end; i++ {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"cm-%05d","namespace":"ns"}}`, i))
	}
	cont := ""
	if end < p.n {
		cont = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"100","continue":%q},"items":[%s]}`, cont, strings.Join(items, ","))
}

func pagingClient(t *testing.T, p *pagingServer) ResourceInterface {
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return New(rc).Resource(cmGVR).Namespace("ns")
}

func TestItemsFollowsContinue(t *testing.T) {
	p := &pagingServer{n: 1203, expireAt: -1}
	ri := pagingClient(t, p)
	var names []string
	for obj, err := range Items(context.Background(), ri, metav1.ListOptions{}, PageOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, obj.GetName())
	}
	if len(names) != 1203 || names[0] != "cm-00000" || names[1202] != "cm-01202" {
		t.Fatalf("got %d names, first %v", len(names), names[:1])
	}
	if len(p.requests) != 3 || !strings.Contains(p.requests[0], "limit=500") {
		t.Fatalf("requests = %v", p.requests)
	}
	l, err := ListAll(context.Background(), ri, metav1.ListOptions{}, PageOptions{PageSize: 100})
	if err != nil || len(l.Items) != 1203 || l.GetContinue() != "" || l.GetResourceVersion() != "100" {
		t.Fatalf("ListAll: %d items, continue %q, %v", len(l.Items), l.GetContinue(), err)
	}
}

func TestItemsExpiredContinue(t *testing.T) {
	ctx := context.Background()
	t.Run("restart yields each object once", func(t *testing.T) {
		p := &pagingServer{n: 1200, expireAt: 1000}
		seen := map[string]int{}
		for obj, err := range Items(ctx, pagingClient(t, p), metav1.ListOptions{}, PageOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			seen[obj.GetName()]++
		}
		if len(seen) != 1200 {
			t.Fatalf("%d distinct objects", len(seen))
		}
		for n, c := range seen {
			if c != 1 {
				t.Fatalf("%s yielded %d times", n, c)
			}
		}
	})
	t.Run("ListAll restarts from scratch", func(t *testing.T) {
		p := &pagingServer{n: 1200, expireAt: 500}
		l, err := ListAll(ctx, pagingClient(t, p), metav1.ListOptions{}, PageOptions{})
		if err != nil || len(l.Items) != 1200 {
			t.Fatalf("%v %v", l, err)
		}
		if len(p.requests) != 5 { // page, 410, then three pages
			t.Fatalf("requests = %v", p.requests)
		}
	})
	t.Run("fail", func(t *testing.T) {
		p := &pagingServer{n: 1200, expireAt: 500}
		var got error
		n := 0
		for _, err := range Items(ctx, pagingClient(t, p), metav1.ListOptions{}, PageOptions{OnExpired: ExpiredFail}) {
			if err != nil {
				got = err
				break
			}
			n++
		}
		if !apierrors.IsResourceExpired(got) || n != 500 {
			t.Fatalf("after %d items: %v", n, got)
		}
		p2 := &pagingServer{n: 1200, expireAt: 500}
		if _, err := ListAll(ctx, pagingClient(t, p2), metav1.ListOptions{}, PageOptions{OnExpired: ExpiredFail}); !apierrors.IsResourceExpired(err) {
			t.Fatalf("ListAll: %v", err)
		}
	})
	t.Run("early break", func(t *testing.T) {
		p := &pagingServer{n: 1200, expireAt: -1}
		for range Items(ctx, pagingClient(t, p), metav1.ListOptions{}, PageOptions{}) {
			break
		}
		if len(p.requests) != 1 {
			t.Fatalf("requests after break = %d", len(p.requests))
		}
	})
}

func TestMetadataRequests(t *testing.T) {
	rec := newRecorder(t)
	rec.body = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x","namespace":"ns","uid":"u1","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u0"}]}}`
	rc, _ := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	mc := New(rc).Metadata().Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("ns")
	ctx := context.Background()
	p, err := mc.Get(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "x" || p.UID != "u1" || len(p.OwnerReferences) != 1 {
		t.Fatalf("partial = %+v", p)
	}
	checkGolden(t, "metadata-get", rec.lastRequest())
	rec.body = `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`
	l, err := mc.List(ctx, metav1.ListOptions{LabelSelector: "a=b"})
	if err != nil || len(l.Items) != 2 || l.ResourceVersion != "5" {
		t.Fatalf("list = %+v, %v", l, err)
	}
	checkGolden(t, "metadata-list", rec.lastRequest())
	rec.body = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"x"}}`
	if _, err := mc.Patch(ctx, "x", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "metadata-patch", rec.lastRequest())
	w, err := mc.Watch(ctx, metav1.ListOptions{ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	for range w.ResultChan() {
	}
	checkGolden(t, "metadata-watch", rec.lastRequest())
}

func TestTable(t *testing.T) {
	rec := newRecorder(t)
	rec.body = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},
	 "columnDefinitions":[{"name":"Name","type":"string","format":"name"},{"name":"Size","type":"integer"}],
	 "rows":[{"cells":["w1",3],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"w1"}}}]}`
	rc, _ := rest.NewForConfig(&rest.Config{Host: rec.URL, QPS: -1})
	tc := New(rc).Tables().Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("ns")
	tbl, err := tc.List(context.Background(), metav1.ListOptions{}, TableOptions{IncludeObject: metav1.IncludeObject})
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.ColumnDefinitions) != 2 || len(tbl.Rows) != 1 {
		t.Fatalf("table = %+v", tbl)
	}
	if diff := cmp.Diff([]any{"w1", int64(3)}, tbl.Rows[0].Cells); diff != "" {
		t.Fatalf("cells (numbers must stay integers):\n%s", diff)
	}
	checkGolden(t, "table-list", rec.lastRequest())
	rec.body = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`
	if _, err := tc.Get(context.Background(), "x", metav1.GetOptions{}, TableOptions{}); err == nil || !strings.Contains(err.Error(), "not a Table") {
		t.Fatalf("non-table answer: %v", err)
	}
}

// optsRecorder is a ResourceInterface that records the options it gets.
type optsRecorder struct {
	ResourceInterface
	got    []string
	ns     string
	parent *recInterface
}

func (o *optsRecorder) record(v any) {
	b, _ := json.Marshal(v)
	o.got = append(o.got, string(b))
}
func (o *optsRecorder) Create(_ context.Context, _ *unstructured.Unstructured, opts metav1.CreateOptions, _ ...string) (*unstructured.Unstructured, error) {
	if o.parent != nil {
		o.parent.ns = append(o.parent.ns, o.ns)
	}
	o.record(opts)
	return nil, nil
}
func (o *optsRecorder) Patch(_ context.Context, _ string, _ types.PatchType, _ []byte, opts metav1.PatchOptions, _ ...string) (*unstructured.Unstructured, error) {
	o.record(opts)
	return nil, nil
}
func (o *optsRecorder) Apply(_ context.Context, _ string, _ *unstructured.Unstructured, opts metav1.ApplyOptions, _ ...string) (*unstructured.Unstructured, error) {
	o.record(opts)
	return nil, nil
}
func (o *optsRecorder) Delete(_ context.Context, _ string, opts metav1.DeleteOptions, _ ...string) error {
	o.record(opts)
	return nil
}

type recInterface struct {
	rec     *optsRecorder
	ns      []string
	trackNS bool
}

func (r *recInterface) Resource(schema.GroupVersionResource) NamespaceableResourceInterface { return r }
func (r *recInterface) Namespace(ns string) ResourceInterface {
	if r.trackNS {
		return &optsRecorder{ns: ns, parent: r}
	}
	return r.rec
}

// recInterface is also the un-namespaced ResourceInterface.
func (r *recInterface) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	r.ns = append(r.ns, "<all>")
	return r.rec.Create(ctx, obj, opts, sub...)
}
func (r *recInterface) Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (r *recInterface) UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (r *recInterface) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, sub ...string) error {
	return r.rec.Delete(ctx, name, opts, sub...)
}
func (r *recInterface) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return nil
}
func (r *recInterface) Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (r *recInterface) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, nil
}
func (r *recInterface) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, nil
}
func (r *recInterface) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.rec.Patch(ctx, name, pt, data, opts, sub...)
}
func (r *recInterface) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	return r.rec.Apply(ctx, name, obj, opts, sub...)
}
func (r *recInterface) ApplyStatus(context.Context, string, *unstructured.Unstructured, metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return nil, nil
}

func TestDecorators(t *testing.T) {
	ctx := context.Background()
	base := &recInterface{rec: &optsRecorder{}}
	c := WithDryRun(WithFieldManager(base, "ctrl"))
	ri := c.Resource(cmGVR).Namespace("ns")
	_, _ = ri.Create(ctx, nil, metav1.CreateOptions{})
	_, _ = ri.Patch(ctx, "x", types.MergePatchType, nil, metav1.PatchOptions{FieldManager: "explicit"})
	_, _ = ri.Apply(ctx, "x", nil, metav1.ApplyOptions{})
	_ = ri.Delete(ctx, "x", metav1.DeleteOptions{})
	want := []string{
		`{"dryRun":["All"],"fieldManager":"ctrl"}`,
		`{"dryRun":["All"],"fieldManager":"explicit"}`,
		`{"dryRun":["All"],"force":false,"fieldManager":"ctrl"}`,
		`{"dryRun":["All"]}`,
	}
	if diff := cmp.Diff(want, base.rec.got); diff != "" {
		t.Fatalf("options (-want +got):\n%s", diff)
	}

	base2 := &recInterface{rec: &optsRecorder{}, trackNS: true}
	dn := WithDefaultNamespace(base2, "team", func(gvr schema.GroupVersionResource) bool { return gvr.Resource == "configmaps" })
	_, _ = dn.Resource(cmGVR).Create(ctx, nil, metav1.CreateOptions{})
	_, _ = dn.Resource(cmGVR).Namespace("other").Create(ctx, nil, metav1.CreateOptions{})
	_, _ = dn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nil, metav1.CreateOptions{})
	if diff := cmp.Diff([]string{"team", "other", "<all>"}, base2.ns); diff != "" {
		t.Fatalf("namespaces (-want +got):\n%s", diff)
	}
}

// strictLister pages n objects and, like the API server, refuses a
// continue request that also names resourceVersionMatch, or a
// resourceVersion other than "0".
type strictLister struct {
	n      int
	expire bool // answer the first continue page 410 Gone
	opts   []metav1.ListOptions
}

func (s *strictLister) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	s.opts = append(s.opts, opts)
	if opts.ResourceVersionMatch != "" && opts.ResourceVersion == "" {
		return nil, apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	if opts.Continue != "" && s.expire {
		s.expire = false
		return nil, apierrors.NewResourceExpired("The provided continue parameter is too old")
	}
	if opts.Continue != "" && opts.ResourceVersionMatch != "" {
		return nil, apierrors.NewBadRequest("resourceVersionMatch is forbidden when continue is provided")
	}
	if opts.Continue != "" && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	start, _ := strconv.Atoi(opts.Continue)
	end := min(start+int(opts.Limit), s.n)
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList"}}
	l.SetResourceVersion("100")
	for i := start; i < end; i++ {
		u := unstructured.Unstructured{}
		u.SetName(fmt.Sprintf("cm-%d", i))
		l.Items = append(l.Items, u)
	}
	if end < s.n {
		l.SetContinue(strconv.Itoa(end))
	}
	return l, nil
}

// Items and ListAll sent the caller's resourceVersion and
// resourceVersionMatch with every continue page, which the API server
// refuses (400), so a list from a given resource version failed at its
// second page; and ListAll's restart after an expired token kept
// resourceVersionMatch without its resourceVersion (also a 400). client-go's
// pager clears both after the first page, since the continue token carries
// the snapshot.
func TestPagingFromResourceVersion(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []metav1.ListOptions{
		{ResourceVersion: "100", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		{ResourceVersion: "100", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
		{ResourceVersion: "100"},
	} {
		s := &strictLister{n: 5}
		l, err := ListAll(ctx, s, opts, PageOptions{PageSize: 2})
		if err != nil || len(l.Items) != 5 {
			t.Fatalf("ListAll(%+v): %v", opts, err)
		}
		if s.opts[0].ResourceVersion != opts.ResourceVersion || s.opts[0].ResourceVersionMatch != opts.ResourceVersionMatch {
			t.Errorf("ListAll(%+v): the first page was asked with %+v", opts, s.opts[0])
		}
		s = &strictLister{n: 5}
		n := 0
		for _, err := range Items(ctx, s, opts, PageOptions{PageSize: 2}) {
			if err != nil {
				t.Fatalf("Items(%+v) after %d items: %v", opts, n, err)
			}
			n++
		}
		if n != 5 {
			t.Fatalf("Items(%+v): %d items", opts, n)
		}
		s = &strictLister{n: 5, expire: true}
		if l, err := ListAll(ctx, s, opts, PageOptions{PageSize: 2}); err != nil || len(l.Items) != 5 {
			t.Fatalf("ListAll(%+v) with an expired continue token: %v", opts, err)
		}
	}
}
