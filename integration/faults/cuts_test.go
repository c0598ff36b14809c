package faults_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// TestConnectionCutsDuring2000Updates cuts every connection of an informer
// and of "kdyn get -w" every 400 ms — alternately inside a watch frame and
// all at once — while 16 workers make 2,000 updates (and creates and
// deletes) straight on the server. (The writes may take under two seconds
// on a fast machine: the ticks are short enough for both kinds of cut to
// land during them.) Both must end equal to the server, and
// since no resourceVersion expires, both must have delivered every version.
func TestConnectionCutsDuring2000Updates(t *testing.T) {
	env := testenv.Shared(t)
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 16, updates: 1, names: 8, prefix: "c"}, newWrites()) // the initial objects
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	cli := startCLIWatch(t, r)
	convergeCLI(t, r, cli, 30*time.Second)
	syncRV := inf.inf.LastSyncResourceVersion()

	w := newWrites() // what happens while both watch
	start := time.Now()
	i := 0
	stop := every(400*time.Millisecond, 300, func() {
		i++
		if i%2 == 1 {
			r.proxy.CloseWatchMidFrame()
			return
		}
		r.proxy.CutAll()
	})
	churn(t, r, churnOptions{workers: 16, updates: 125, names: 8, prefix: "c"}, w)
	ticks := stop()
	elapsed := time.Since(start)

	converge(t, r, inf, 60*time.Second)
	convergeCLI(t, r, cli, 60*time.Second)

	recs := r.proxy.Records()
	cut, mid, watches, cliWatches := 0, 0, 0, 0
	for _, rec := range recs {
		if rec.Has(faultproxy.FaultCut) {
			cut++
		}
		if rec.Has(faultproxy.FaultMidFrame) {
			mid++
		}
		if rec.Watch && rec.UserAgent == informerUA {
			watches++
		} else if rec.Watch {
			cliWatches++
		}
	}
	t.Logf("%s in %v with %d fault ticks: %d exchanges cut, %d watches cut inside a frame; watch requests: informer %d, CLI %d",
		w, elapsed.Round(time.Millisecond), ticks, cut, mid, watches, cliWatches)
	t.Logf("informer delivered %s", inf.model.counts())
	if ticks < 2 || cut == 0 || mid == 0 {
		t.Fatalf("the faults did not happen: %d ticks, %d cut, %d mid-frame", ticks, cut, mid)
	}

	// No resourceVersion expired (the watch cache holds them), so nothing
	// was relisted and every version must have been delivered and printed.
	if rv := inf.inf.LastSyncResourceVersion(); rv != syncRV {
		t.Logf("the informer relisted (resourceVersion %s → %s); not checking that every version was delivered", syncRV, rv)
	} else if n, sample := w.missing(func(k, rv string) bool {
		inf.model.mu.Lock()
		defer inf.model.mu.Unlock()
		return inf.model.seen[k][rv]
	}); n > 0 {
		t.Errorf("the informer never delivered %d versions the writer made, e.g. %s", n, strings.Join(sample, ", "))
	}
	_, printed, _, lines := cli.replay()
	if n, sample := w.missing(func(k, rv string) bool { return printed[k][rv] }); n > 0 {
		t.Errorf("kdyn get -w never printed %d versions the writer made, e.g. %s", n, strings.Join(sample, ", "))
	}
	t.Logf("kdyn get -w printed %d lines, %d resume notices", lines, cli.interruptions())
	if err := cli.stop(t); err != nil {
		t.Errorf("kdyn get -w: %v\nstderr:\n%s", err, cli.stderr.String())
	}
}
