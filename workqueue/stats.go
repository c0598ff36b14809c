package workqueue

import "time"

// Stats is a snapshot of a queue's figures, taken by [Queue.Stats].
// Counters and statistics cover the queue's whole life.
type Stats struct {
	// Name is [Options.Name].
	Name string
	// Depth is the number of items waiting for Get (Len).
	Depth int
	// Adds counts the items that entered the queue: Add calls, including
	// those of AddAfter and AddRateLimited once due, that were not merged
	// into an item already waiting.
	Adds int64
	// Retries counts AddRateLimited calls accepted before shutdown.
	Retries int64
	// Processing is the number of items handed out by Get and not yet Done.
	Processing int
	// LongestRunning is how long the oldest item in processing has been in
	// processing; zero when none is.
	LongestRunning time.Duration
	// UnfinishedWork is the sum, over the items in processing, of how long
	// each has been in processing: work done that Done has not yet reported.
	UnfinishedWork time.Duration
	// QueueLatency is the time from Add to Get, over the items handed out.
	QueueLatency DurationStats
	// WorkDuration is the time from Get to Done, over the items finished.
	WorkDuration DurationStats
}

// DurationStats summarises observed durations.
type DurationStats struct {
	Count int64         // observations
	Total time.Duration // their sum
	Max   time.Duration // the largest
}

// Mean returns Total/Count, or zero with no observation.
func (s DurationStats) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Count)
}

func (s *DurationStats) observe(d time.Duration) {
	d = max(d, 0)
	s.Count++
	s.Total += d
	s.Max = max(s.Max, d)
}

// stats holds the counters a queue keeps; guarded by Queue.mu.
type stats struct {
	adds, retries              int64
	queueLatency, workDuration DurationStats
}

// Stats returns a snapshot of the queue's figures. It costs O(items in
// processing).
func (q *Queue[T]) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	m := Stats{
		Name:         q.name,
		Depth:        q.queued,
		Adds:         q.stats.adds,
		Retries:      q.stats.retries,
		Processing:   len(q.processing),
		QueueLatency: q.stats.queueLatency,
		WorkDuration: q.stats.workDuration,
	}
	for _, started := range q.processing {
		running := max(now.Sub(started), 0)
		m.UnfinishedWork += running
		m.LongestRunning = max(m.LongestRunning, running)
	}
	return m
}
