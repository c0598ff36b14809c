package workqueue

import "time"

// Metrics receives what a queue does, for an exporter: package metrics
// exports it under client-go's workqueue_* names, labelled with the
// queue's Options.Name. Options.Metrics nil observes nothing.
//
// Added, Retried, Waited and Worked are called with the queue's lock held:
// they must be cheap, must not call the queue and must be safe for
// concurrent use. Started and Stopped are called without it.
type Metrics interface {
	// Started is called once, by New: stats returns the queue's figures
	// (Queue.Stats), for gauges read when they are scraped (depth,
	// unfinished work, the longest-running processor). It may be called
	// at any time until Stopped.
	Started(name string, stats func() Stats)
	// Stopped is called once, when shutdown begins: the exporter lets
	// the queue's gauges go.
	Stopped(name string)
	// Added is called for each item that entered the queue (not merged
	// into one already waiting).
	Added(name string)
	// Retried is called for each AddRateLimited accepted.
	Retried(name string)
	// Waited is called as Get hands out an item, with the time since it
	// was added.
	Waited(name string, d time.Duration)
	// Worked is called at Done, with the time since Get handed the item
	// out.
	Worked(name string, d time.Duration)
}

// noMetrics is the Metrics of a queue without one.
type noMetrics struct{}

func (noMetrics) Started(string, func() Stats) {}
func (noMetrics) Stopped(string)               {}
func (noMetrics) Added(string)                 {}
func (noMetrics) Retried(string)               {}
func (noMetrics) Waited(string, time.Duration) {}
func (noMetrics) Worked(string, time.Duration) {}
