package informer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/rest"
)

// A full-object informer's streaming list and its list pages come over
// HTTP/1.1 (a bulk transfer, wire.WithBulk); at the initial-events-end bookmark the
// informer watches on over the shared HTTP/2 connection, from the
// bookmark's resourceVersion, and that watch delivers changes.
func TestBulkTransfersComeOverHTTP1(t *testing.T) {
	env := testenv.Shared(t)
	writer := client(t, env.RESTConfig(testenv.Admin))
	ns := newNamespace(t, writer)
	createAll(t, writer, ns, 30, func(i int) *unstructured.Unstructured { return configMap(ns, fmt.Sprintf("cm-%02d", i), "1") })
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			cfg := env.RESTConfig(testenv.Admin)
			answers := recordAnswers(cfg, "/api/v1/namespaces/"+ns+"/configmaps", false)
			f := informer.NewFactory(client(t, cfg), informer.FactoryOptions{Namespace: ns, DisableStreaming: !streaming})
			inf := f.ForResource(cmGVR, informer.InformerOptions{})
			updated := make(chan string, 10)
			_, _ = inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
				UpdateFunc: func(_, n *unstructured.Unstructured) { updated <- n.GetName() },
			})
			runFactory(t, t.Context(), f)
			if err := f.WaitForSync(t.Context()); err != nil {
				t.Fatal(err)
			}
			syncRV := inf.LastSyncResourceVersion()
			waitFor(t, func() bool { return len(answers()) >= 2 })
			first, next := answers()[0], answers()[1]
			if streaming && (first.query.Get("sendInitialEvents") != "true" || first.proto != 1) {
				t.Fatalf("first request %v over HTTP/%d: want the streaming list over HTTP/1.1", first.query, first.proto)
			}
			if !streaming && (first.query.Get("watch") != "" || first.proto != 1) {
				t.Fatalf("first request %v over HTTP/%d: want the list over HTTP/1.1", first.query, first.proto)
			}
			if next.query.Get("watch") != "true" || next.query.Has("sendInitialEvents") || next.query.Get("resourceVersion") != syncRV || next.proto != 2 {
				t.Fatalf("second request %v over HTTP/%d: want a plain watch from %s over HTTP/2", next.query, next.proto, syncRV)
			}
			name := fmt.Sprintf("cm-%02d", 7)
			if !streaming {
				name = "cm-08"
			}
			if _, err := writer.Resource(cmGVR).Namespace(ns).Update(t.Context(), configMap(ns, name, fmt.Sprint(streaming)), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-updated:
				if got != name {
					t.Fatalf("update of %s, want %s", got, name)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no update delivered by the watch after the bulk transfer")
			}
		})
	}
}

// answer is what recordAnswers saw of one request and its response.
type answer struct {
	query      url.Values
	proto      int  // the response's HTTP major version
	compressed bool // the transport inflated a gzip response
	status     int
}

// recordAnswers makes cfg's transport record every answered request for
// path (and, if watchesOnly, only watches); answers returns them so far.
func recordAnswers(cfg *rest.Config, path string, watchesOnly bool) (answers func() []answer) {
	var mu sync.Mutex
	var seen []answer
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && (path == "" || r.URL.Path == path) && (!watchesOnly || r.URL.Query().Get("watch") == "true") {
				mu.Lock()
				seen = append(seen, answer{r.URL.Query(), resp.ProtoMajor, resp.Uncompressed, resp.StatusCode})
				mu.Unlock()
			}
			return resp, err
		})
	}
	return func() []answer {
		mu.Lock()
		defer mu.Unlock()
		return append([]answer(nil), seen...)
	}
}
