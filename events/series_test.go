package events

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func seriesOf(t *testing.T, ev *unstructured.Unstructured) (int64, string) {
	t.Helper()
	count, _, _ := unstructured.NestedInt64(ev.Object, "series", "count")
	last, _, _ := unstructured.NestedString(ev.Object, "series", "lastObservedTime")
	return count, last
}

func TestSeriesAggregation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		// The spam filter off: it would stop this hot loop after 25 occurrences
		// (TestSpamFilter).
		r := newTestRecorder(t, Options{SpamBurst: -1})
		p := pod("prod", "web")
		t0 := time.Now()
		emit := func() { r.Eventf(p, nil, Warning, "BackOff", "Restart", "back-off restarting") }

		emit()
		r.process(ctx)
		if got := r.server.verbs(); !cmp.Equal(got, []string{"create"}) {
			t.Fatalf("first occurrence: writes %v, want one create", got)
		}
		if _, ok := r.server.writes()[0].body["series"]; ok {
			t.Fatal("first occurrence created with a series")
		}

		// Occurrences within 30 s of the create are counted, not written.
		for range 3 {
			r.step(ctx, 5*time.Second)
			emit()
			r.process(ctx)
		}
		if got := r.server.verbs(); len(got) != 1 {
			t.Fatalf("within the update interval: writes %v, want the create alone", got)
		}
		// At 30 s after the create, one patch with the count so far.
		r.step(ctx, 14*time.Second)
		if got := r.server.verbs(); len(got) != 1 {
			t.Fatalf("at 29 s: writes %v, want the create alone", got)
		}
		r.step(ctx, time.Second)
		w := r.server.writes()
		if len(w) != 2 || w[1].verb != "patch" {
			t.Fatalf("at 30 s: writes %v, want create, patch", r.server.verbs())
		}
		wantPatch := map[string]any{"series": map[string]any{"count": float64(4), "lastObservedTime": microTime(t0.Add(15 * time.Second))}}
		if diff := cmp.Diff(wantPatch, w[1].body); diff != "" {
			t.Fatalf("series patch (-want +got):\n%s", diff)
		}

		// A hot loop: one occurrence a second for two minutes is one patch per
		// 30 s, never more.
		for range 120 {
			r.step(ctx, time.Second)
			emit()
			r.process(ctx)
		}
		if got := len(r.server.writes()); got != 2+4 {
			t.Fatalf("after 120 more occurrences over 120 s: %d writes (%v), want 6", got, r.server.verbs())
		}
		patches := r.server.writes()[1:]
		for i := 1; i < len(patches); i++ {
			// The patch bodies carry lastObservedTime; consecutive ones are 30 s apart.
			a, _ := time.Parse(time.RFC3339Nano, patches[i-1].body["series"].(map[string]any)["lastObservedTime"].(string))
			b, _ := time.Parse(time.RFC3339Nano, patches[i].body["series"].(map[string]any)["lastObservedTime"].(string))
			if d := b.Sub(a); d < 30*time.Second {
				t.Fatalf("patches %d and %d only %v apart", i-1, i, d)
			}
		}

		// The window passes: the final count is written, once.
		r.step(ctx, 10*time.Minute)
		evs := r.server.stored()
		if len(evs) != 1 {
			t.Fatalf("stored %d Events, want 1", len(evs))
		}
		count, last := seriesOf(t, evs[0])
		if want := int64(1 + 3 + 120); count != want {
			t.Fatalf("final series.count %d, want %d", count, want)
		}
		if want := microTime(t0.Add(150 * time.Second)); last != want {
			t.Fatalf("final series.lastObservedTime %s, want %s", last, want)
		}
		if n := len(r.server.writes()); n != 7 {
			t.Fatalf("%d writes after the window, want 7 (the final count)", n)
		}
		if len(r.writer.cache) != 0 {
			t.Fatalf("cache holds %d series after the window", len(r.writer.cache))
		}

		// After the window, the same event is a new Event.
		emit()
		r.process(ctx)
		if evs := r.server.stored(); len(evs) != 2 {
			t.Fatalf("stored %d Events after the window, want 2", len(evs))
		}
		s := r.Stats()
		if s.Created != 2 || s.Aggregated != 123 || s.SeriesUpdates != 6 {
			t.Fatalf("stats %+v, want 2 created, 123 aggregated, 6 series updates", s)
		}
	})
}

func TestSeriesKey(t *testing.T) {
	ctx := t.Context()
	r := newTestRecorder(t, Options{})
	a, b := pod("prod", "a"), pod("prod", "b")
	r.Eventf(a, nil, Normal, "Synced", "Sync", "ok")
	r.Eventf(a, nil, Normal, "Synced", "Sync", "ok")    // same: series
	r.Eventf(a, nil, Normal, "Synced", "Sync", "other") // note differs
	r.Eventf(a, nil, Warning, "Synced", "Sync", "ok")   // type differs
	r.Eventf(a, nil, Normal, "Synced", "Update", "ok")  // action differs
	r.Eventf(a, nil, Normal, "Changed", "Sync", "ok")   // reason differs
	r.Eventf(b, nil, Normal, "Synced", "Sync", "ok")    // regarding differs
	r.Eventf(a, b, Normal, "Synced", "Sync", "ok")      // related differs
	a2 := a.DeepCopy()
	a2.SetResourceVersion("8")
	r.Eventf(a2, nil, Normal, "Synced", "Sync", "ok") // a new version of the object, as client-go
	r.process(ctx)
	if got := len(r.server.stored()); got != 8 {
		t.Fatalf("%d Events, want 8", got)
	}
	if s := r.Stats(); s.Aggregated != 1 {
		t.Fatalf("aggregated %d, want 1", s.Aggregated)
	}
}

func TestSeriesPatchAfterExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := newTestRecorder(t, Options{})
		p := pod("prod", "web")
		r.Eventf(p, nil, Normal, "Pulled", "Pull", "pulled")
		r.process(ctx)
		name := r.server.stored()[0].GetName()
		// The server expired the Event.
		if err := r.server.Resource(GVR).Namespace("prod").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r.step(ctx, 40*time.Second)
		r.Eventf(p, nil, Normal, "Pulled", "Pull", "pulled")
		r.process(ctx)
		if got := r.server.verbs(); !cmp.Equal(got, []string{"create", "patch", "create"}) {
			t.Fatalf("writes %v, want create, patch (404), create", got)
		}
		evs := r.server.stored()
		if len(evs) != 1 || evs[0].GetName() != name {
			t.Fatalf("stored %v, want %s again", evs, name)
		}
		if count, _ := seriesOf(t, evs[0]); count != 2 {
			t.Fatalf("re-created with series.count %d, want 2", count)
		}
		if s := r.Stats(); s.Created != 2 || s.Dropped[DropWriteFailed] != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestSeriesPatchRetriedAfterGivingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := newTestRecorder(t, Options{MaxAttempts: 2})
		p := pod("prod", "web")
		r.Eventf(p, nil, Normal, "Pulled", "Pull", "pulled")
		r.process(ctx)
		unavailable := true
		r.server.fail = func(c call, n int) error {
			if c.verb == "patch" && unavailable {
				return apierrors.NewServiceUnavailable("down")
			}
			return nil
		}
		r.step(ctx, time.Second)
		r.Eventf(p, nil, Normal, "Pulled", "Pull", "pulled")
		r.process(ctx)
		r.step(ctx, 30*time.Second)
		if s := r.Stats(); s.Dropped[DropWriteFailed] != 1 || s.Retries != 1 {
			t.Fatalf("stats %+v, want one write given up after one retry", s)
		}
		unavailable = false
		r.step(ctx, 29*time.Second)
		if s := r.Stats(); s.SeriesUpdates != 0 {
			t.Fatal("a failed series update was tried again within the interval")
		}
		r.step(ctx, time.Second)
		if count, _ := seriesOf(t, r.server.stored()[0]); count != 2 {
			t.Fatalf("series.count %d after the retry, want 2", count)
		}
	})
}
