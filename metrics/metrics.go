package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/leaderelection"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/workqueue"
)

// Set is kdyn's metric families, registered once in one
// prometheus.Registerer. Its methods return the hooks the core packages
// take (rest.Config.Metrics, informer.FactoryOptions.Metrics,
// workqueue.Options.Metrics and the like); every hook of one Set feeds the
// same families, so one Set serves every client, informer and queue of a
// program. A Set is safe for concurrent use.
type Set struct {
	requests, retries *prometheus.CounterVec
	requestLatency    *prometheus.HistogramVec
	rateLimiterWait   *prometheus.HistogramVec

	queueAdds, queueRetries  *prometheus.CounterVec
	queueWaited, queueWorked *prometheus.HistogramVec
	queues                   *queueGauges
	informerLists            *prometheus.CounterVec
	informerRelists          *prometheus.CounterVec
	informerWatches          *prometheus.CounterVec
	informerEvents           *prometheus.CounterVec
	informerObjects          *prometheus.GaugeVec
	informerBytes            *prometheus.GaugeVec
	informerLastSync         *prometheus.GaugeVec
	informerLag              *prometheus.HistogramVec
	informerShardServed      *prometheus.GaugeVec
	leaderStatus             *prometheus.GaugeVec
	eventsDropped            *prometheus.CounterVec
	controllerReconciles     *prometheus.CounterVec
	controllerReconcileTime  *prometheus.HistogramVec
	controllerPanics         *prometheus.CounterVec
	controllerActiveWorkers  *prometheus.GaugeVec
	controllerMaxWorkers     *prometheus.GaugeVec
}

// requestBuckets are client-go's buckets for request and rate-limiter
// latency (k8s.io/client-go/tools/metrics as registered by
// component-base): 5 ms to 60 s.
var requestBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}

// queueBuckets are client-go's work queue buckets: 10 ns to 100 s, ten
// powers of ten.
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)

// lagBuckets cover handler lag from 100 µs to about 100 s.
var lagBuckets = prometheus.ExponentialBuckets(1e-4, 4, 11)

// reconcileBuckets are controller-runtime's reconcile-time buckets.
var reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
	1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}

// Register creates kdyn's metric families and registers them in reg (for
// example prometheus.NewRegistry(), or prometheus.DefaultRegisterer). It
// fails if reg already holds a family of the same name — registering
// twice in one registry, or beside client-go's own registration of the
// same names — and then registers none.
func Register(reg prometheus.Registerer) (*Set, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil prometheus.Registerer")
	}
	s := &Set{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_request_retries_total",
			Help: "Number of request retries, partitioned by status code, verb, and host.",
		}, []string{"code", "verb", "host"}),
		requestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds. Broken down by verb, and host.",
			Buckets: requestBuckets,
		}, []string{"verb", "host"}),
		rateLimiterWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_rate_limiter_duration_seconds",
			Help:    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
			Buckets: requestBuckets,
		}, []string{"verb", "host"}),
		queueAdds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total",
			Help: "Total number of adds handled by workqueue",
		}, []string{"name"}),
		queueRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total",
			Help: "Total number of retries handled by workqueue",
		}, []string{"name"}),
		queueWaited: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_queue_duration_seconds",
			Help:    "How long in seconds an item stays in workqueue before being requested.",
			Buckets: queueBuckets,
		}, []string{"name"}),
		queueWorked: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_work_duration_seconds",
			Help:    "How long in seconds processing an item from workqueue takes.",
			Buckets: queueBuckets,
		}, []string{"name"}),
		queues: newQueueGauges(),
		informerLists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "informer_list_starts_total",
			Help: "Lists and streaming lists started by informers, by resource.",
		}, []string{"resource"}),
		informerRelists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "informer_relists_total",
			Help: "Syncs informers started because a resourceVersion expired (410 Gone), by resource.",
		}, []string{"resource"}),
		informerWatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "informer_watch_starts_total",
			Help: "Watches opened by informers, by resource.",
		}, []string{"resource"}),
		informerEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "informer_watch_events_total",
			Help: "Watch events read by informers, by resource and event type.",
		}, []string{"resource", "type"}),
		informerObjects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_objects",
			Help: "Objects in informers' caches, by resource.",
		}, []string{"resource"}),
		informerBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_cache_bytes",
			Help: "Estimated heap bytes the objects in informers' caches hold (decoded, or encoded in a compact store), by resource.",
		}, []string{"resource"}),
		informerLastSync: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_last_sync_timestamp_seconds",
			Help: "Unix time of the last completed list or streaming list, by resource.",
		}, []string{"resource"}),
		informerLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "informer_event_delivery_lag_seconds",
			Help:    "Time from an informer's receipt of a change to its delivery to a handler, by resource.",
			Buckets: lagBuckets,
		}, []string{"resource"}),
		informerShardServed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "informer_shard_server_side",
			Help: "Whether the server applies sharded informers' shard selector (1) or ignores it, so that they filter alone (0), by resource.",
		}, []string{"resource"}),
		leaderStatus: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leader_election_master_status",
			Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		}, []string{"name"}),
		eventsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "events_dropped_total",
			Help: "Events the recorder dropped instead of writing, by reason.",
		}, []string{"reason"}),
		controllerReconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller",
		}, []string{"controller", "result"}),
		controllerReconcileTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "controller_runtime_reconcile_time_seconds",
			Help:    "Length of time per reconciliation per controller",
			Buckets: reconcileBuckets,
		}, []string{"controller"}),
		controllerPanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_panics_total",
			Help: "Total number of reconciliation panics per controller",
		}, []string{"controller"}),
		controllerActiveWorkers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of currently used workers per controller",
		}, []string{"controller"}),
		controllerMaxWorkers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciles per controller",
		}, []string{"controller"}),
	}
	families := []prometheus.Collector{
		s.requests, s.retries, s.requestLatency, s.rateLimiterWait,
		s.queueAdds, s.queueRetries, s.queueWaited, s.queueWorked, s.queues,
		s.informerLists, s.informerRelists, s.informerWatches, s.informerEvents, s.informerObjects, s.informerBytes, s.informerLastSync, s.informerLag, s.informerShardServed,
		s.leaderStatus, s.eventsDropped,
		s.controllerReconciles, s.controllerReconcileTime, s.controllerPanics, s.controllerActiveWorkers, s.controllerMaxWorkers,
	}
	for i, c := range families {
		if err := reg.Register(c); err != nil {
			for _, done := range families[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("metrics: register kdyn's metric families: %w", err)
		}
	}
	// The Go runtime's and the process's own (go_*, process_*), as
	// client_golang's default registry has them: a registry that already
	// has them (the default one) keeps its own.
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			var exists prometheus.AlreadyRegisteredError
			if !errors.As(err, &exists) {
				for _, done := range families {
					reg.Unregister(done)
				}
				return nil, fmt.Errorf("metrics: register the Go runtime and process collectors: %w", err)
			}
		}
	}
	return s, nil
}

// REST returns the hook of rest.Config.Metrics: client-go's rest_client_*
// families.
func (s *Set) REST() rest.Metrics { return restMetrics{s} }

type restMetrics struct{ s *Set }

func (m restMetrics) RequestDone(verb, host, code string, latency time.Duration) {
	m.s.requests.WithLabelValues(code, verb, host).Inc()
	m.s.requestLatency.WithLabelValues(verb, host).Observe(latency.Seconds())
}

func (m restMetrics) RateLimited(verb, host string, wait time.Duration) {
	m.s.rateLimiterWait.WithLabelValues(verb, host).Observe(wait.Seconds())
}

func (m restMetrics) Retried(verb, host, code string) {
	m.s.retries.WithLabelValues(code, verb, host).Inc()
}

// WorkQueue returns the hook of workqueue.Options.Metrics: client-go's
// workqueue_* families, labelled with each queue's name. Depth, unfinished
// work and the longest-running processor are read from the queue when
// scraped.
func (s *Set) WorkQueue() workqueue.Metrics { return queueMetrics{s} }

type queueMetrics struct{ s *Set }

func (m queueMetrics) Started(name string, stats func() workqueue.Stats) {
	m.s.queues.add(name, stats)
}
func (m queueMetrics) Stopped(name string) { m.s.queues.remove(name) }
func (m queueMetrics) Added(name string)   { m.s.queueAdds.WithLabelValues(name).Inc() }
func (m queueMetrics) Retried(name string) { m.s.queueRetries.WithLabelValues(name).Inc() }
func (m queueMetrics) Waited(name string, d time.Duration) {
	m.s.queueWaited.WithLabelValues(name).Observe(d.Seconds())
}
func (m queueMetrics) Worked(name string, d time.Duration) {
	m.s.queueWorked.WithLabelValues(name).Observe(d.Seconds())
}

// queueGauges is the collector of the gauges read from running queues.
type queueGauges struct {
	depth, unfinished, longest *prometheus.Desc

	mu     sync.Mutex
	queues map[string][]func() workqueue.Stats // by name; several queues may share one
}

func newQueueGauges() *queueGauges {
	return &queueGauges{
		depth:      prometheus.NewDesc("workqueue_depth", "Current depth of workqueue", []string{"name"}, nil),
		unfinished: prometheus.NewDesc("workqueue_unfinished_work_seconds", "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.", []string{"name"}, nil),
		longest:    prometheus.NewDesc("workqueue_longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running.", []string{"name"}, nil),
		queues:     map[string][]func() workqueue.Stats{},
	}
}

func (g *queueGauges) add(name string, stats func() workqueue.Stats) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queues[name] = append(g.queues[name], stats)
}

// remove forgets the oldest queue of that name still registered.
func (g *queueGauges) remove(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if qs := g.queues[name]; len(qs) > 1 {
		g.queues[name] = qs[1:]
	} else {
		delete(g.queues, name)
	}
}

// Describe implements prometheus.Collector.
func (g *queueGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.depth
	ch <- g.unfinished
	ch <- g.longest
}

// Collect implements prometheus.Collector: the figures of every running
// queue, summed over queues of one name.
func (g *queueGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, qs := range g.queues {
		var depth int
		var unfinished, longest time.Duration
		for _, stats := range qs {
			st := stats()
			depth += st.Depth
			unfinished += st.UnfinishedWork
			longest = max(longest, st.LongestRunning)
		}
		ch <- prometheus.MustNewConstMetric(g.depth, prometheus.GaugeValue, float64(depth), name)
		ch <- prometheus.MustNewConstMetric(g.unfinished, prometheus.GaugeValue, unfinished.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(g.longest, prometheus.GaugeValue, longest.Seconds(), name)
	}
}

// Informer returns the hook of informer.FactoryOptions.Metrics (or
// informer.Options.Metrics): the informer_* families, labelled by resource.
func (s *Set) Informer() informer.Metrics { return informerMetrics{s} }

type informerMetrics struct{ s *Set }

func (m informerMetrics) ListStarted(name string, relist bool) {
	m.s.informerLists.WithLabelValues(name).Inc()
	if relist {
		m.s.informerRelists.WithLabelValues(name).Inc()
	}
}

func (m informerMetrics) WatchStarted(name string) { m.s.informerWatches.WithLabelValues(name).Inc() }

func (m informerMetrics) Event(name string, t watch.EventType) {
	m.s.informerEvents.WithLabelValues(name, string(t)).Inc()
}

func (m informerMetrics) Cached(name string, objects int, bytes int64) {
	if objects != 0 {
		m.s.informerObjects.WithLabelValues(name).Add(float64(objects))
	}
	m.s.informerBytes.WithLabelValues(name).Add(float64(bytes))
}

func (m informerMetrics) Synced(name string, at time.Time) {
	m.s.informerLastSync.WithLabelValues(name).Set(float64(at.UnixNano()) / 1e9)
}

func (m informerMetrics) ShardServed(name string, serverSide bool) {
	v := 0.0
	if serverSide {
		v = 1
	}
	m.s.informerShardServed.WithLabelValues(name).Set(v)
}

func (m informerMetrics) Delivered(name string, lag time.Duration) {
	m.s.informerLag.WithLabelValues(name).Observe(lag.Seconds())
}

// Controller returns the hook of controller.Options.Metrics:
// controller-runtime's controller_runtime_* families, labelled with each
// controller's name.
func (s *Set) Controller() controller.Metrics { return controllerMetrics{s} }

type controllerMetrics struct{ s *Set }

func (m controllerMetrics) Workers(name string, n int) {
	m.s.controllerMaxWorkers.WithLabelValues(name).Set(float64(n))
}

func (m controllerMetrics) Started(name string) {
	m.s.controllerActiveWorkers.WithLabelValues(name).Inc()
}

func (m controllerMetrics) Finished(name, result string, d time.Duration) {
	m.s.controllerActiveWorkers.WithLabelValues(name).Dec()
	m.s.controllerReconciles.WithLabelValues(name, result).Inc()
	m.s.controllerReconcileTime.WithLabelValues(name).Observe(d.Seconds())
}

func (m controllerMetrics) Panicked(name string) {
	m.s.controllerPanics.WithLabelValues(name).Inc()
}

// Handler serves the metrics of g (the registry given to Register) in the
// Prometheus text format: the /metrics of controller.ManagerOptions, or of
// a mux of your own.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// LeaderElection returns the hook of leaderelection.Config.Metrics:
// leader_election_master_status{name}, 1 while leading.
func (s *Set) LeaderElection() leaderelection.Metrics { return leaderMetrics{s} }

type leaderMetrics struct{ s *Set }

func (m leaderMetrics) Leading(name string, leading bool) {
	v := 0.0
	if leading {
		v = 1
	}
	m.s.leaderStatus.WithLabelValues(name).Set(v)
}

// Events returns the hook of events.Options.Metrics: events_dropped_total
// by reason.
func (s *Set) Events() events.Metrics { return eventsMetrics{s} }

type eventsMetrics struct{ s *Set }

func (m eventsMetrics) Dropped(reason string) { m.s.eventsDropped.WithLabelValues(reason).Inc() }
