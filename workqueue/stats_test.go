package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ms = time.Millisecond
		q := newTestQueue(t, Options[string]{Name: "things", RateLimiter: NewItemExponentialRateLimiter[string](0, 0)})

		q.Add("a")
		q.Add("b")
		q.Add("a") // merged
		if diff := cmp.Diff(Stats{Name: "things", Depth: 2, Adds: 2}, q.Stats()); diff != "" {
			t.Errorf("after adds (-want +got):\n%s", diff)
		}

		step(10 * ms)
		mustGet(t, q) // a: 10ms in the queue
		step(5 * ms)
		mustGet(t, q) // b: 15ms in the queue
		step(20 * ms)
		// a has run 25ms, b 20ms.
		want := Stats{
			Name:           "things",
			Adds:           2,
			Processing:     2,
			LongestRunning: 25 * ms,
			UnfinishedWork: 45 * ms,
			QueueLatency:   DurationStats{Count: 2, Total: 25 * ms, Max: 15 * ms},
		}
		if diff := cmp.Diff(want, q.Stats()); diff != "" {
			t.Errorf("while processing (-want +got):\n%s", diff)
		}
		if got := want.QueueLatency.Mean(); got != 12500*time.Microsecond {
			t.Errorf("QueueLatency.Mean = %v, want 12.5ms", got)
		}

		q.AddRateLimited("a") // zero delay: re-queued at Done
		q.Done("a")
		q.Done("b")
		want = Stats{
			Name:         "things",
			Depth:        1,
			Adds:         3,
			Retries:      1,
			QueueLatency: DurationStats{Count: 2, Total: 25 * ms, Max: 15 * ms},
			WorkDuration: DurationStats{Count: 2, Total: 45 * ms, Max: 25 * ms},
		}
		if diff := cmp.Diff(want, q.Stats()); diff != "" {
			t.Errorf("after Done (-want +got):\n%s", diff)
		}
		if got := (DurationStats{}).Mean(); got != 0 {
			t.Errorf("Mean of nothing = %v, want 0", got)
		}
	})
}
