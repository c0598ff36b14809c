package events

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Reasons an event, or an update of its series, is dropped, as passed to
// [Metrics.Dropped] and counted in [Stats.Dropped].
const (
	// DropQueueFull: the queue held Options.QueueSize occurrences not yet
	// written (the server is slow or down, or Run is not running).
	DropQueueFull = "queue-full"
	// DropSpamFilter: the object's token bucket was empty.
	DropSpamFilter = "spam-filter"
	// DropWriteFailed: the server refused the write, or still failed after
	// Options.MaxAttempts attempts. A series update given up this way is
	// tried again at the series' next update.
	DropWriteFailed = "write-failed"
	// DropInvalid: the event could not be made valid: no kind on the
	// object, a type other than Normal or Warning, an empty or too long
	// reason or action.
	DropInvalid = "invalid"
	// DropShutdown: Eventf was called after Run returned, or the flush on
	// shutdown ran out of Options.FlushTimeout before writing it.
	DropShutdown = "shutdown"
)

// Metrics receives the recorder's figures as they happen, for an adapter
// (such as a Prometheus counter vector) to export. Calls come from the
// goroutines of Eventf and Run, concurrently: implementations must be safe
// for concurrent use and must not block.
type Metrics interface {
	// Dropped is called once for every event occurrence, or series update,
	// that is not written, with one of the Drop* reasons.
	Dropped(reason string)
}

// Stats is a snapshot of a recorder's counters over its whole life, taken by
// [Recorder.Stats].
type Stats struct {
	// Queued counts the occurrences Eventf accepted into the queue.
	Queued int64
	// Created counts Events created on the server (re-creations of an
	// expired series included).
	Created int64
	// Aggregated counts the occurrences added to the series of an Event
	// already written, instead of creating one.
	Aggregated int64
	// SeriesUpdates counts the series patches the server accepted.
	SeriesUpdates int64
	// Retries counts write attempts after a failed one.
	Retries int64
	// Dropped counts what was not written, by Drop* reason.
	Dropped map[string]int64
}

// counters are a recorder's live figures; Stats copies them.
type counters struct {
	queued, created, aggregated, seriesUpdates, retries atomic.Int64

	// mu guards dropped.
	mu      sync.Mutex
	dropped map[string]int64
}

func (c *counters) drop(m Metrics, reason string) {
	c.mu.Lock()
	if c.dropped == nil {
		c.dropped = map[string]int64{}
	}
	c.dropped[reason]++
	c.mu.Unlock()
	if m != nil {
		m.Dropped(reason)
	}
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	dropped := maps.Clone(c.dropped)
	c.mu.Unlock()
	if dropped == nil {
		dropped = map[string]int64{}
	}
	return Stats{
		Queued:        c.queued.Load(),
		Created:       c.created.Load(),
		Aggregated:    c.aggregated.Load(),
		SeriesUpdates: c.seriesUpdates.Load(),
		Retries:       c.retries.Load(),
		Dropped:       dropped,
	}
}
