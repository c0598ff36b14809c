package faults_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// decodeWarning is the informer's log message for a frame that does not
// decode.
const decodeWarning = "watch stream sent an event that does not decode; re-watching from the last good resourceVersion"

// TestMalformedWatchFrame injects a syntactically broken frame into the
// watches of an informer and of "kdyn get -w", after both have delivered
// events on those streams. Each must log it once, watch again from the
// last good resourceVersion (no relist, nothing delivered twice, nothing
// missed) and not panic.
func TestMalformedWatchFrame(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 4, updates: 1, names: 4, prefix: "m"}, newWrites())
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	cli := startCLIWatch(t, r)
	converge(t, r, inf, 30*time.Second)
	convergeCLI(t, r, cli, 30*time.Second)
	syncRV := inf.inf.LastSyncResourceVersion()

	w := newWrites()
	churn(t, r, churnOptions{workers: 4, updates: 5, names: 4, prefix: "m"}, w) // events on the streams to be broken
	converge(t, r, inf, 30*time.Second)
	convergeCLI(t, r, cli, 30*time.Second)
	lastGood := inf.model.maxRV()
	before := len(r.proxy.Records())
	if n := r.proxy.InjectMalformedFrame(); n != 2 {
		t.Fatalf("injected into %d watches, want 2 (the informer's and kdyn's)", n)
	}
	churn(t, r, churnOptions{workers: 4, updates: 5, names: 4, prefix: "m"}, w)
	converge(t, r, inf, 30*time.Second)
	convergeCLI(t, r, cli, 30*time.Second)

	var next, cliNext *faultproxy.Record
	for _, rec := range r.proxy.Records()[before:] {
		switch {
		case !rec.Watch:
		case rec.UserAgent == informerUA && next == nil:
			next = &rec
		case rec.UserAgent != informerUA && cliNext == nil:
			cliNext = &rec
		}
	}
	warnings := inf.logs.FilterMessage(decodeWarning).Len()
	t.Logf("%s; informer: %d decode warnings, re-watched with ?%s (last good resourceVersion %d), delivered %s; kdyn get -w: %d resume notices",
		w, warnings, next.Query, lastGood, inf.model.counts(), cli.interruptions())
	if warnings != 1 {
		t.Errorf("the informer logged the malformed frame %d times, want once", warnings)
	}
	if rv := queryParam(next.Query, "resourceVersion"); rv != strconv.FormatUint(lastGood, 10) {
		t.Errorf("the informer re-watched from resourceVersion %q, want the last good one, %d", rv, lastGood)
	}
	if rv := inf.inf.LastSyncResourceVersion(); rv != syncRV {
		t.Errorf("the informer relisted after a malformed frame (resourceVersion %s → %s)", syncRV, rv)
	}
	if n, sample := w.missing(inf.model.delivered); n > 0 {
		t.Errorf("the informer never delivered %d versions, e.g. %s", n, strings.Join(sample, ", "))
	}
	_, printed, _, _ := cli.replay()
	if n, sample := w.missing(func(k, rv string) bool { return printed[k][rv] }); n > 0 {
		t.Errorf("kdyn get -w never printed %d versions, e.g. %s", n, strings.Join(sample, ", "))
	}
	t.Logf("kdyn get -w re-watched with ?%s", cliNext.Query)
	if rv := queryParam(cliNext.Query, "resourceVersion"); rv != strconv.FormatUint(lastGood, 10) {
		t.Errorf("bug: kdyn get -w re-watched from resourceVersion %q after the malformed frame, not from the last one it printed (%d): "+
			"watchTarget drops the resourceVersion watchOnce returns with an error, so the server sends again what was printed", rv, lastGood)
	}
	if n := cli.interruptions(); n != 1 {
		t.Errorf("kdyn get -w reported %d interruptions, want 1\nstderr:\n%s", n, cli.stderr.String())
	}
	if err := cli.stop(t); err != nil {
		t.Errorf("kdyn get -w: %v\nstderr:\n%s", err, cli.stderr.String())
	}
}

// maxRV returns the highest resourceVersion delivered.
func (m *model) maxRV() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n uint64
	for _, rv := range m.lastRV {
		n = max(n, rv)
	}
	return n
}
