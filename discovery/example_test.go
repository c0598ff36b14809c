package discovery_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/rest"
)

func Example() {
	// A server answering with aggregated discovery documents captured from
	// kube-apiserver v1.37.2, where the metrics.k8s.io APIService has no
	// backend.
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		b, err := os.ReadFile(filepath.Join("testdata", "aggregated", strings.TrimPrefix(r.URL.Path, "/")+".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		_, _ = w.Write(b)
	}))
	defer srv.Close()

	dc, err := discovery.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	lists, err := dc.ServerPreferredResources(context.Background())
	var partial *discovery.GroupDiscoveryFailedError
	if errors.As(err, &partial) {
		fmt.Println("unavailable:", partial.GroupVersions())
	}
	fmt.Println(len(lists) > 20, "group-versions in", requests.Load(), "requests")

	// The second call is answered from memory.
	_, _ = dc.ServerGroups(context.Background())
	fmt.Println("requests after the second call:", requests.Load())
	// Output:
	// unavailable: [metrics.k8s.io/v1beta1]
	// true group-versions in 2 requests
	// requests after the second call: 2
}
