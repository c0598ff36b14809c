// Package metrics exports what kdyn's clients, informers, work queues,
// leader election, event recorder and controllers do as Prometheus
// metrics, under the names existing dashboards and alerts already query.
//
// It is the only kdyn package that imports
// github.com/prometheus/client_golang: the core packages expose small hook
// interfaces (rest.Metrics, informer.Metrics, workqueue.Metrics, …) and a
// program that does not export metrics does not link Prometheus. Nothing
// here is global: Register puts the families in the registry it is given,
// and the returned Set hands out the hooks to pass to each component.
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.Register(reg)
//	cfg.Metrics = m.REST()                                   // rest_client_*
//	f := informer.NewFactory(client, informer.FactoryOptions{Metrics: m.Informer()})
//	q := workqueue.New(workqueue.Options[string]{Name: "widgets", Metrics: m.WorkQueue()})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Families
//
// client-go's, with its names, labels and buckets:
//
//   - rest_client_requests_total{code,method,host}: every attempt, watches
//     included; code is the HTTP status or "<error>".
//   - rest_client_request_duration_seconds{verb,host}: each attempt's
//     latency to the answer's headers.
//   - rest_client_rate_limiter_duration_seconds{verb,host}: the wait at the
//     client-side rate limiter.
//   - rest_client_request_retries_total{code,verb,host}: requests sent
//     again after a Retry-After answer or a broken connection.
//   - workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
//     workqueue_work_duration_seconds, workqueue_retries_total,
//     workqueue_unfinished_work_seconds and
//     workqueue_longest_running_processor_seconds, each {name}; the three
//     gauges are read from the queues when scraped.
//
// Informer families client-go lacks, each {resource} ("deployments.v1.apps"):
//
//   - informer_objects: objects in the caches.
//   - informer_cache_bytes: an estimate of the heap the cached objects hold
//     (decoded, or encoded in a compact store) with their keys; indexes
//     and what entries share are left out.
//   - informer_list_starts_total, informer_watch_starts_total: lists (and
//     streaming lists) and watches opened.
//   - informer_relists_total: syncs forced by a 410 Gone.
//   - informer_watch_events_total{resource,type}: events read, by type.
//   - informer_event_delivery_lag_seconds: from an informer's receipt of a
//     change to a handler's call (a watch event carries no send time).
//   - informer_last_sync_timestamp_seconds: when the last sync completed.
//
// And leader_election_master_status{name} (1 while leading), the
// controller_runtime_* families of controller-runtime for the controller
// runner, events_dropped_total{reason} for the event recorder, and the Go
// runtime's and the process's own families (go_memstats_*, go_gc_*,
// go_goroutines, process_resident_memory_bytes, process_cpu_seconds_total,
// …, from client_golang's collectors), so the heap and the resident size
// of a controller show in production; a registry that already has those
// two collectors (prometheus.DefaultRegisterer) keeps its own.
//
// # Concurrency
//
// A Set and its hooks are safe for concurrent use; one Set serves every
// component of a program. Register fails, registering nothing, when the
// registry already has a family of one of these names (a second Register,
// or client-go's own registration in the same registry).
package metrics
