package workqueue

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// recordingMetrics keeps what a queue reports.
type recordingMetrics struct {
	mu    sync.Mutex
	got   []string
	stats func() Stats
}

func (m *recordingMetrics) add(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, fmt.Sprintf(format, args...))
}

func (m *recordingMetrics) Started(name string, stats func() Stats) {
	m.stats = stats
	m.add("started %s", name)
}
func (m *recordingMetrics) Stopped(name string)                 { m.add("stopped %s", name) }
func (m *recordingMetrics) Added(name string)                   { m.add("added %s", name) }
func (m *recordingMetrics) Retried(name string)                 { m.add("retried %s", name) }
func (m *recordingMetrics) Waited(name string, d time.Duration) { m.add("waited %s %v", name, d) }
func (m *recordingMetrics) Worked(name string, d time.Duration) { m.add("worked %s %v", name, d) }

// Options.Metrics sees every add, retry, wait and piece of work as it
// happens, can read the queue's figures, and is told once of the stop.
func TestMetricsObserveTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ms = time.Millisecond
		m := &recordingMetrics{}
		q := newTestQueue(t, Options[string]{Name: "things", Metrics: m, RateLimiter: NewItemExponentialRateLimiter[string](0, 0)})
		q.Add("a")
		q.Add("a") // merged: not an add
		step(10 * ms)
		mustGet(t, q)
		if s := m.stats(); s.Processing != 1 || s.Name != "things" {
			t.Fatalf("stats through the exporter: %+v", s)
		}
		step(5 * ms)
		q.AddRateLimited("a") // while processing: queued again at Done
		q.Done("a")
		q.ShutDown()
		q.ShutDown()
		want := []string{"started things", "added things", "waited things 10ms", "retried things", "added things", "worked things 5ms", "stopped things"}
		m.mu.Lock()
		defer m.mu.Unlock()
		if !slices.Equal(m.got, want) {
			t.Fatalf("reported\n%q\nwant\n%q", m.got, want)
		}
	})
}
