package dynamic

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

// A MappedClient whose client and mapper's discovery are built on one
// rest.Client share it: discovery and then a Get go over one connection.
func TestMappedClientOnOneRESTClientSharesItsPool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/apis":
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		case "/api/v1":
			fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"]}]}`)
		default:
			fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"}}`)
		}
	}))
	defer srv.Close()
	var dials atomic.Int32
	var d net.Dialer
	rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.New(rc, discovery.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := restmapper.New(dc, restmapper.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewMapped(New(rc), mp) // the client and the mapper's discovery on one rest.Client
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	if _, _, err := c.ForKind(t.Context(), gvk, "ns"); err != nil {
		t.Fatal(err)
	}
	afterDiscovery := dials.Load()
	u, err := c.Get(t.Context(), gvk, "ns", "a", metav1.GetOptions{})
	if err != nil || u.GetName() != "a" {
		t.Fatalf("Get = %v, %v", u, err)
	}
	if n := dials.Load(); afterDiscovery == 0 || n != afterDiscovery {
		t.Fatalf("discovery dialed %d connections, the Get %d more: it did not reuse discovery's", afterDiscovery, n-afterDiscovery)
	}
}
