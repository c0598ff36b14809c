package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/workqueue"
)

// The hooks feed client-go's families with client-go's labels.
func TestRESTAndWorkQueueFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	c, err := rest.NewForConfig(&rest.Config{Host: srv.URL, Metrics: m.REST()})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_ = c.Get().AbsPath("/ok").Do(t.Context()).Error()
	}
	_ = c.Get().AbsPath("/missing").Do(t.Context()).Error()
	u, _ := url.Parse(srv.URL)
	if got := testutil.ToFloat64(m.requests.WithLabelValues("200", "GET", u.Host)); got != 3 {
		t.Errorf("requests 200 = %v, want 3", got)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("404", "GET", u.Host)); got != 1 {
		t.Errorf("requests 404 = %v, want 1", got)
	}

	q := workqueue.New(workqueue.Options[string]{Name: "widgets", Metrics: m.WorkQueue()})
	q.Add("a")
	q.Add("b")
	q.Add("a")
	item, _ := q.Get()
	err = testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="widgets"} 2
# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="widgets"} 1
`), "workqueue_adds_total", "workqueue_depth")
	if err != nil {
		t.Error(err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := gauge(t, reg, "workqueue_longest_running_processor_seconds"); got < 0.01 {
		t.Errorf("longest running %v s while an item is in processing for 20 ms", got)
	}
	q.Done(item)
	q.ShutDown()
	if n, err := testutil.GatherAndCount(reg, "workqueue_depth"); err != nil || n != 0 {
		t.Errorf("a stopped queue's gauges are still exported: %d, %v", n, err)
	}
	for _, name := range []string{"rest_client_request_duration_seconds", "rest_client_rate_limiter_duration_seconds", "workqueue_queue_duration_seconds", "workqueue_work_duration_seconds"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
			t.Errorf("%s: %d series, %v", name, n, err)
		}
	}
}

// gauge reads the single value of a gauge family.
func gauge(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) == 1 {
			return mf.Metric[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no single %s", name)
	return 0
}

// The informer hook counts, sums the cache across informers and keeps
// relists apart.
func TestInformerFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Informer()
	h.ListStarted("configmaps.v1", false)
	h.Cached("configmaps.v1", 1, 500)
	h.Cached("configmaps.v1", 1, 700)
	h.Cached("configmaps.v1", 0, 100) // an update
	h.Synced("configmaps.v1", time.Unix(1700000000, 0))
	h.WatchStarted("configmaps.v1")
	h.Event("configmaps.v1", watch.Added)
	h.Event("configmaps.v1", watch.Error)
	h.ListStarted("configmaps.v1", true)
	h.Cached("configmaps.v1", -1, -500)
	h.Delivered("configmaps.v1", 3*time.Millisecond)
	err = testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP informer_objects Objects in informers' caches, by resource.
# TYPE informer_objects gauge
informer_objects{resource="configmaps.v1"} 1
# HELP informer_cache_bytes Estimated heap bytes the objects in informers' caches hold (decoded, or encoded in a compact store), by resource.
# TYPE informer_cache_bytes gauge
informer_cache_bytes{resource="configmaps.v1"} 800
# HELP informer_list_starts_total Lists and streaming lists started by informers, by resource.
# TYPE informer_list_starts_total counter
informer_list_starts_total{resource="configmaps.v1"} 2
# HELP informer_relists_total Syncs informers started because a resourceVersion expired (410 Gone), by resource.
# TYPE informer_relists_total counter
informer_relists_total{resource="configmaps.v1"} 1
# HELP informer_watch_events_total Watch events read by informers, by resource and event type.
# TYPE informer_watch_events_total counter
informer_watch_events_total{resource="configmaps.v1",type="ADDED"} 1
informer_watch_events_total{resource="configmaps.v1",type="ERROR"} 1
# HELP informer_last_sync_timestamp_seconds Unix time of the last completed list or streaming list, by resource.
# TYPE informer_last_sync_timestamp_seconds gauge
informer_last_sync_timestamp_seconds{resource="configmaps.v1"} 1.7e+09
`), "informer_objects", "informer_cache_bytes", "informer_list_starts_total", "informer_relists_total", "informer_watch_events_total", "informer_last_sync_timestamp_seconds")
	if err != nil {
		t.Error(err)
	}
}

// A second Register in one registry fails and registers nothing more.
func TestRegisterTwiceFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := Register(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := Register(reg); err == nil || !strings.Contains(err.Error(), "metrics: register") {
		t.Fatalf("second Register = %v", err)
	}
	if _, err := Register(nil); err == nil {
		t.Fatal("nil registerer accepted")
	}
}

// Register adds the Go runtime's and the process's collectors to a new
// registry, and keeps those a registry already has.
func TestRegisterRuntimeAndProcessCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := Register(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		have[mf.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if !have[name] {
			t.Errorf("no %s after Register", name)
		}
	}
	withDefaults := prometheus.NewRegistry()
	withDefaults.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, err := Register(withDefaults); err != nil {
		t.Fatalf("Register into a registry with the runtime collectors: %v", err)
	}
}
