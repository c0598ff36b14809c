package dynamic

import (
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/internal/wire"
	"github.com/kdyn/kdyn/rest"
)

// The fast paths' Opener sends a GET of the collection with the list
// options and headers it is given, through the resource client's own
// rest.Client, as the informers' requests went before they sat on this
// package; decorated clients do not hand it out.
func TestWireEndpointOpensTheCollection(t *testing.T) {
	rec := newRecorder(t)
	c, err := NewForConfig(&rest.Config{Host: rec.URL})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ri := c.Resource(gvr).Namespace("prod")
	p, ok := ri.(wire.Provider)
	if !ok {
		t.Fatal("kdyn's resource client does not provide its endpoint")
	}
	resp, err := p.WireEndpoint().Open(t.Context(), &metav1.ListOptions{LabelSelector: "app=web", Limit: 500, ResourceVersion: "0"},
		http.Header{"Accept": {"application/json;as=Table;v=v1;g=meta.k8s.io"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "GET /apis/apps/v1/namespaces/prod/deployments\nquery: labelSelector=app%3Dweb&limit=500&resourceVersion=0\naccept: application/json;as=Table;v=v1;g=meta.k8s.io\ncontent-type: \nbody: \n"
	if got := rec.lastRequest(); got != want {
		t.Errorf("request:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := WithFieldManager(c, "m").Resource(gvr).Namespace("prod").(wire.Provider); ok {
		t.Error("a decorated client hands out the fast paths")
	}
}
