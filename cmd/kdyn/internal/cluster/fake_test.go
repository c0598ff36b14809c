package cluster_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/clitest"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/root"
)

// fakeCluster is an API server for the commands' tests: discovery from the
// captured documents of a real kube-apiserver (whose metrics.k8s.io is
// stale, so not served, unless metrics says otherwise), and the objects of
// a few resources (none readable in namespace "forbidden"), listed (with a label selector of one key=value and a
// field selector on metadata.name) and got by name, in the order given.
type fakeCluster struct {
	t *testing.T
	// metrics serves metrics.k8s.io/v1beta1 (nodes and pods) in discovery.
	metrics bool
	// objects are the objects by "GROUP/VERSION/RESOURCE" ("/v1/pods").
	objects map[string][]map[string]any
	// logs are the containers' logs by "NAMESPACE/POD/CONTAINER"; a
	// container without one answers as a kubelet that has none.
	logs map[string]string

	mu       sync.Mutex
	requests []string // the paths asked for, with their queries
}

// listKinds are the kinds of the lists the fake serves.
var listKinds = map[string]string{
	"/v1/nodes": "NodeList", "/v1/pods": "PodList", "/v1/services": "ServiceList", "/v1/events": "EventList",
	"/v1/replicationcontrollers": "ReplicationControllerList", "/v1/namespaces": "NamespaceList",
	"apps/v1/daemonsets": "DaemonSetList", "apps/v1/deployments": "DeploymentList", "apps/v1/replicasets": "ReplicaSetList",
	"metrics.k8s.io/v1beta1/nodes": "NodeMetricsList", "metrics.k8s.io/v1beta1/pods": "PodMetricsList",
}

// start serves the fake and returns a kubeconfig for it.
func (c *fakeCluster) start() (srv *httptest.Server, kubeconfig string) {
	c.t.Helper()
	srv = httptest.NewServer(http.HandlerFunc(c.serve))
	c.t.Cleanup(srv.Close)
	return srv, clitest.WriteKubeconfig(c.t, srv.URL)
}

// run runs the kdyn command line against the fake, with its own discovery
// cache.
func (c *fakeCluster) run(kubeconfig string, args ...string) clitest.Result {
	c.t.Helper()
	return clitest.Run(root.Main, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", c.t.TempDir()}, args...)...)
}

// asked reports whether a request's path started with prefix.
func (c *fakeCluster) asked(prefix string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.requests {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

func (c *fakeCluster) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.requests = append(c.requests, r.URL.RequestURI())
	c.mu.Unlock()
	switch r.URL.Path {
	case "/api", "/apis":
		w.Header().Set("Content-Type", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		_, _ = w.Write(c.discovery(r.URL.Path))
		return
	}
	group, version, ns, resource, name, sub, ok := parsePath(r.URL.Path)
	if !ok {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	key := group + "/" + version + "/" + resource
	if ns == "forbidden" {
		status(w, http.StatusForbidden, "Forbidden", resource+" is forbidden")
		return
	}
	if sub == "log" {
		container := r.URL.Query().Get("container")
		text, ok := c.logs[ns+"/"+name+"/"+container]
		if !ok {
			status(w, http.StatusBadRequest, "BadRequest", "no logs found for container "+container)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(text))
		return
	}
	var items []map[string]any
	for _, obj := range c.objects[key] {
		md, _ := obj["metadata"].(map[string]any)
		if (ns != "" && md["namespace"] != ns) || (name != "" && md["name"] != name) || !selects(r, md) {
			continue
		}
		items = append(items, obj)
	}
	if name != "" {
		if len(items) == 0 {
			status(w, http.StatusNotFound, "NotFound", resource+"."+group+" \""+name+"\" not found")
			return
		}
		writeJSON(w, items[0])
		return
	}
	if items == nil {
		items = []map[string]any{}
	}
	apiVersion := strings.TrimPrefix(group+"/"+version, "/")
	writeJSON(w, map[string]any{"kind": listKinds[key], "apiVersion": apiVersion, "metadata": map[string]any{"resourceVersion": "7"}, "items": items})
}

// discovery is the captured discovery document at path, with
// metrics.k8s.io served when c.metrics.
func (c *fakeCluster) discovery(path string) []byte {
	c.t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "discovery", "testdata", "aggregated", strings.TrimPrefix(path, "/")+".json"))
	if err != nil {
		c.t.Error(err)
		return nil
	}
	if path != "/apis" || !c.metrics {
		return b
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		c.t.Error(err)
		return nil
	}
	items, _ := doc["items"].([]any)
	res := func(name, kind, scope string) map[string]any {
		return map[string]any{"resource": name, "responseKind": map[string]any{"group": "", "version": "", "kind": kind}, "scope": scope, "singularResource": "", "verbs": []any{"get", "list"}}
	}
	for i, it := range items {
		if g, _ := it.(map[string]any); g["metadata"].(map[string]any)["name"] == "metrics.k8s.io" {
			items[i] = map[string]any{"metadata": map[string]any{"name": "metrics.k8s.io"}, "versions": []any{map[string]any{
				"version": "v1beta1", "freshness": "Current",
				"resources": []any{res("nodes", "NodeMetrics", "Cluster"), res("pods", "PodMetrics", "Namespaced")},
			}}}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		c.t.Error(err)
	}
	return out
}

// parsePath splits /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]] and
// /apis/GROUP/VERSION/....
func parsePath(p string) (group, version, ns, resource, name, sub string, ok bool) {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(seg) >= 3 && seg[0] == "api":
		version, seg = seg[1], seg[2:]
	case len(seg) >= 4 && seg[0] == "apis":
		group, version, seg = seg[1], seg[2], seg[3:]
	default:
		return "", "", "", "", "", "", false
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		ns, seg = seg[1], seg[2:]
	}
	resource = seg[0]
	if len(seg) > 1 {
		name = seg[1]
	}
	if len(seg) > 2 {
		sub = seg[2]
	}
	return group, version, ns, resource, name, sub, true
}

// selects applies the request's label selector (one key=value) and field
// selector (metadata.name=NAME) to an object's metadata.
func selects(r *http.Request, md map[string]any) bool {
	if sel := r.URL.Query().Get("labelSelector"); sel != "" {
		k, v, _ := strings.Cut(sel, "=")
		labels, _ := md["labels"].(map[string]any)
		if labels[k] != v {
			return false
		}
	}
	if sel := r.URL.Query().Get("fieldSelector"); sel != "" {
		if v, ok := strings.CutPrefix(sel, "metadata.name="); ok && md["name"] != v {
			return false
		}
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure", "message": msg, "reason": reason, "code": code})
}

// obj builds an object from its metadata and other fields.
func obj(md map[string]any, fields map[string]any) map[string]any {
	o := map[string]any{"metadata": md}
	for k, v := range fields {
		o[k] = v
	}
	return o
}
