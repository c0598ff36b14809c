package restmapper_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
)

func Example() {
	// A server that answers with aggregated discovery documents captured
	// from kube-apiserver v1.37.2.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("..", "discovery", "testdata", "aggregated", strings.TrimPrefix(r.URL.Path, "/")+".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		_, _ = w.Write(b)
	}))
	defer srv.Close()

	m, err := restmapper.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	mapping, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	fmt.Println(mapping.Resource, mapping.Scope.Name(), err)

	gvr, err := m.ResourceFor(schema.GroupVersionResource{Resource: "hpa"})
	fmt.Println(gvr, err)

	_, err = m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Gizmo"})
	fmt.Println(err)
	// Output:
	// apps/v1, Resource=deployments namespace <nil>
	// autoscaling/v2, Resource=horizontalpodautoscalers <nil>
	// no matches for kind "Gizmo" in group "example.com"
}
