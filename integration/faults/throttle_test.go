package faults_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// Test429StormHonorsRetryAfter answers the next 18 requests for the
// namespace with 429 and Retry-After: 2, while 8 writers make 2 patches
// each through the proxy and the informer's watch is cut so that it opens
// again into the storm. Every patch must be applied exactly once, every
// retry must wait as told, and the requests the proxy sees must be only
// the 429s plus one success per logical request: no retry storm.
func Test429StormHonorsRetryAfter(t *testing.T) {
	const (
		storm      = 18
		retryAfter = 2 * time.Second
		writers    = 8
		patches    = 2
		writerUA   = "faults-writer"
	)
	env := testenv.Shared(t)
	r := newRig(t, env)
	for i := 0; i < writers; i++ {
		if _, err := r.direct.Resource(cmGVR).Namespace(r.ns).Create(t.Context(), configMap(r.ns, fmt.Sprintf("q-%d", i), "0"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	converge(t, r, inf, 30*time.Second)
	cfg := r.proxied()
	cfg.UserAgent = writerUA
	writer, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := writer.Resource(cmGVR).Namespace(r.ns)

	before := len(r.proxy.Records())
	start := time.Now()
	r.proxy.Respond429(storm, retryAfter, faultproxy.PathPrefix("/api/v1/namespaces/"+r.ns+"/"))
	r.proxy.CutAll() // the informer watches again, into the storm
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < patches; j++ {
				begin := time.Now()
				p := fmt.Sprintf(`{"data":{"v":"storm-%d-%d"}}`, i, j)
				if _, err := cms.Patch(t.Context(), fmt.Sprintf("q-%d", i), "application/merge-patch+json", []byte(p), metav1.PatchOptions{}); err != nil {
					t.Errorf("patch %d of q-%d was dropped: %v", j, i, err)
					return
				}
				mu.Lock()
				slowest = max(slowest, time.Since(begin))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	converge(t, r, inf, 30*time.Second)
	for i := 0; i < writers; i++ {
		obj, err := r.direct.Resource(cmGVR).Namespace(r.ns).Get(t.Context(), fmt.Sprintf("q-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v, _, _ := unstructured.NestedString(obj.Object, "data", "v"); v != fmt.Sprintf("storm-%d-%d", i, patches-1) {
			t.Errorf("q-%d holds %q after the storm", i, v)
		}
	}

	// Account for every request of the storm, per client and path, in
	// order.
	recs := r.proxy.Records()[before:]
	type stream struct{ ua, method, path string }
	seqs := map[stream][]faultproxy.Record{}
	throttled, patched, informerOK, other := 0, 0, 0, 0
	throttledBy := map[string]int{}
	for _, rec := range recs {
		s := stream{rec.UserAgent, rec.Method, rec.Path}
		seqs[s] = append(seqs[s], rec)
		switch {
		case rec.Status == http.StatusTooManyRequests:
			throttled++
			throttledBy[rec.UserAgent]++
		case rec.UserAgent == writerUA && rec.Method == http.MethodPatch && rec.Status == http.StatusOK:
			patched++
		case rec.UserAgent == informerUA && rec.Status == http.StatusOK:
			informerOK++
		default:
			other++
		}
	}
	var gaps []time.Duration
	maxAttempts := 0
	for s, seq := range seqs {
		attempts := 0
		for i := 0; i+1 < len(seq); i++ {
			if seq[i].Status != http.StatusTooManyRequests {
				attempts = 0
				continue
			}
			attempts++
			maxAttempts = max(maxAttempts, attempts+1)
			gap := seq[i+1].Start.Sub(seq[i].End)
			gaps = append(gaps, gap)
			if gap < retryAfter-100*time.Millisecond {
				t.Errorf("%s %s %s: retried %v after a 429 with Retry-After %v; the requests:\n%s", s.ua, s.method, s.path, gap.Round(time.Millisecond), retryAfter, describe(seq, start))
			}
		}
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	if len(gaps) == 0 {
		t.Fatal("no retry after a 429 was seen")
	}
	t.Logf("storm of %d×429 (Retry-After %v) over %v: %d requests at the proxy = %d throttled %v + %d patches applied + %d informer + %d other; "+
		"waits after a 429: min %v, median %v, max %v (%d retries); at most %d attempts for one request; slowest patch %v; informer delivered %s",
		storm, retryAfter, elapsed.Round(time.Millisecond), len(recs), throttled, throttledBy, patched, informerOK, other,
		gaps[0].Round(time.Millisecond), gaps[len(gaps)/2].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond), len(gaps),
		maxAttempts, slowest.Round(time.Millisecond), inf.model.counts())
	if throttled != storm {
		t.Errorf("%d requests were throttled, want all %d 429s used", throttled, storm)
	}
	if patched != writers*patches {
		t.Errorf("%d patches succeeded at the proxy, want exactly %d (one per patch)", patched, writers*patches)
	}
	if throttledBy[informerUA] == 0 {
		t.Errorf("the informer's watch did not meet the storm")
	}
	if informerOK > 2 || other > 0 {
		t.Errorf("retry storm: %d informer requests succeeded, %d other requests, during a storm that needed one watch", informerOK, other)
	}
}

// describe lists records one per line, with times relative to t0.
func describe(recs []faultproxy.Record, t0 time.Time) string {
	var b strings.Builder
	for _, rec := range recs {
		end := "open"
		if !rec.End.IsZero() {
			end = rec.End.Sub(t0).Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "  %v–%s ?%s: status %d, faults %v\n", rec.Start.Sub(t0).Round(time.Millisecond), end, rec.Query, rec.Status, rec.Faults)
	}
	return b.String()
}
