package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestQuantiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p50, p99, mx := quantiles(d)
	if p50 != 50*time.Millisecond || p99 != 99*time.Millisecond || mx != 100*time.Millisecond {
		t.Fatalf("got %s %s %s", p50, p99, mx)
	}
	if a, b, c := quantiles(nil); a+b+c != 0 {
		t.Fatal("empty")
	}
}

func TestHistogramQuantile(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, q := range []float64{0.5, 0.99} {
		want := time.Duration(q*1000) * time.Millisecond
		got := h.quantile(q)
		if got < want || float64(got) > float64(want)*1.05 {
			t.Errorf("q%.2f = %s, want %s within 5%%", q, got, want)
		}
	}
	if h.quantile(1) != time.Second || h.max != time.Second {
		t.Errorf("max %s / %s", h.quantile(1), h.max)
	}
	var big histogram
	big.add(time.Hour)
	if big.quantile(0.5) != time.Hour {
		t.Errorf("capped to max: %s", big.quantile(0.5))
	}
}

func series(d time.Duration, n int, heap func(at time.Duration) uint64, gor func(at time.Duration) int, restart func(at time.Duration) bool) []resourceSample {
	var s []resourceSample
	for i := 1; i <= n; i++ {
		at := d * time.Duration(i) / time.Duration(n)
		s = append(s, resourceSample{at: at, heap: heap(at), goroutines: gor(at), inRestart: restart(at)})
	}
	return s
}

func TestFlatness(t *testing.T) {
	const d = 10 * time.Minute
	flatGor := func(time.Duration) int { return 200 }
	noRestart := func(time.Duration) bool { return false }
	window := func(at time.Duration) bool { return at >= 5*time.Minute && at < 6*time.Minute }

	// Flat with noise, and a warm-up ramp that is ignored.
	flat := series(d, 100, func(at time.Duration) uint64 {
		if at < 2*time.Minute {
			return uint64(50+at.Seconds()) << 20
		}
		return (200 + uint64(at/time.Second)%7) << 20
	}, flatGor, noRestart)
	if r := flatness(flat, d, 0.15, 10); !r.heapOK || !r.gorOK || r.reason != "" {
		t.Fatalf("flat: %+v", r)
	}
	// A leak: heap doubling over the run (the thirds rule sees growth of
	// more than 15% between the middle and the end, about 45% over the
	// run from a flat start).
	leak := series(d, 100, func(at time.Duration) uint64 { return uint64(200<<20) + uint64(at.Seconds()*float64(200<<20)/600) }, flatGor, noRestart)
	if r := flatness(leak, d, 0.15, 10); r.heapOK {
		t.Fatalf("leak not caught: %+v", r)
	}
	// A goroutine leak: one per 10 s.
	gleak := series(d, 100, func(time.Duration) uint64 { return 200 << 20 }, func(at time.Duration) int { return 200 + int(at/(10*time.Second)) }, noRestart)
	if r := flatness(gleak, d, 0.15, 10); r.gorOK {
		t.Fatalf("goroutine leak not caught: %+v", r)
	}
	// A spike inside the restart window does not count.
	spike := series(d, 100, func(at time.Duration) uint64 {
		if window(at) {
			return 900 << 20
		}
		return 200 << 20
	}, func(at time.Duration) int {
		if window(at) {
			return 400
		}
		return 200
	}, window)
	if r := flatness(spike, d, 0.15, 10); !r.heapOK || !r.gorOK {
		t.Fatalf("restart window counted: %+v", r)
	}
	// Too few samples is a failure with a reason, not a pass.
	if r := flatness(series(d, 2, func(time.Duration) uint64 { return 1 }, flatGor, noRestart), d, 0.15, 10); r.reason == "" || r.heapOK {
		t.Fatalf("too few: %+v", r)
	}
}

func TestTrackerLag(t *testing.T) {
	now := time.Unix(1000, 0)
	tr := newTracker(1)
	tr.now = func() time.Time { return now }

	// Write first, then the handler: lag is the difference.
	tr.wrote("ns/a", "10", now)
	now = now.Add(30 * time.Millisecond)
	tr.seen("ns/a", "10")
	// The handler first, then the write's bookkeeping: lag 0.
	tr.seen("ns/b", "11")
	tr.wrote("ns/b", "11", now)
	// A relist skipping straight to a newer version resolves the sample.
	tr.wrote("ns/c", "12", now)
	now = now.Add(time.Second)
	tr.seen("ns/c", "15")
	// An older version does not.
	tr.wrote("ns/d", "20", now)
	tr.seen("ns/d", "19")
	// Deletes.
	tr.deleted("ns/a", now)
	now = now.Add(2 * time.Second)
	tr.gone("ns/a", true)

	st := tr.takeInterval()
	if st.n != 4 || st.max != 2*time.Second || st.pending != 1 {
		t.Fatalf("stats %+v", st)
	}
	_, _, pending, unknown, _ := tr.totals()
	if pending != 1 || unknown != 1 {
		t.Fatalf("pending %d unknown %d", pending, unknown)
	}
	if m := tr.modelSnapshot(); len(m) != 3 || m["ns/c"] != 15 {
		t.Fatalf("model %v", m)
	}

	// The restart window: a sample overlapping it is kept apart.
	tr.restartBegins(now)
	tr.wrote("ns/e", "30", now.Add(-time.Second))
	now = now.Add(10 * time.Second)
	tr.seen("ns/e", "30")
	tr.restartEnds(now)
	tr.wrote("ns/f", "31", now.Add(time.Millisecond))
	now = now.Add(5 * time.Millisecond)
	tr.seen("ns/f", "31")
	st = tr.takeInterval()
	if st.n != 1 || st.nWin != 1 || st.winMax != 11*time.Second {
		t.Fatalf("window stats %+v", st)
	}
	if !tr.caughtUp(now.Add(-time.Second), time.Minute) || tr.caughtUp(now, time.Minute) {
		t.Fatal("caughtUp")
	}
}

func TestErrKind(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for err, want := range map[error]string{
		fmt.Errorf("dial: %w", syscall.ECONNREFUSED):                          "conn-refused",
		fmt.Errorf("x: %w", context.DeadlineExceeded):                         "timeout",
		apierrors.NewNotFound(gr, "x"):                                        "not-found",
		apierrors.NewConflict(gr, "x", errors.New("c")):                       "conflict",
		apierrors.NewServiceUnavailable("down"):                               "503",
		apierrors.NewTooManyRequests("slow", 1):                               "429",
		errors.New("http2: server sent GOAWAY"):                               "http2",
		errors.New("read tcp: connection reset by peer"):                      "conn-reset",
		errors.New("something else"):                                          "other",
		apierrors.NewGenericServerResponse(418, "GET", gr, "x", "", 0, false): "http-418",
	} {
		if got := errKind(err); got != want {
			t.Errorf("errKind(%v) = %q, want %q", err, got, want)
		}
	}
}

func TestSamplePeriod(t *testing.T) {
	for report, want := range map[time.Duration]time.Duration{
		30 * time.Second:       6 * time.Second,
		10 * time.Second:       2 * time.Second,
		2 * time.Minute:        10 * time.Second,
		3 * time.Second:        time.Second,
		500 * time.Millisecond: 500 * time.Millisecond,
	} {
		if got, n := samplePeriod(report); got != want || got*time.Duration(n) != report {
			t.Errorf("samplePeriod(%s) = %s×%d, want %s", report, got, n, want)
		}
	}
}

func TestDiff(t *testing.T) {
	want := map[string]uint64{"a": 1, "b": 2, "c": 3}
	if d := diff(want, map[string]uint64{"a": 1, "b": 2, "c": 3}); d != "" {
		t.Fatal(d)
	}
	d := diff(want, map[string]uint64{"a": 1, "b": 5, "x": 9})
	if d != "1 missing [c], 1 extra [x], 1 stale [b (rv 5, server 2)]" {
		t.Fatal(d)
	}
}

func TestTapScan(t *testing.T) {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"101"}}}` + "\n" +
		`{"type":"MODIFIED","object":{"metadata":{"name":"b","resourceVersion":"102"}}}` + "\n" +
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"103"}}}` + "\n"
	for step := 1; step <= len(stream); step++ {
		var got []uint64
		b := &tapBody{}
		for i := 0; i < len(stream); i += step {
			b.scan([]byte(stream[i:min(i+step, len(stream))]), time.Time{}, func(rv uint64, _ time.Time) { got = append(got, rv) })
		}
		if fmt.Sprint(got) != "[101 102 103]" {
			t.Fatalf("step %d: %v", step, got)
		}
	}
}
