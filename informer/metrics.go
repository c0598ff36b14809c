package informer

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Metrics receives what informers do, for an exporter: package metrics
// exports it to Prometheus. Each call names the informer (Options.Name; a
// Factory uses the resource, such as "deployments.v1.apps" or
// "configmaps.v1"). Options.Metrics nil observes nothing. The methods are
// called from the informer's goroutines: they must be cheap and safe for
// concurrent use.
type Metrics interface {
	// ListStarted is called as a list or a streaming list starts; relist
	// marks a sync forced by a 410 Gone (an expired resourceVersion).
	ListStarted(name string, relist bool)
	// WatchStarted is called as a watch is opened (a streaming list's
	// counts as a list).
	WatchStarted(name string)
	// Event is called for every watch event the informer reads, a
	// streaming list's initial events included.
	Event(name string, t watch.EventType)
	// Cached is called as the cache changes, with the change in objects
	// (+1, -1, 0 for an update, or minus the objects a relist found gone)
	// and in bytes: an estimate of the heap the cached objects hold —
	// decoded, or encoded in a compact store — with their keys (the
	// indexes, and what entries share, are not counted).
	Cached(name string, objects int, bytes int64)
	// Synced is called as a sync (a list or a streaming list) completes.
	Synced(name string, at time.Time)
	// ShardServed is called once for an informer with a Shard, as its
	// first sync tells whether the server applied the shard selector
	// (serverSide) or ignored it (the informer then filters alone).
	ShardServed(name string, serverSide bool)
	// Delivered is called as a handler is given an event, with the time
	// since the informer received it. (A watch event carries no time of
	// its sending, so its receipt stands for it.)
	Delivered(name string, lag time.Duration)
}

// noMetrics is the Metrics of an informer without one.
type noMetrics struct{}

func (noMetrics) ListStarted(string, bool)        {}
func (noMetrics) WatchStarted(string)             {}
func (noMetrics) Event(string, watch.EventType)   {}
func (noMetrics) Cached(string, int, int64)       {}
func (noMetrics) Synced(string, time.Time)        {}
func (noMetrics) Delivered(string, time.Duration) {}
func (noMetrics) ShardServed(string, bool)        {}
