package informer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// recordingMetrics keeps what an informer reports, in order.
type recordingMetrics struct {
	mu        sync.Mutex
	got       []string
	delivered int
	bytes     int64
}

func (m *recordingMetrics) add(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, fmt.Sprintf(format, args...))
}

func (m *recordingMetrics) ListStarted(name string, relist bool) {
	m.add("list %s relist=%v", name, relist)
}
func (m *recordingMetrics) WatchStarted(name string)             { m.add("watch %s", name) }
func (m *recordingMetrics) Event(name string, t watch.EventType) { m.add("event %s %s", name, t) }
func (m *recordingMetrics) Cached(name string, objects int, bytes int64) {
	m.mu.Lock()
	m.bytes += bytes
	m.mu.Unlock()
	if objects != 0 {
		m.add("cached %s %+d", name, objects)
	}
}
func (m *recordingMetrics) Synced(name string, at time.Time) { m.add("synced %s", name) }
func (m *recordingMetrics) ShardServed(name string, serverSide bool) {
	m.add("shard %s server=%v", name, serverSide)
}
func (m *recordingMetrics) Delivered(name string, lag time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lag >= 0 {
		m.delivered++
	}
}

func (m *recordingMetrics) snapshot() ([]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.got), m.delivered
}

// Options.Metrics sees the list, the cache growing and shrinking, the
// sync, the watch, its events, a relist after a 410, and each delivery.
func TestMetricsObserveTheInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newScriptedSource()
		src.addList("10", "", nil, cm("a", "5"), cm("b", "6"))
		w1 := src.addWatch(nil)
		src.addList("20", "", nil, cm("a", "5"))
		src.addWatch(nil)
		m := &recordingMetrics{}
		rec := newRecorder()
		opts := listWatch
		opts.Metrics, opts.Name = m, "configmaps.v1"
		inf := startInformer(t, src, opts, rec)
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		w1.Add(cm("c", "11"))
		c12 := cm("c", "12")
		c12.Object["data"] = map[string]any{"k": "a longer value than before"}
		w1.Modify(c12)
		rec.expect(t, "add a@5 initial=true", "add b@6 initial=true", "add c@11 initial=false", "update c 11->12")
		if got, want := m.bytesNow(), storeBytes(inf); got != want || want == 0 {
			t.Fatalf("bytes reported %d, the cache's entries hold %d", got, want)
		}
		w1.Error(gone())
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		rec.expectSet(t, "delete b@6 unknown=true", "delete c@12 unknown=true")
		want := []string{
			"list configmaps.v1 relist=false", "cached configmaps.v1 +1", "cached configmaps.v1 +1", "synced configmaps.v1",
			"watch configmaps.v1", "event configmaps.v1 ADDED", "cached configmaps.v1 +1", "event configmaps.v1 MODIFIED", "event configmaps.v1 ERROR",
			"list configmaps.v1 relist=true", "cached configmaps.v1 -2", "synced configmaps.v1",
			"watch configmaps.v1",
		}
		var got []string
		var delivered int
		waitUntil(t, func() bool { got, delivered = m.snapshot(); return len(got) >= len(want) && delivered == 6 })
		if !slices.Equal(got, want) {
			t.Fatalf("reported\n%q\nwant\n%q", got, want)
		}
		if got, want := m.bytesNow(), storeBytes(inf); got != want || want == 0 {
			t.Fatalf("after the relist, bytes reported %d, the cache's entries hold %d", got, want)
		}
	})
}

func (m *recordingMetrics) bytesNow() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

// storeBytes sums the estimates of the informer's entries.
func storeBytes[T Object](inf *Informer[T]) int64 {
	inf.store.mu.RLock()
	defer inf.store.mu.RUnlock()
	var n int64
	for _, k := range inf.store.data.keys() {
		n += inf.store.data.bytes(k)
	}
	return n
}

// Without Metrics the informer's notifications carry no time.
func TestNoMetricsNoTimestamps(t *testing.T) {
	inf := New[*unstructured.Unstructured](newScriptedSource(), Options[*unstructured.Unstructured]{})
	if inf.measured {
		t.Fatal("an informer without Metrics times its notifications")
	}
}
