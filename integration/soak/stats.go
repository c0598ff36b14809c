package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// quantiles returns the p50, p99 and max of d (which it sorts); zeros when
// d is empty.
func quantiles(d []time.Duration) (p50, p99, maxD time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	return d[rank(len(d), 0.50)], d[rank(len(d), 0.99)], d[len(d)-1]
}

// rank is the nearest-rank index of quantile q in n sorted values.
func rank(n int, q float64) int {
	i := int(math.Ceil(q*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// histogram is a fixed-size log-bucketed latency histogram (about 4.5%
// relative resolution from 100 µs to about 20 minutes), so the whole-run
// lag distribution costs constant memory and cannot itself look like a
// leak.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    time.Duration
}

const (
	histBuckets = 400
	histMin     = 100 * time.Microsecond
	histGrowth  = 1.045
)

func histBucket(d time.Duration) int {
	if d <= histMin {
		return 0
	}
	b := int(math.Ceil(math.Log(float64(d)/float64(histMin)) / math.Log(histGrowth)))
	return min(b, histBuckets-1)
}

// histUpper is the upper bound of bucket b.
func histUpper(b int) time.Duration {
	return time.Duration(float64(histMin) * math.Pow(histGrowth, float64(b)))
}

func (h *histogram) add(d time.Duration) {
	h.counts[histBucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

// quantile returns the upper bound of the bucket holding quantile q
// (capped at the exact maximum), or 0 when empty.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	want := uint64(rank(int(h.n), q)) + 1
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= want {
			return min(histUpper(b), h.max)
		}
	}
	return h.max
}

// minFlatSamples is the fewest samples a third may have for a verdict.
const minFlatSamples = 3

// resourceSample is one heap and goroutine measurement.
type resourceSample struct {
	at         time.Duration // since the write phase began
	heap       uint64        // HeapAlloc after runtime.GC
	goroutines int
	inflight   int  // writes in flight then (each holds an HTTP/2 stream goroutine)
	inRestart  bool // taken inside the restart window
}

// kdynGoroutines is the goroutine count net of in-flight writes, which
// come and go with the server's latency, not with kdyn's state.
func (s resourceSample) kdynGoroutines() int { return s.goroutines - s.inflight }

// trendResult is the flatness verdict on heap and goroutines.
type trendResult struct {
	midHeap, lastHeap float64
	midGor, lastGor   float64
	nMid, nLast       int
	heapRatio         float64
	heapOK, gorOK     bool
	reason            string
}

// flatness decides whether heap and goroutines are flat after warm-up.
//
// The rule: the write phase of length d is cut into thirds by time. The
// first third is warm-up (caches, connection pools, handler buffers and
// the runtime's own structures reach their working size) and is ignored.
// Samples inside the restart window are ignored too: during the outage
// and the relist that follows, goroutines (re-dials, backoffs) and heap
// (relist pages in flight) are legitimately different, and they would
// inflate the middle third and hide growth. Then the mean of the last
// third is compared with the mean of the middle third: a leak that grows
// with time or with the number of events shows as last > middle. Heap may
// grow by at most heapSlack (a fraction, e.g. 0.15: GC timing, map
// growth steps and the ±2% object count wander stay well inside it);
// goroutines, counted net of the writes in flight at the sample (each
// holds a goroutine in the HTTP/2 client, and their number follows the
// server's latency), by at most gorSlack in absolute terms (connection
// and timer goroutines come and go). The rule sees growth of more than
// 15% of the heap between the middle and the end of the run (a leak of
// about 45% over the run from a flat start) and any steady goroutine leak
// of more than gorSlack per third; the trend (least-squares slope) is
// printed beside it for a human to judge smaller drifts.
func flatness(samples []resourceSample, d time.Duration, heapSlack, gorSlack float64) trendResult {
	var r trendResult
	var hMid, hLast, gMid, gLast float64
	for _, s := range samples {
		if s.inRestart || s.at < d/3 {
			continue
		}
		if s.at < 2*d/3 {
			r.nMid++
			hMid += float64(s.heap)
			gMid += float64(s.kdynGoroutines())
		} else {
			r.nLast++
			hLast += float64(s.heap)
			gLast += float64(s.kdynGoroutines())
		}
	}
	if r.nMid < minFlatSamples || r.nLast < minFlatSamples {
		r.reason = fmt.Sprintf("too few samples outside warm-up and the restart window (middle %d, last %d)", r.nMid, r.nLast)
		return r
	}
	r.midHeap, r.lastHeap = hMid/float64(r.nMid), hLast/float64(r.nLast)
	r.midGor, r.lastGor = gMid/float64(r.nMid), gLast/float64(r.nLast)
	r.heapRatio = r.lastHeap / r.midHeap
	r.heapOK = r.heapRatio <= 1+heapSlack
	r.gorOK = r.lastGor <= r.midGor+gorSlack
	var why []string
	if !r.heapOK {
		why = append(why, fmt.Sprintf("heap grew %.1f%% (last third %s vs middle %s; allowed %.0f%%)",
			(r.heapRatio-1)*100, mib(uint64(r.lastHeap)), mib(uint64(r.midHeap)), heapSlack*100))
	}
	if !r.gorOK {
		why = append(why, fmt.Sprintf("goroutines grew by %.1f (last third %.1f vs middle %.1f; allowed +%.0f)",
			r.lastGor-r.midGor, r.lastGor, r.midGor, gorSlack))
	}
	r.reason = strings.Join(why, "; ")
	return r
}

// slope is the least-squares slope of heap over time (bytes per minute)
// for the samples flatness uses; information only.
func slope(samples []resourceSample, d time.Duration) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range samples {
		if s.inRestart || s.at < d/3 {
			continue
		}
		x, y := s.at.Minutes(), float64(s.heap)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	den := n*sxx - sx*sx
	if n < 2 || den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// errKind names the kind of a write error for the error counters.
func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn-refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, syscall.EPIPE):
		return "conn-reset"
	case apierrors.IsNotFound(err):
		return "not-found"
	case apierrors.IsAlreadyExists(err):
		return "already-exists"
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsTooManyRequests(err):
		return "429"
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err):
		return "server-timeout"
	case apierrors.IsServiceUnavailable(err):
		return "503"
	case apierrors.IsInternalError(err):
		return "500"
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return fmt.Sprintf("http-%d", st.Status().Code)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "GOAWAY"), strings.Contains(msg, "http2"):
		return "http2"
	case strings.Contains(msg, "connection refused"):
		return "conn-refused"
	case strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"), strings.Contains(msg, "EOF"):
		return "conn-reset"
	}
	return "other"
}

// isConnErr reports error kinds that mean the server is unreachable.
func isConnErr(kind string) bool {
	switch kind {
	case "conn-refused", "conn-reset", "http2", "timeout", "503":
		return true
	}
	return false
}

// formatCounts prints a counter map as "a=1 b=2" sorted by name, or "-".
func formatCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "-"
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

func mib(b uint64) string { return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20)) }

// dur prints a duration rounded for a report line.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}
