package get

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
)

// TestAllResourcesWatch: get all-resources -w watches every listable type,
// the empty ones included, instead of listing once and exiting.
func TestAllResourcesWatch(t *testing.T) {
	srv := clitest.APIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			clitest.EmptyLists(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/configmaps") {
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w1","namespace":"default","resourceVersion":"2"}}}` + "\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	printed := func(out string) bool { return strings.Contains(out, "configmap/w1") }
	r := runGetWatch(t, srv, &getOptions{output: "name", watch: true, chunkSize: 500, parallel: 8}, []string{"all-resources"}, printed)
	switch {
	case r.early:
		t.Fatalf("get all-resources -w returned %v before printing the watched ConfigMap; stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	case !printed(r.stdout):
		t.Fatalf("the watched ConfigMap was not printed; stdout %q, stderr %q", r.stdout, r.stderr)
	case r.err != nil:
		t.Errorf("get all-resources -w: %v", r.err)
	}
}
