package wire

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// testEndpoint is an Endpoint over a plain net/http client to a test
// server with handler h: the Opener sends what kdyn's dynamic client would
// (the list options as query parameters, the headers given) and returns
// the response of any status. rest's own Opener is tested in dynamic.
func testEndpoint(t *testing.T, h http.HandlerFunc) Endpoint {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return Endpoint{Open: func(ctx context.Context, opts *metav1.ListOptions, header http.Header) (*http.Response, error) {
		q, err := metav1.ParameterCodec.EncodeParameters(opts, metav1.SchemeGroupVersion)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/namespaces/ns/configmaps?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		return srv.Client().Do(req)
	}}
}

// requests records the requests a test server saw.
type requests struct {
	mu  sync.Mutex
	all []*http.Request
}

func (r *requests) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, req)
}

func (r *requests) last() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.all[len(r.all)-1]
}

const managedCM = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","managedFields":[{"manager":"kubectl"}],"uid":"u"},"data":{"k":"v"}}`

// Whole objects: managedFields omitted or kept, the text handed over or
// not, the same for list items and watch events; informers ask for both
// uncompressed.
func TestEndpointObjects(t *testing.T) {
	var seen requests
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		seen.add(r)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			_, _ = io.WriteString(w, `{"type":"ADDED","object":`+managedCM+"}\n"+
				`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}}`+"\n")
			return
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`+managedCM+`]}`)
	})
	stripped := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"u"},"data":{"k":"v"}}`
	for _, d := range []Decoding{{}, {OmitManagedFields: true}, {Text: true}, {OmitManagedFields: true, Text: true}} {
		name := fmt.Sprintf("%+v", d)
		check := func(where string, u *unstructured.Unstructured, text []byte) {
			t.Helper()
			if kept := len(u.GetManagedFields()) > 0; kept == d.OmitManagedFields || u.GetName() != "a" || u.Object["data"] == nil {
				t.Errorf("%s %s: object %v", name, where, u.Object)
			}
			want := ""
			switch {
			case d.Text && d.OmitManagedFields:
				want = stripped
			case d.Text:
				want = managedCM
			}
			if string(text) != want {
				t.Errorf("%s %s: text %q, want %q", name, where, text, want)
			}
		}
		n := 0
		page, err := ep.ListObjects(t.Context(), metav1.ListOptions{}, d, nil, func(m map[string]any, text []byte) error {
			n++
			check("list item", &unstructured.Unstructured{Object: m}, text)
			return nil
		})
		if err != nil || n != 1 || page.ResourceVersion != "9" {
			t.Fatalf("%s: list %+v, %d items, %v", name, page, n, err)
		}
		if got := seen.last().Header.Get("Accept-Encoding"); got != "identity" {
			t.Errorf("%s: list Accept-Encoding %q", name, got)
		}
		st, err := ep.WatchObjects(t.Context(), metav1.ListOptions{}, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := seen.last().Header.Get("Accept-Encoding"); got != "identity" {
			t.Errorf("%s: watch Accept-Encoding %q", name, got)
		}
		evs := collect(t, st)
		if len(evs) != 2 || evs[0].Type != watch.Added || evs[1].Type != watch.Error {
			t.Fatalf("%s: events %v", name, evs)
		}
		switch o := evs[0].Object.(type) {
		case *TextObject:
			if !d.Text {
				t.Errorf("%s: a TextObject without Decoding.Text", name)
			}
			check("watch event", o.Unstructured, o.Text)
		case *unstructured.Unstructured:
			check("watch event", o, nil)
		default:
			t.Fatalf("%s: event object %T", name, o)
		}
	}
}

// A relist's known objects are skipped undecoded in lists and answered
// with a stub in watches.
func TestEndpointSkipsKnownObjects(t *testing.T) {
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		cm := func(name, rv string) string {
			return `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"ns","resourceVersion":"` + rv + `"}}`
		}
		if r.URL.Query().Get("watch") == "true" {
			_, _ = io.WriteString(w, `{"type":"ADDED","object":`+cm("a", "1")+"}\n"+`{"type":"ADDED","object":`+cm("b", "2")+"}\n")
			return
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`+cm("a", "1")+","+cm("b", "2")+`]}`)
	})
	known := func(key, rv string) bool { return key == "ns/a" && rv == "1" }
	var names []string
	if _, err := ep.ListObjects(t.Context(), metav1.ListOptions{}, Decoding{}, known, func(m map[string]any, _ []byte) error {
		names = append(names, (&unstructured.Unstructured{Object: m}).GetName())
		return nil
	}); err != nil || strings.Join(names, ",") != "b" {
		t.Fatalf("list decoded %v, %v", names, err)
	}
	st, err := ep.WatchObjects(t.Context(), metav1.ListOptions{}, Decoding{}, known)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, st)
	if len(evs) != 2 {
		t.Fatalf("events %v", evs)
	}
	if _, ok := evs[0].Object.(*unstructured.Unstructured); ok {
		t.Error("the known object was decoded")
	}
	if u, ok := evs[1].Object.(*unstructured.Unstructured); !ok || u.GetName() != "b" {
		t.Errorf("second event %#v", evs[1].Object)
	}
}

// A streaming list is a bulk transfer (one-shot when it came over
// HTTP/1.1); a plain watch is not.
func TestEndpointStreamingListIsBulk(t *testing.T) {
	var bulk []bool
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
	})
	open := ep.Open
	ep.Open = func(ctx context.Context, opts *metav1.ListOptions, h http.Header) (*http.Response, error) {
		bulk = append(bulk, IsBulk(ctx))
		return open(ctx, opts, h)
	}
	plain, err := ep.WatchObjects(t.Context(), metav1.ListOptions{}, Decoding{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain.Stop()
	streaming, err := ep.WatchObjects(t.Context(), metav1.ListOptions{SendInitialEvents: ptr.To(true)}, Decoding{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	streaming.Stop()
	// The answer is empty (not a list): only the mark matters here.
	_, _ = ep.ListObjects(t.Context(), metav1.ListOptions{}, Decoding{}, nil, func(map[string]any, []byte) error { return nil })
	if fmt.Sprint(bulk) != "[false true true]" {
		t.Fatalf("bulk marks of a plain watch, a streaming list and a list: %v", bulk)
	}
	if plain.OneShot || !streaming.OneShot {
		t.Fatalf("OneShot: plain %v, streaming over HTTP/1.1 %v", plain.OneShot, streaming.OneShot)
	}
}

// Metadata watches, streaming lists included, ask for an uncompressed
// answer, so a streaming list goes on as the watch (not one-shot): one
// request per resource.
func TestEndpointMetadataWatchIdentity(t *testing.T) {
	events := `{"type":"ADDED","object":{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{"name":"a","resourceVersion":"5"}}}` + "\n"
	var seen requests
	ep := testEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		seen.add(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, events)
	})
	for _, streaming := range []bool{false, true} {
		opts := metav1.ListOptions{}
		if streaming {
			opts.SendInitialEvents = ptr.To(true)
		}
		st, err := ep.WatchMetadata(t.Context(), opts, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := seen.last().Header
		if got := h.Get("Accept"); got != AcceptMetadataProtobuf {
			t.Errorf("Accept %q", got)
		}
		if got := h.Get("Accept-Encoding"); got != "identity" {
			t.Errorf("streaming=%v: Accept-Encoding %q", streaming, got)
		}
		if st.OneShot {
			t.Errorf("streaming=%v: OneShot", streaming)
		}
		evs := collect(t, st)
		if len(evs) != 1 || evs[0].Object.(*metav1.PartialObjectMetadata).Name != "a" {
			t.Errorf("streaming=%v: events %+v", streaming, evs)
		}
	}
}
