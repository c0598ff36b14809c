package faults_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

const idleTimeout = 3 * time.Second

// openInformerWatch returns the index of the informer's watch that is
// streaming now (headers sent, not ended), waiting for one (at most 10 s).
func openInformerWatch(t *testing.T, p *faultproxy.Proxy) int {
	t.Helper()
	idx := -1
	eventually(t, 10*time.Second, "an open informer watch", func() string {
		for i, rec := range p.Records() {
			if rec.Watch && rec.UserAgent == informerUA && rec.Status == 200 && rec.End.IsZero() {
				idx = i
				return ""
			}
		}
		return "none"
	})
	return idx
}

// stallAfterFrame waits until the watch at index idx delivers a frame (of
// writes under way), at once stalls the exchanges in flight (StallOpen),
// and returns the time of the stall. The informer's idle deadline then
// runs from about that time: a stall at a moment unrelated to the frames
// would find it started up to a frame's interval earlier, and frames come
// the less often the slower the machine writes.
func stallAfterFrame(t *testing.T, p *faultproxy.Proxy, idx int) time.Time {
	t.Helper()
	frames := p.Records()[idx].Frames
	deadline := time.Now().Add(10 * time.Second)
	for p.Records()[idx].Frames == frames {
		if time.Now().After(deadline) {
			t.Fatal("the watch delivered no frame within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	at := time.Now()
	if n := p.StallOpen(); n == 0 {
		t.Fatal("nothing to stall")
	}
	return at
}

// steadyWrites keeps changing objects straight on the server (one change
// every 150 ms) so that a healthy watch is never idle; wait returns when
// it is done.
func steadyWrites(t *testing.T, r *rig, updates int, w *writes) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		churn(t, r, churnOptions{workers: 1, updates: updates, names: 4, prefix: "s", pace: 150 * time.Millisecond}, w)
	}()
	return wg.Wait
}

// TestStalledWatchReplacedByIdleDeadline stalls the informer's watch (no
// bytes, no FIN: the connection stays open and silent) while objects keep
// changing. The informer's idle deadline (3 s) must notice, end that watch
// and open another from the last resourceVersion, on which every change is
// delivered.
func TestStalledWatchReplacedByIdleDeadline(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 2, updates: 1, names: 4, prefix: "s"}, newWrites())
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{IdleTimeout: idleTimeout})
	converge(t, r, inf, 30*time.Second)
	syncRV := inf.inf.LastSyncResourceVersion()

	w := newWrites()
	wait := steadyWrites(t, r, 40, w)
	stalled := openInformerWatch(t, r.proxy)
	stallAt := stallAfterFrame(t, r.proxy, stalled)
	var detected time.Duration
	replaced := -1
	eventually(t, 15*time.Second, "the stalled watch ended by the informer and replaced", func() string {
		recs := r.proxy.Records()
		rec := recs[stalled]
		if rec.End.IsZero() {
			return "the stalled watch is still open"
		}
		if !rec.ClientClosed || !rec.Stalled {
			return "the stalled watch ended, but not by the client"
		}
		detected = rec.End.Sub(stallAt)
		for i := stalled + 1; i < len(recs); i++ {
			if recs[i].Watch && recs[i].UserAgent == informerUA && recs[i].Status == 200 {
				replaced = i
				return ""
			}
		}
		return "no new watch yet"
	})
	wait()
	converge(t, r, inf, 30*time.Second)
	recs := r.proxy.Records()
	t.Logf("stall detected after %v (IdleTimeout %v); replacement watch opened %v after the stall began, from %s; %s; informer delivered %s",
		detected.Round(time.Millisecond), idleTimeout, recs[replaced].Start.Sub(stallAt).Round(time.Millisecond),
		queryParam(recs[replaced].Query, "resourceVersion"), w, inf.model.counts())
	if detected < idleTimeout-200*time.Millisecond || detected > 2*idleTimeout {
		t.Errorf("the stall was noticed after %v; want about the idle deadline, %v", detected, idleTimeout)
	}
	if rv := queryParam(recs[replaced].Query, "resourceVersion"); rv == "" || strings.Contains(recs[replaced].Query, "sendInitialEvents") {
		t.Errorf("the replacement watch does not resume from a resourceVersion: %s", recs[replaced].Query)
	}
	if rv := inf.inf.LastSyncResourceVersion(); rv != syncRV {
		t.Errorf("the informer relisted after a stall (resourceVersion %s → %s); it should resume", syncRV, rv)
	}
	if n, sample := w.missing(inf.model.delivered); n > 0 {
		t.Errorf("the informer never delivered %d versions, e.g. %s", n, strings.Join(sample, ", "))
	}
}

// TestStalledWatchOpenIsAbandoned stalls every connection, new ones too
// (a black hole that keeps accepting: no bytes, no FIN), for three idle
// deadlines. The informer notices the first stalled watch after one idle
// deadline; the watch it opens instead gets no answer either. That request
// must not wait forever: the informer is expected to give up on it and try
// again, as it does for a stream that went silent. Over HTTP/1.1 (no
// HTTP/2 pings) nothing bounds how long a watch may take to open.
func TestStalledWatchOpenIsAbandoned(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 2, updates: 1, names: 4, prefix: "b"}, newWrites())
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{IdleTimeout: idleTimeout})
	converge(t, r, inf, 30*time.Second)

	w := newWrites()
	wait := steadyWrites(t, r, 50, w)
	defer wait()
	time.Sleep(time.Second)
	stalled := openInformerWatch(t, r.proxy)
	stallAt := time.Now()
	r.proxy.Stall(true)
	time.Sleep(3 * idleTimeout)
	recs := r.proxy.Records()
	r.proxy.Stall(false)

	abandoned, pending := 0, 0
	for i := stalled; i < len(recs); i++ {
		rec := recs[i]
		if !rec.Watch || rec.UserAgent != informerUA {
			continue
		}
		switch {
		case rec.ClientClosed && !rec.End.IsZero():
			abandoned++
		case rec.End.IsZero() && rec.Status == 0:
			pending++
			t.Logf("watch request %d, sent %v after the stall began, has waited %v for its answer",
				i, rec.Start.Sub(stallAt).Round(time.Millisecond), time.Since(rec.Start).Round(time.Millisecond))
		}
	}
	wait()
	converge(t, r, inf, 30*time.Second)
	t.Logf("in %v of stall: %d informer watches given up by the informer, %d still waiting for an answer", 3*idleTimeout, abandoned, pending)
	if abandoned < 2 {
		t.Errorf("bug: the informer gave up %d watches in %v of stall (IdleTimeout %v), want at least 2: "+
			"the watch it opened after the first stall waits for its response headers with no deadline "+
			"(IdleTimeout is armed only once the watch is open; rest.Request.Watch has no header timeout), "+
			"so on an HTTP/1.1 connection that accepts bytes but answers nothing the informer hangs until the connection dies", abandoned, 3*idleTimeout, idleTimeout)
	}
}

func (m *model) delivered(key, rv string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[key][rv]
}

func queryParam(rawQuery, name string) string {
	for _, kv := range strings.Split(rawQuery, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
