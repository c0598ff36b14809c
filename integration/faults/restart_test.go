package faults_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// TestRestartAndCompaction runs an informer and "kdyn get -w" through the
// proxy against a control plane without watch cache, so that resuming a
// watch goes to etcd: a plain restart must be resumed from the last
// resourceVersion (nothing relisted, every version delivered), and a
// restart with etcd compacted past that resourceVersion must end in 410
// and a relist that delivers the deletes the watchers missed.
func TestRestartAndCompaction(t *testing.T) {
	t.Parallel() // its own control plane; runs beside TestRestartWithWatchCache after the others
	env := testenv.New(t, testenv.Options{ExtraArgs: []string{"--watch-cache=false"}})
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 8, updates: 1, names: 6, prefix: "r"}, newWrites())
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	cli := startCLIWatch(t, r)
	converge(t, r, inf, 30*time.Second)
	convergeCLI(t, r, cli, 30*time.Second)

	t.Run("restart", func(t *testing.T) {
		// The watchers are cut off (as the restart would cut them) while
		// objects change, the control plane restarts, and objects change
		// again. Without the proxy cutting them, the apiserver would wait
		// for their watches to drain and be killed after 20 s.
		syncRV := inf.inf.LastSyncResourceVersion()
		w := newWrites()
		r.proxy.Down(5 * time.Minute)
		churn(t, r, churnOptions{workers: 8, updates: 15, names: 6, prefix: "r"}, w)
		start := time.Now()
		if err := env.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		churn(t, r, churnOptions{workers: 8, updates: 15, names: 6, prefix: "r"}, w)
		r.proxy.Up()
		converge(t, r, inf, 60*time.Second)
		convergeCLI(t, r, cli, 60*time.Second)
		t.Logf("restart took %v; around it %s; %d connections refused; informer delivered %s, %d list/watch errors; kdyn get -w: %d resume notices",
			took.Round(time.Millisecond), w, r.proxy.Refused(), inf.model.counts(), len(inf.errs.list()), cli.interruptions())
		if rv := inf.inf.LastSyncResourceVersion(); rv != syncRV {
			t.Errorf("the informer relisted after a restart without compaction (resourceVersion %s → %s); it should resume", syncRV, rv)
		}
		if n, sample := w.missing(inf.model.delivered); n > 0 {
			t.Errorf("the informer never delivered %d versions, e.g. %s", n, strings.Join(sample, ", "))
		}
		_, printed, _, _ := cli.replay()
		if n, sample := w.missing(func(k, rv string) bool { return printed[k][rv] }); n > 0 {
			t.Errorf("kdyn get -w never printed %d versions, e.g. %s", n, strings.Join(sample, ", "))
		}
	})

	t.Run("compaction", func(t *testing.T) {
		syncRV := inf.inf.LastSyncResourceVersion()
		before := len(r.proxy.Records())
		// The watchers are cut off while objects change and some are
		// deleted for good, etcd is compacted and the control plane
		// restarts.
		r.proxy.Down(5 * time.Minute)
		w := newWrites()
		churn(t, r, churnOptions{workers: 8, updates: 20, names: 6, prefix: "r"}, w)
		gone := deleteSome(t, r, "r-04-5", "r-05-5", "r-06-5", "r-07-5")
		if err := env.Compact(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := env.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		churn(t, r, churnOptions{workers: 4, updates: 5, names: 6, prefix: "r"}, w)
		r.proxy.Up()
		converge(t, r, inf, 60*time.Second)
		convergeCLI(t, r, cli, 60*time.Second)
		recs := r.proxy.Records()[before:]
		t.Logf("while cut off: %s, %d deleted for good, compaction, restart; %d HTTP 410 answers, %d \"relisting\" logs; informer delivered %s",
			w, len(gone), countStatus(recs, http.StatusGone), inf.logs.FilterMessage("resourceVersion expired; relisting").Len(), inf.model.counts())
		if rv := inf.inf.LastSyncResourceVersion(); rv == syncRV {
			t.Errorf("no relist after the compaction (last sync resourceVersion still %s)", rv)
		}
		for _, key := range gone {
			if !inf.model.tombstoned(key) {
				t.Errorf("%s, deleted while the informer was away, was not delivered as a delete inferred from the relist", key)
			}
		}
	})

	if err := cli.stop(t); err != nil {
		t.Errorf("kdyn get -w: %v\nstderr:\n%s", err, cli.stderr.String())
	}

	t.Run("CLI relist fails after 410", func(t *testing.T) {
		// After the 410, kdyn get -w relists; here that list fails once
		// (a 500 from the proxy). The watch must still end equal to the
		// server: the objects deleted meanwhile printed as DELETED.
		fresh := startCLIWatch(t, r)
		convergeCLI(t, r, fresh, 30*time.Second)
		r.proxy.Down(5 * time.Minute)
		w := newWrites()
		churn(t, r, churnOptions{workers: 8, updates: 12, names: 6, prefix: "r"}, w)
		if err := env.Compact(t.Context()); err != nil {
			t.Fatal(err)
		}
		list := func(req *http.Request) bool {
			return req.UserAgent() != informerUA && req.Method == http.MethodGet && !faultproxy.IsWatch(req) &&
				strings.HasPrefix(req.URL.Path, "/api/v1/namespaces/"+r.ns+"/configmaps")
		}
		r.proxy.Respond5xx(http.StatusInternalServerError, 1, list)
		before := len(r.proxy.Records())
		r.proxy.Up()
		converge(t, r, inf, 60*time.Second)
		t.Logf("while cut off: %s, compaction; then kdyn's relist answered 500 once", w)
		// What kdyn asks for after the failed relist.
		var next *faultproxy.Record
		eventually(t, 20*time.Second, "kdyn get -w watching again after its relist failed", func() string {
			failed := false
			for _, rec := range r.proxy.Records()[before:] {
				switch {
				case rec.UserAgent == informerUA:
				case rec.Status == http.StatusInternalServerError:
					failed = true
				case failed && rec.Watch:
					next = &rec
					return ""
				}
			}
			if !failed {
				return "its relist was not answered 500 yet"
			}
			return "no watch since"
		})
		t.Logf("kdyn get -w's next watch after the failed relist: ?%s", next.Query)
		if queryParam(next.Query, "resourceVersion") == "" {
			t.Errorf("bug: after a 410 and a failed relist, kdyn get -w watches without a resourceVersion "+
				"(watchTarget keeps the \"\" that the failed relist returned and watches from it), "+
				"so objects deleted during the gap are never printed as DELETED: ?%s", next.Query)
		}
		convergeCLI(t, r, fresh, 10*time.Second)
	})
}

func countStatus(recs []faultproxy.Record, code int) int {
	n := 0
	for _, rec := range recs {
		if rec.Status == code {
			n++
		}
	}
	return n
}

// deleteSome deletes these ConfigMaps straight on the server and returns
// their keys.
func deleteSome(t *testing.T, r *rig, names ...string) []string {
	t.Helper()
	var keys []string
	for _, n := range names {
		if err := r.direct.Resource(cmGVR).Namespace(r.ns).Delete(t.Context(), n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		keys = append(keys, r.ns+"/"+n)
	}
	return keys
}

// TestRestartWithWatchCache restarts a control plane that has its watch
// cache on, as real clusters do, while an informer and "kdyn get -w" are
// cut off and objects change. The new watch cache starts at the current
// revision, so resuming from an older resourceVersion may be refused
// (410) at once; either way both must end equal to the server.
func TestRestartWithWatchCache(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{})
	r := newRig(t, env)
	churn(t, r, churnOptions{workers: 8, updates: 1, names: 6, prefix: "wc"}, newWrites())
	inf := startInformer(t, r, informer.Options[*unstructured.Unstructured]{})
	cli := startCLIWatch(t, r)
	converge(t, r, inf, 30*time.Second)
	convergeCLI(t, r, cli, 30*time.Second)
	syncRV := inf.inf.LastSyncResourceVersion()
	before := len(r.proxy.Records())

	r.proxy.Down(5 * time.Minute)
	w := newWrites()
	churn(t, r, churnOptions{workers: 8, updates: 10, names: 6, prefix: "wc"}, w)
	gone := deleteSome(t, r, "wc-06-5", "wc-07-5") // workers 6 and 7 do not churn again
	if err := env.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	churn(t, r, churnOptions{workers: 4, updates: 5, names: 6, prefix: "wc"}, w)
	r.proxy.Up()
	converge(t, r, inf, 60*time.Second)
	convergeCLI(t, r, cli, 60*time.Second)
	recs := r.proxy.Records()[before:]
	relisted := inf.inf.LastSyncResourceVersion() != syncRV
	t.Logf("while cut off: %s, %d deleted for good, restart; %d HTTP 410 answers; informer relisted: %v, delivered %s; kdyn get -w: %d resume notices",
		w, len(gone), countStatus(recs, http.StatusGone), relisted, inf.model.counts(), cli.interruptions())
	if relisted {
		for _, key := range gone {
			if !inf.model.tombstoned(key) {
				t.Errorf("%s, deleted while the informer was away, was not delivered as a delete inferred from the relist", key)
			}
		}
	}
	if err := cli.stop(t); err != nil {
		t.Errorf("kdyn get -w: %v\nstderr:\n%s", err, cli.stderr.String())
	}
}
