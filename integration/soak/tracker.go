package main

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
)

// tracker is the ConfigMap handler's model (key → resourceVersion) and the
// handler-lag measurement.
//
// Lag is the time from a write's completion (the client has the answer) to
// the handler seeing that resourceVersion or a newer one of the same object
// (for a delete: seeing the object deleted). A fraction of writes is
// sampled. When the handler is faster than the writer's bookkeeping (the
// watch event arrives before the response is processed), the sample
// counts as 0. resourceVersions are compared as integers: opaque by
// contract, but etcd revisions on this server, and comparing them is the
// only way to see that a relist skipped straight past a sampled version.
type tracker struct {
	sampleRate float64
	now        func() time.Time

	mu        sync.Mutex
	model     map[string]uint64
	pending   map[string]lagSample
	pendingRV map[uint64]string // rv → key of pending create/patch samples
	// The restart window [rb, re): samples whose lifetime overlaps it are
	// kept apart. re is far in the future while the restart is under way.
	rb, re time.Time
	// Current report interval.
	lags      []time.Duration // outside the restart window
	lagsInWin []time.Duration
	// The split of lag outside the window for samples whose event was seen
	// arriving on the watch stream: completion → read from the stream
	// (server and network), and read → handler (kdyn).
	wire, client []time.Duration
	// Whole run.
	outside    histogram
	inWindow   histogram
	wireHist   histogram
	clientHist histogram
	resolved   uint64
	badRV      uint64
	unknownDs  uint64
	// lastDone is the latest completion time of a resolved sample.
	lastDone time.Time
	events   atomic.Int64
}

type lagSample struct {
	rv      uint64 // 0 for a delete
	del     bool
	done    time.Time
	arrived time.Time // when its event was read from the watch stream
}

func newTracker(sampleRate float64) *tracker {
	return &tracker{sampleRate: sampleRate, now: time.Now, model: map[string]uint64{}, pending: map[string]lagSample{}, pendingRV: map[uint64]string{}}
}

// arrived records that an event with resourceVersion rv was read from the
// full-object ConfigMap watch stream at at.
func (t *tracker) arrived(rv uint64, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key, ok := t.pendingRV[rv]
	if !ok {
		return
	}
	if s := t.pending[key]; s.rv == rv && s.arrived.IsZero() {
		s.arrived = at
		t.pending[key] = s
	}
}

func parseRV(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// handler is the full-object ConfigMap informer's handler.
func (t *tracker) handler() informer.Handler[*unstructured.Unstructured] {
	return informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(o *unstructured.Unstructured, _ bool) { t.seen(informer.Key(o), o.GetResourceVersion()) },
		UpdateFunc: func(_, o *unstructured.Unstructured) { t.seen(informer.Key(o), o.GetResourceVersion()) },
		DeleteFunc: func(d informer.Deleted[*unstructured.Unstructured]) {
			t.gone(informer.Key(d.Obj), d.FinalStateUnknown)
		},
	}
}

func (t *tracker) seen(key, rvs string) {
	t.events.Add(1)
	rv, ok := parseRV(rvs)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ok {
		t.badRV++
		return
	}
	t.model[key] = rv
	if s, ok := t.pending[key]; ok && !s.del && rv >= s.rv {
		t.resolveLocked(key, s, now)
	}
}

func (t *tracker) gone(key string, unknown bool) {
	t.events.Add(1)
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if unknown {
		t.unknownDs++
	}
	delete(t.model, key)
	// Whatever was pending for this object, the handler's view is now past
	// it: deletes are the last write of an object (names are never reused).
	if s, ok := t.pending[key]; ok {
		t.resolveLocked(key, s, now)
	}
}

// wrote records a completed create or patch (rv from the answer), maybe as
// a lag sample.
func (t *tracker) wrote(key, rvs string, done time.Time) {
	if rand.Float64() >= t.sampleRate {
		return
	}
	rv, ok := parseRV(rvs)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.pending[key]; ok {
		return // an older sample for this object resolves no later
	}
	s := lagSample{rv: rv, done: done}
	if have, ok := t.model[key]; ok && have >= rv {
		t.resolveLocked("", s, done) // the handler was first: lag 0
		return
	}
	t.pending[key] = s
	t.pendingRV[rv] = key
}

// deleted records a completed delete, maybe as a lag sample.
func (t *tracker) deleted(key string, done time.Time) {
	if rand.Float64() >= t.sampleRate {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.model[key]; !ok {
		if _, ok := t.pending[key]; !ok {
			t.resolveLocked("", lagSample{del: true, done: done}, done)
		}
		return
	}
	t.pending[key] = lagSample{del: true, done: done}
}

func (t *tracker) inWindowLocked(s lagSample, resolvedAt time.Time) bool {
	return !t.rb.IsZero() && resolvedAt.After(t.rb) && s.done.Before(t.re)
}

func (t *tracker) resolveLocked(key string, s lagSample, at time.Time) {
	if key != "" {
		delete(t.pending, key)
		if !s.del {
			delete(t.pendingRV, s.rv)
		}
	}
	lag := max(at.Sub(s.done), 0)
	t.resolved++
	if s.done.After(t.lastDone) {
		t.lastDone = s.done
	}
	if t.inWindowLocked(s, at) {
		t.lagsInWin = append(t.lagsInWin, lag)
		t.inWindow.add(lag)
		return
	}
	t.lags = append(t.lags, lag)
	t.outside.add(lag)
	if !s.arrived.IsZero() {
		wire := max(s.arrived.Sub(s.done), 0)
		client := max(at.Sub(s.arrived), 0)
		t.wire = append(t.wire, wire)
		t.client = append(t.client, client)
		t.wireHist.add(wire)
		t.clientHist.add(client)
	}
}

// restartBegins and restartEnds mark the restart window.
func (t *tracker) restartBegins(at time.Time) {
	t.mu.Lock()
	t.rb, t.re = at, at.Add(100*365*24*time.Hour)
	t.mu.Unlock()
}

func (t *tracker) restartEnds(at time.Time) {
	t.mu.Lock()
	t.re = at
	t.mu.Unlock()
}

// caughtUp reports whether the handler has seen a sampled write that
// completed after since, and no sampled write has been waiting longer
// than maxAge: the informer is back to its normal lag.
func (t *tracker) caughtUp(since time.Time, maxAge time.Duration) bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.lastDone.After(since) {
		return false
	}
	for _, s := range t.pending {
		if now.Sub(s.done) > maxAge {
			return false
		}
	}
	return true
}

// inRestartWindow reports whether at lies in the restart window.
func (t *tracker) inRestartWindow(at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.rb.IsZero() && !at.Before(t.rb) && at.Before(t.re)
}

// intervalStats are one report interval's lags.
type intervalStats struct {
	n, nWin            int
	p50, p99, max      time.Duration
	nSplit             int
	wireP99, clientP99 time.Duration
	winMax             time.Duration
	pending            int
	oldestPending      time.Duration
	oldestPendingInWin bool
}

// takeInterval returns and resets the current interval's lags.
func (t *tracker) takeInterval() intervalStats {
	now := t.now()
	t.mu.Lock()
	lags, win, wire, client := t.lags, t.lagsInWin, t.wire, t.client
	t.lags, t.lagsInWin, t.wire, t.client = nil, nil, nil, nil
	st := intervalStats{pending: len(t.pending)}
	for _, s := range t.pending {
		if age := now.Sub(s.done); age > st.oldestPending {
			st.oldestPending = age
			st.oldestPendingInWin = t.inWindowLocked(s, now)
		}
	}
	t.mu.Unlock()
	st.n, st.nWin = len(lags), len(win)
	st.p50, st.p99, st.max = quantiles(lags)
	_, _, st.winMax = quantiles(win)
	st.nSplit = len(wire)
	_, st.wireP99, _ = quantiles(wire)
	_, st.clientP99, _ = quantiles(client)
	return st
}

// modelSnapshot copies the handler's model.
func (t *tracker) modelSnapshot() map[string]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]uint64, len(t.model))
	for k, v := range t.model {
		out[k] = v
	}
	return out
}

// split returns the whole-run histograms of the two parts of the lag.
func (t *tracker) split() (wire, client histogram) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wireHist, t.clientHist
}

// totals returns the whole-run histograms and counters.
func (t *tracker) totals() (outside, inWindow histogram, pending int, unknownDeletes, badRV uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outside, t.inWindow, len(t.pending), t.unknownDs, t.badRV
}
