// Command soak is a bounded soak test of kdyn's informers against a real
// control plane (package testenv): "make soak". It is not part of CI.
//
// Usage:
//
//	go run ./integration/soak [-duration 10m] [-objects 20000] [-rate 500] [-writers 4] [-report 30s]
//	go run ./integration/soak -quick     # 60 s, 2,000 objects, 100 changes/s
//
// It starts a control plane, seeds -objects ConfigMaps (~1 KiB each) over
// -namespaces namespaces, and runs, from one informer.Factory, a
// metadata-only ResourceSet over every list+watch resource plus a
// full-object ConfigMap informer whose handler keeps a model
// (key → resourceVersion). -writers goroutines then make -rate creates,
// merge patches and deletes a second for -duration, with one control-plane
// restart half-way. Every -report it prints heap (HeapAlloc after a GC),
// goroutines, events delivered, handler lag (completion of a sampled write
// → the handler seeing that resourceVersion), writes and write errors.
//
// At the end it waits (bounded) for the informer cache and the handler
// model to equal a fresh list from the server, and decides PASS or FAIL:
//
//   - flat heap and goroutines after warm-up (see flatness for the rule);
//   - cache, metadata cache and handler model equal to the server by key
//     and resourceVersion, with every sampled write seen;
//   - handler lag p99 under -max-p99 outside the restart window, in every
//     report interval and over the run;
//   - the restart went through and everything shut down cleanly (no
//     goroutines left after the informers stopped).
//
// It exits 1 on FAIL, printing the reasons and a summary table.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/restmapper"
)

type config struct {
	duration   time.Duration
	objects    int
	rate       float64
	writers    int
	report     time.Duration
	namespaces int
	inflight   int
	sample     float64
	restart    bool
	restartAt  float64
	maxP99     time.Duration
	heapSlack  float64
	gorSlack   float64
	catchUp    time.Duration
	converge   time.Duration
	verbose    bool
	quick      bool
}

func main() {
	var c config
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "how long the writers run")
	flag.IntVar(&c.objects, "objects", 20000, "ConfigMaps to seed (the writers keep the count near it)")
	flag.Float64Var(&c.rate, "rate", 500, "changes per second, all writers together")
	flag.IntVar(&c.writers, "writers", 4, "writer goroutines (each owns a share of the objects)")
	flag.DurationVar(&c.report, "report", 30*time.Second, "report interval")
	flag.IntVar(&c.namespaces, "namespaces", 4, "namespaces to spread the objects over")
	flag.IntVar(&c.inflight, "inflight", 16, "concurrent writes per writer (writes of one object never overlap)")
	flag.Float64Var(&c.sample, "sample", 0.25, "fraction of writes whose handler lag is tracked")
	flag.BoolVar(&c.restart, "restart", true, "restart the control plane during the write phase")
	flag.Float64Var(&c.restartAt, "restart-at", 0.5, "when to restart, as a fraction of -duration")
	flag.DurationVar(&c.maxP99, "max-p99", 5*time.Second, "handler lag p99 allowed outside the restart window")
	flag.Float64Var(&c.heapSlack, "heap-slack", 0.15, "heap growth allowed, last vs middle (fraction)")
	flag.Float64Var(&c.gorSlack, "goroutine-slack", 10, "goroutine growth allowed, last vs middle (absolute)")
	flag.DurationVar(&c.catchUp, "catch-up", 60*time.Second, "longest the restart window may last after the control plane is ready again")
	flag.DurationVar(&c.converge, "converge", 2*time.Minute, "bound on the final wait for the cache to equal the server")
	flag.BoolVar(&c.verbose, "v", false, "copy the control plane's output to stderr")
	flag.BoolVar(&c.quick, "quick", false, "a fast check: 60s, 2000 objects, 100/s, 10s reports, restart at 1/4 (explicit flags win)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "soak: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if c.quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		quick := map[string]func(){
			"duration": func() { c.duration = 60 * time.Second },
			"objects":  func() { c.objects = 2000 },
			"rate":     func() { c.rate = 100 },
			"report":   func() { c.report = 10 * time.Second },
			// A restart takes 25-40 s here (the apiserver does not exit
			// within testenv's 20 s SIGTERM grace while watches are open):
			// at 1/4 the writers still run after it.
			"restart-at": func() { c.restartAt = 0.25 },
		}
		for name, apply := range quick {
			if !set[name] {
				apply()
			}
		}
	}
	if err := c.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	os.Exit(run(c))
}

func (c config) validate() error {
	switch {
	case c.duration < 10*time.Second:
		return errors.New("-duration must be at least 10s")
	case c.objects < c.writers || c.writers < 1:
		return errors.New("-writers must be ≥ 1 and -objects ≥ -writers")
	case c.rate <= 0, c.report <= 0, c.namespaces < 1, c.inflight < 1:
		return errors.New("-rate, -report, -namespaces and -inflight must be positive")
	case c.sample <= 0 || c.sample > 1:
		return errors.New("-sample must be in (0, 1]")
	case c.restartAt <= 0 || c.restartAt >= 1:
		return errors.New("-restart-at must be in (0, 1)")
	}
	return nil
}

// samplePeriod is how often heap and goroutines are measured: about five
// times a report, between 1 s and 10 s, dividing the report interval.
func samplePeriod(report time.Duration) (period time.Duration, perReport int) {
	perReport = 5
	switch {
	case report/5 > 10*time.Second:
		perReport = int((report + 10*time.Second - 1) / (10 * time.Second))
	case report/5 < time.Second:
		perReport = max(1, int(report/time.Second))
	}
	return report / time.Duration(perReport), perReport
}

// connTracker dials and remembers connections, so that shutdown can close
// them all and count goroutines left behind by kdyn rather than by idle
// HTTP/2 connections; it also counts dials (reconnects).
type connTracker struct {
	d      net.Dialer
	dialed atomic.Int64
	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	t    *connTracker
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		delete(c.t.conns, c)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}

func newConnTracker() *connTracker {
	return &connTracker{d: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}, conns: map[*trackedConn]struct{}{}}
}

func (t *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := t.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t.dialed.Add(1)
	tc := &trackedConn{Conn: c, t: t}
	t.mu.Lock()
	t.conns[tc] = struct{}{}
	t.mu.Unlock()
	return tc, nil
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	cs := make([]*trackedConn, 0, len(t.conns))
	for c := range t.conns {
		cs = append(cs, c)
	}
	t.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

func logf(format string, args ...any) {
	fmt.Printf("soak: "+format+"\n", args...)
}

// outcome collects everything the verdict and the summary need.
type outcome struct {
	failures []string
	rows     [][2]string
}

func (o *outcome) fail(format string, args ...any) {
	o.failures = append(o.failures, fmt.Sprintf(format, args...))
}
func (o *outcome) row(k, format string, args ...any) {
	o.rows = append(o.rows, [2]string{k, fmt.Sprintf(format, args...)})
}

func run(c config) (code int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var out outcome
	began := time.Now()
	logf("config: duration=%s objects=%d rate=%.0f/s writers=%d×%d in flight namespaces=%d report=%s sample=%.2f restart=%t at %.2f max-p99=%s heap-slack=%.0f%% goroutine-slack=%.0f GOMAXPROCS=%d",
		c.duration, c.objects, c.rate, c.writers, c.inflight, c.namespaces, c.report, c.sample, c.restart, c.restartAt, c.maxP99, c.heapSlack*100, c.gorSlack, runtime.GOMAXPROCS(0))

	// The control plane; stopped on every path, its log kept on FAIL.
	opts := testenv.Options{}
	if c.verbose {
		opts.Output = os.Stderr
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Minute)
	env, err := testenv.Start(sctx, opts)
	scancel()
	if err != nil {
		logf("FAIL: start the control plane: %v", err)
		return 1
	}
	logf("control plane ready at %s after %s", env.Host(), time.Since(began).Round(100*time.Millisecond))
	defer func() {
		if code != 0 {
			keepLog(env)
		}
		if err := env.Stop(); err != nil {
			logf("stopping the control plane: %v", err)
		}
	}()

	wconns, iconns := newConnTracker(), newConnTracker()
	wcfg := env.RESTConfig(testenv.Admin)
	wcfg.QPS = -1 // the writers pace themselves
	wcfg.Dial = wconns.dial
	wcfg.UserAgent = "kdyn-soak-writer"
	tr := newTracker(c.sample)
	icfg := env.RESTConfig(testenv.Admin)
	icfg.Dial = iconns.dial
	icfg.UserAgent = "kdyn-soak-informers"
	icfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &watchTap{next: rt, tr: tr} }
	wclient, err := dynamic.NewForConfig(wcfg)
	if err != nil {
		logf("FAIL: %v", err)
		return 1
	}
	iclient, err := dynamic.NewForConfig(icfg)
	if err != nil {
		logf("FAIL: %v", err)
		return 1
	}

	// Seed.
	namespaces := make([]string, c.namespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("soak-%d", i)
		if err := createNamespace(ctx, wclient, namespaces[i]); err != nil {
			logf("FAIL: create namespace %s: %v", namespaces[i], err)
			return 1
		}
	}
	seedStart := time.Now()
	seedCtx, seedCancel := context.WithTimeout(ctx, 10*time.Minute)
	keys, err := seed(seedCtx, wclient, namespaces, c.objects, 16, func(n int) { logf("seeding: %d/%d", n, c.objects) })
	seedCancel()
	if err != nil {
		logf("FAIL: seed: %v", err)
		return 1
	}
	seedTook := time.Since(seedStart)
	logf("seeded %d ConfigMaps in %s (%.0f/s)", len(keys), seedTook.Round(100*time.Millisecond), float64(len(keys))/seedTook.Seconds())
	out.row("seed", "%d ConfigMaps (~1 KiB) in %d namespaces, %s", len(keys), c.namespaces, seedTook.Round(100*time.Millisecond))
	wconns.closeAll()
	baseGoroutines := settleGoroutines(2 * time.Second)

	// Informers: one factory, a metadata-only ResourceSet over everything
	// that lists and watches, and a full-object ConfigMap informer.
	mapper, err := restmapper.NewForConfig(icfg)
	if err != nil {
		logf("FAIL: %v", err)
		return 1
	}
	factory := informer.NewFactory(iclient, informer.FactoryOptions{})
	cmInf := factory.ForResource(cmGVR, informer.InformerOptions{})
	reg, err := cmInf.AddEventHandler(tr.handler())
	if err != nil {
		logf("FAIL: %v", err)
		return 1
	}
	var rsEvents [3]atomic.Int64 // added, modified, deleted
	var rsUnknown, discoveryErrs atomic.Int64
	rs := informer.NewResourceSet(factory, mapper, informer.ResourceSetOptions{
		Handler: func(ev informer.Event) {
			switch ev.Type {
			case watch.Added:
				rsEvents[0].Add(1)
			case watch.Modified:
				rsEvents[1].Add(1)
			case watch.Deleted:
				rsEvents[2].Add(1)
				if ev.FinalStateUnknown {
					rsUnknown.Add(1)
				}
			}
		},
		OnDiscoveryError: func(error) { discoveryErrs.Add(1) },
	})
	infCtx, infCancel := context.WithCancel(context.Background())
	factoryDone := make(chan struct{})
	go func() {
		defer close(factoryDone)
		_ = factory.Run(infCtx)
	}()
	rsDone := make(chan error, 1)
	go func() { rsDone <- rs.Run(infCtx) }()
	var shutdownOnce sync.Once
	shutdown := func() {
		shutdownOnce.Do(func() {
			shutdownInformers(&out, infCancel, rsDone, factoryDone, []*connTracker{wconns, iconns}, baseGoroutines)
		})
	}
	defer shutdown()

	syncStart := time.Now()
	if err := waitSynced(ctx, 5*time.Minute, factory, rs, reg); err != nil {
		out.fail("informers did not sync: %v", err)
		return finish(&out, c)
	}
	syncTook := time.Since(syncStart)
	logf("informers synced in %s: %d resources in the ResourceSet, %d ConfigMaps cached", syncTook.Round(10*time.Millisecond), len(rs.Resources()), cmInf.Store().Len())
	out.row("informers", "ResourceSet (metadata) over %d resources + full-object ConfigMap informer; synced in %s", len(rs.Resources()), syncTook.Round(10*time.Millisecond))

	// Write phase.
	ws := newWriteStats()
	per := make([][]string, c.writers)
	for i, k := range keys {
		per[i%c.writers] = append(per[i%c.writers], k)
	}
	writeStart := time.Now()
	wctx, wcancel := context.WithTimeout(ctx, c.duration)
	defer wcancel()
	var wwg sync.WaitGroup
	for i := range c.writers {
		w := &writer{id: i, client: wclient, ns: namespaces, target: len(per[i]), inflight: c.inflight, tr: tr, st: ws, live: per[i]}
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			w.run(wctx, c.rate/float64(c.writers))
		}()
	}
	var rinfo restartInfo
	restartDone := make(chan struct{})
	go func() {
		defer close(restartDone)
		if c.restart {
			rinfo = restartDuring(wctx, env, tr, time.Duration(float64(c.duration)*c.restartAt), c.catchUp)
		}
	}()

	samples, intervals := reportLoop(wctx, c, writeStart, tr, reg, ws, &rsEvents, iconns)
	wwg.Wait()
	writeTook := time.Since(writeStart)
	<-restartDone
	interrupted := ctx.Err() != nil
	if interrupted {
		out.fail("interrupted")
	}
	logf("writers stopped after %s", writeTook.Round(100*time.Millisecond))

	// Convergence.
	conv := converge(ctx, c.converge, wclient, cmInf, factory.ForResourceMetadata(cmGVR, informer.InformerOptions{}), tr)

	// Verdict.
	judge(&out, c, samples, intervals, tr, ws, rinfo, conv, writeTook)
	out.row("events", "ResourceSet: %d added, %d modified, %d deleted (%d final state unknown); ConfigMap handler: %d",
		rsEvents[0].Load(), rsEvents[1].Load(), rsEvents[2].Load(), rsUnknown.Load(), tr.events.Load())
	out.row("connections", "informer client dialed %d, writer client %d; discovery errors %d", iconns.dialed.Load(), wconns.dialed.Load(), discoveryErrs.Load())
	shutdown()
	return finish(&out, c)
}

func createNamespace(ctx context.Context, c dynamic.Interface, name string) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func waitSynced(ctx context.Context, bound time.Duration, f *informer.Factory, rs *informer.ResourceSet, reg *informer.Registration[*unstructured.Unstructured]) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := rs.WaitForSync(ctx); err != nil {
		return fmt.Errorf("resource set: %w", err)
	}
	if err := f.WaitForSync(ctx); err != nil {
		return fmt.Errorf("factory: %w", err)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !reg.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("ConfigMap handler: %w", ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// settleGoroutines waits up to d for the goroutine count to stop falling
// and returns it.
func settleGoroutines(d time.Duration) int {
	deadline := time.Now().Add(d)
	n := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

type restartInfo struct {
	attempted       bool
	at              time.Duration // into the write phase
	err             error
	begin, ready    time.Time
	caughtUp        time.Time
	caughtUpTimeout bool
	afterWrites     bool // the write phase ended before the handler caught up
	killed          bool // testenv had to SIGKILL the old process
}

// restartDuring restarts the control plane after delay (unless ctx ends
// first) and marks the restart window in tr: from the restart until the
// handler has caught up (a write completed after the restart was seen and
// nothing sampled has waited over a second), plus 5 s, at most catchUp
// after the control plane is ready.
func restartDuring(ctx context.Context, env *testenv.Env, tr *tracker, delay, catchUp time.Duration) restartInfo {
	var ri restartInfo
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ri
	case <-t.C:
	}
	ri.attempted = true
	ri.at = delay
	ri.begin = time.Now()
	tr.restartBegins(ri.begin)
	logf("restarting the control plane")
	rctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	ri.err = env.Restart(rctx)
	cancel()
	ri.ready = time.Now()
	if log, err := os.ReadFile(env.LogPath()); err == nil {
		ri.killed = bytes.Contains(log, []byte("testenv: killed"))
	}
	if ri.err != nil {
		logf("restart failed: %v", ri.err)
		tr.restartEnds(ri.ready)
		return ri
	}
	logf("control plane back after %s", ri.ready.Sub(ri.begin).Round(100*time.Millisecond))
	deadline := ri.ready.Add(catchUp)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !tr.caughtUp(ri.ready, time.Second) {
		if time.Now().After(deadline) {
			ri.caughtUpTimeout = true
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			// The write phase ended: nothing more to catch up with (the
			// final convergence check covers the recovery).
			ri.afterWrites = true
			ri.caughtUp = time.Now()
			tr.restartEnds(ri.caughtUp.Add(5 * time.Second))
			return ri
		}
	}
	ri.caughtUp = time.Now()
	tr.restartEnds(ri.caughtUp.Add(5 * time.Second))
	if ri.caughtUpTimeout {
		logf("the ConfigMap handler had not caught up %s after the restart", catchUp)
	} else {
		logf("ConfigMap handler caught up %s after the control plane was ready", ri.caughtUp.Sub(ri.ready).Round(100*time.Millisecond))
	}
	return ri
}

// intervalRecord is one report line's numbers, kept for the verdict.
type intervalRecord struct {
	end    time.Duration
	lag    intervalStats
	writes int64
	wp99   time.Duration // write latency p99
}

// reportLoop samples heap and goroutines and prints a report line every
// c.report until ctx is done.
func reportLoop(ctx context.Context, c config, start time.Time, tr *tracker, reg *informer.Registration[*unstructured.Unstructured],
	ws *writeStats, rsEvents *[3]atomic.Int64, iconns *connTracker) ([]resourceSample, []intervalRecord) {
	period, perReport := samplePeriod(c.report)
	fmt.Printf("%8s %9s %5s %4s %8s %8s %5s | %-8s %-8s %-8s %6s %-8s %-8s %-11s %-11s | %7s %7s %8s %6s %5s | %s\n",
		"elapsed", "heap", "gor", "infl", "ev-rs", "ev-cm", "buf", "lag-p50", "lag-p99", "lag-max", "n", "wire-p99", "kdyn-p99", "restart", "pending", "writes", "rate/s", "w-p99", "behind", "dials", "write errors")
	var samples []resourceSample
	var intervals []intervalRecord
	var lastWrites, lastRS, lastCM, lastBehind, lastDials int64
	lastErrs := map[string]int64{}
	lastReport := start
	tick := time.NewTicker(period)
	defer tick.Stop()
	n := 0
	line := func(now time.Time, s resourceSample) {
		st := tr.takeInterval()
		wl := ws.takeLatency()
		_, wp99, _ := quantiles(wl)
		writes := ws.done()
		rsTotal := rsEvents[0].Load() + rsEvents[1].Load() + rsEvents[2].Load()
		cm := tr.events.Load()
		behind := ws.behind.Load()
		dials := iconns.dialed.Load()
		errs := ws.errCounts()
		delta := map[string]int64{}
		for k, v := range errs {
			delta[k] = v - lastErrs[k]
		}
		secs := now.Sub(lastReport).Seconds()
		restart := "-"
		if st.nWin > 0 {
			restart = fmt.Sprintf("%d<=%s", st.nWin, dur(st.winMax))
		}
		pend := fmt.Sprint(st.pending)
		if st.pending > 0 {
			pend += "/" + dur(st.oldestPending)
		}
		fmt.Printf("%8s %9s %5d %4d %8d %8d %5d | %-8s %-8s %-8s %6d %-8s %-8s %-11s %-11s | %7d %7.1f %8s %6d %5d | %s\n",
			now.Sub(start).Round(time.Second), mib(s.heap), s.goroutines, s.inflight, rsTotal-lastRS, cm-lastCM, reg.Pending(),
			dur(st.p50), dur(st.p99), dur(st.max), st.n, dur(st.wireP99), dur(st.clientP99), restart, pend,
			writes-lastWrites, float64(writes-lastWrites)/secs, dur(wp99), behind-lastBehind, dials-lastDials, formatCounts(delta))
		intervals = append(intervals, intervalRecord{end: now.Sub(start), lag: st, writes: writes - lastWrites, wp99: wp99})
		lastWrites, lastRS, lastCM, lastBehind, lastDials, lastErrs, lastReport = writes, rsTotal, cm, behind, dials, errs, now
	}
	for {
		select {
		case <-ctx.Done():
			// A last line for the rest of the interval; its sample is not
			// used for flatness (the writers are exiting).
			now := time.Now()
			if now.Sub(lastReport) > time.Second {
				line(now, measure(now, start, tr, ws))
			}
			return samples, intervals
		case now := <-tick.C:
			s := measure(now, start, tr, ws)
			samples = append(samples, s)
			n++
			if n%perReport == 0 {
				line(now, s)
			}
		}
	}
}

func measure(now, start time.Time, tr *tracker, ws *writeStats) resourceSample {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return resourceSample{at: now.Sub(start), heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine(),
		inflight: int(ws.inflight.Load()), inRestart: tr.inRestartWindow(now)}
}

type convergence struct {
	took, list                     time.Duration
	ok                             bool
	server, cache, meta, model     int
	cacheDiff, metaDiff, modelDiff string
	err                            error
}

// converge waits until the full-object cache, the metadata cache and the
// handler model all equal a fresh list of ConfigMaps from the server, at
// most bound; on timeout it lists the server once more (in case it was
// the server that moved) before reporting the differences.
func converge(ctx context.Context, bound time.Duration, c *dynamic.DynamicClient, full *informer.Informer[*unstructured.Unstructured],
	meta *informer.Informer[*metav1.PartialObjectMetadata], tr *tracker) convergence {
	var cv convergence
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	server, err := listServer(ctx, c)
	cv.list = time.Since(start)
	if err != nil {
		cv.err = err
		return cv
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	relisted := false
	for {
		cache := rvMap(full.Store().List())
		metaM := rvMap(meta.Store().List())
		model := tr.modelSnapshot()
		cv.server, cv.cache, cv.meta, cv.model = len(server), len(cache), len(metaM), len(model)
		cv.cacheDiff, cv.metaDiff, cv.modelDiff = diff(server, cache), diff(server, metaM), diff(server, model)
		if cv.cacheDiff == "" && cv.metaDiff == "" && cv.modelDiff == "" {
			cv.ok = true
			cv.took = time.Since(start)
			return cv
		}
		select {
		case <-tick.C:
			continue
		case <-ctx.Done():
		}
		if relisted {
			break
		}
		relisted = true
		lctx, lcancel := context.WithTimeout(context.Background(), time.Minute)
		server, err = listServer(lctx, c)
		lcancel()
		if err != nil {
			cv.err = err
			break
		}
	}
	cv.took = time.Since(start)
	return cv
}

func rvMap[T metav1.Object](objs []T) map[string]uint64 {
	m := make(map[string]uint64, len(objs))
	for _, o := range objs {
		rv, _ := parseRV(o.GetResourceVersion())
		m[informer.Key(o)] = rv
	}
	return m
}

// listServer lists every ConfigMap's metadata, 500 a page.
func listServer(ctx context.Context, c *dynamic.DynamicClient) (map[string]uint64, error) {
	m := map[string]uint64{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		var page *metav1.PartialObjectMetadataList
		var err error
		for attempt := range 3 {
			page, err = c.Metadata().Resource(cmGVR).List(ctx, opts)
			if err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * time.Second)
		}
		if err != nil {
			return nil, fmt.Errorf("list ConfigMaps: %w", err)
		}
		for i := range page.Items {
			rv, _ := parseRV(page.Items[i].GetResourceVersion())
			m[informer.Key(&page.Items[i])] = rv
		}
		if page.Continue == "" {
			return m, nil
		}
		opts.Continue = page.Continue
	}
}

// diff describes how got differs from want ("" when equal).
func diff(want, got map[string]uint64) string {
	var missing, extra, stale []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != v:
			stale = append(stale, fmt.Sprintf("%s (rv %d, server %d)", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra)+len(stale) == 0 {
		return ""
	}
	ex := func(s []string) string {
		sort.Strings(s)
		if len(s) > 3 {
			s = append(s[:3:3], "…")
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("%d missing [%s], %d extra [%s], %d stale [%s]", len(missing), ex(missing), len(extra), ex(extra), len(stale), ex(stale))
}

func judge(out *outcome, c config, samples []resourceSample, intervals []intervalRecord, tr *tracker, ws *writeStats,
	ri restartInfo, cv convergence, writeTook time.Duration) {
	// Writes. The rate check leaves out the restart outage, when writes
	// cannot succeed.
	done := ws.done()
	errs := ws.errCounts()
	var nerr int64
	for _, v := range errs {
		nerr += v
	}
	out.row("writes", "%d ok in %s (%.1f/s of %.0f/s asked): %d creates, %d patches, %d deletes; %d waited for a free worker",
		done, writeTook.Round(100*time.Millisecond), float64(done)/writeTook.Seconds(), c.rate, ws.creates.Load(), ws.patches.Load(), ws.deletes.Load(), ws.behind.Load())
	out.row("write errors", "%d: %s", nerr, formatCounts(errs))
	ex := ws.examples()
	kinds := make([]string, 0, len(ex))
	for k := range ex {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		out.row("  e.g. "+k, "%s", ex[k])
	}
	up := writeTook
	if ri.attempted && ri.err == nil {
		up -= ri.ready.Sub(ri.begin)
	}
	if float64(done) < 0.9*c.rate*up.Seconds() {
		out.row("WARNING", "the writers made %.1f changes/s while the server was up, not the %.0f/s asked: the server was the bottleneck (every write slot busy), so the verdict holds for this lower load",
			float64(done)/up.Seconds(), c.rate)
	}

	// Restart.
	switch {
	case !c.restart:
		out.row("restart", "disabled")
	case !ri.attempted:
		out.fail("the restart did not happen")
	case ri.err != nil:
		out.fail("restart: %v", ri.err)
	default:
		catch := fmt.Sprintf("handler caught up %s after ready", ri.caughtUp.Sub(ri.ready).Round(100*time.Millisecond))
		switch {
		case ri.afterWrites:
			catch = "the write phase ended before the handler caught up (recovery checked by convergence only)"
		case ri.caughtUpTimeout:
			catch = fmt.Sprintf("handler NOT caught up %s after ready", ri.caughtUp.Sub(ri.ready).Round(100*time.Millisecond))
		}
		killed := ""
		if ri.killed {
			killed = " (the old apiserver did not exit within testenv's 20 s of SIGTERM and was killed)"
		}
		out.row("restart", "at %s, control plane down→ready %s%s, %s", ri.at.Round(time.Second),
			ri.ready.Sub(ri.begin).Round(100*time.Millisecond), killed, catch)
	}

	// Lag.
	outside, inWin, _, unknownDeletes, badRV := tr.totals()
	limit := c.maxP99
	// An interval whose lag p99 is over the limit fails, unless the server
	// itself stalled then — its writes' p99 latency was over the limit too
	// — while the part of the lag on kdyn's side (event read from the
	// stream → handler) stayed under it: that is reported, not failed.
	var worst, excused []string
	for _, iv := range intervals {
		if iv.lag.n > 0 && iv.lag.p99 >= limit {
			msg := fmt.Sprintf("%s: p99 %s (writes p99 %s, read→handler p99 %s)", iv.end.Round(time.Second), dur(iv.lag.p99), dur(iv.wp99), dur(iv.lag.clientP99))
			if iv.wp99 >= limit && iv.lag.nSplit > 0 && iv.lag.clientP99 < limit {
				excused = append(excused, msg)
			} else {
				worst = append(worst, msg)
			}
		}
		if iv.lag.oldestPending >= limit && !iv.lag.oldestPendingInWin {
			worst = append(worst, fmt.Sprintf("%s: a write unseen for %s", iv.end.Round(time.Second), dur(iv.lag.oldestPending)))
		}
	}
	out.row("handler lag", "outside restart: p50 %s, p99 %s, max %s (n=%d); restart window: p99 %s, max %s (n=%d)",
		dur(outside.quantile(0.5)), dur(outside.quantile(0.99)), dur(outside.max), outside.n,
		dur(inWin.quantile(0.99)), dur(inWin.max), inWin.n)
	wire, client := tr.split()
	split := fmt.Sprintf("write completion → event read from the watch stream p99 %s (max %s); read → handler p99 %s (max %s) (n=%d)",
		dur(wire.quantile(0.99)), dur(wire.max), dur(client.quantile(0.99)), dur(client.max), client.n)
	out.row("lag split", "%s", split)
	if outside.n == 0 {
		out.fail("no handler lag samples")
	} else if p := outside.quantile(0.99); p >= limit {
		out.fail("handler lag p99 %s ≥ %s outside the restart window (%s)", dur(p), limit, split)
	}
	if len(worst) > 0 {
		out.fail("handler lag over %s outside the restart window in report intervals: %s", limit, strings.Join(worst, "; "))
	}
	if len(excused) > 0 {
		out.row("server stalls", "lag over %s while the server's own write latency was too (not kdyn): %s", limit, strings.Join(excused, "; "))
	}
	if badRV > 0 {
		out.fail("%d objects with a non-integer resourceVersion", badRV)
	}
	out.row("relist deletes", "%d ConfigMap deletes delivered with FinalStateUnknown", unknownDeletes)

	// Heap and goroutines.
	fr := flatness(samples, c.duration, c.heapSlack, c.gorSlack)
	var hmin, hmax uint64
	gmin, gmax := 1<<30, 0
	for i, s := range samples {
		if i == 0 || s.heap < hmin {
			hmin = s.heap
		}
		hmax = max(hmax, s.heap)
		gmin, gmax = min(gmin, s.kdynGoroutines()), max(gmax, s.kdynGoroutines())
	}
	if fr.nMid >= minFlatSamples && fr.nLast >= minFlatSamples {
		out.row("heap", "middle %s → last %s (%+.1f%%, limit +%.0f%%); range %s–%s; trend %+.2f MiB/min",
			mib(uint64(fr.midHeap)), mib(uint64(fr.lastHeap)), (fr.heapRatio-1)*100, c.heapSlack*100, mib(hmin), mib(hmax), slope(samples, c.duration)/(1<<20))
		out.row("goroutines", "net of in-flight writes: middle %.1f → last %.1f (%+.1f, limit +%.0f); range %d–%d",
			fr.midGor, fr.lastGor, fr.lastGor-fr.midGor, c.gorSlack, gmin, gmax)
		out.row("flatness samples", "%d total, %d middle, %d last (first third = warm-up and the restart window excluded)", len(samples), fr.nMid, fr.nLast)
	}
	switch {
	case fr.reason == "":
	case c.quick && fr.nMid < minFlatSamples || c.quick && fr.nLast < minFlatSamples:
		// A minute is too short to hold warm-up, a restart window and two
		// thirds of samples; -quick checks the rest.
		out.row("heap/goroutines", "not judged in -quick: %s", fr.reason)
	default:
		out.fail("%s", fr.reason)
	}

	// Convergence.
	switch {
	case cv.err != nil:
		out.fail("convergence check: %v", cv.err)
	case !cv.ok:
		out.fail("cache did not converge within %s: server %d; full cache %d: %s; metadata cache %d: %s; handler model %d: %s",
			c.converge, cv.server, cv.cache, orEqual(cv.cacheDiff), cv.meta, orEqual(cv.metaDiff), cv.model, orEqual(cv.modelDiff))
	default:
		out.row("convergence", "cache = metadata cache = handler model = server (%d ConfigMaps, by key and resourceVersion) %s after the writers stopped (the server list took %s)",
			cv.server, cv.took.Round(10*time.Millisecond), cv.list.Round(10*time.Millisecond))
	}
	if _, _, pending, _, _ := tr.totals(); cv.ok && pending > 0 {
		out.fail("%d sampled writes were never seen by the handler", pending)
	}
}

func orEqual(s string) string {
	if s == "" {
		return "equal"
	}
	return s
}

// shutdownInformers stops the ResourceSet and the factory (bounded),
// closes the clients' connections and checks that no goroutine is left
// beyond the baseline taken before the informers started.
func shutdownInformers(out *outcome, cancel context.CancelFunc, rsDone <-chan error, factoryDone <-chan struct{}, conns []*connTracker, base int) {
	start := time.Now()
	cancel()
	select {
	case err := <-rsDone:
		if err != nil {
			out.fail("ResourceSet.Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		out.fail("ResourceSet.Run did not return within 30s of cancel")
	}
	select {
	case <-factoryDone:
	case <-time.After(30 * time.Second):
		out.fail("Factory.Run did not return within 30s of cancel")
	}
	took := time.Since(start)
	for _, c := range conns {
		c.closeAll()
	}
	const slack = 5
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > base+slack && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	out.row("shutdown", "informers stopped in %s; goroutines after: %d (before the informers started: %d)", took.Round(time.Millisecond), n, base)
	if n > base+slack {
		out.fail("%d goroutines left after shutdown (baseline %d): a leak", n-base, base)
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		s := b.String()
		if len(s) > 8000 {
			s = s[:8000] + "\n…"
		}
		fmt.Printf("soak: goroutines after shutdown:\n%s\n", s)
	}
}

func finish(out *outcome, c config) int {
	verdict := "PASS"
	if len(out.failures) > 0 {
		verdict = "FAIL"
	}
	fmt.Println()
	fmt.Println("== kdyn soak summary ==")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s, %d objects, %.0f changes/s, %d writers, restart=%t\n", c.duration, c.objects, c.rate, c.writers, c.restart)
	for _, r := range out.rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	fmt.Fprintf(tw, "verdict\t%s\n", verdict)
	tw.Flush()
	for _, f := range out.failures {
		fmt.Println("FAIL:", f)
	}
	if verdict == "FAIL" {
		return 1
	}
	fmt.Println("PASS")
	return 0
}

// keepLog copies the control plane's log out of its directory (which
// Stop removes) on FAIL.
func keepLog(env *testenv.Env) {
	src, err := os.Open(env.LogPath())
	if err != nil {
		return
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "kdyn-soak-controlplane-*.log")
	if err != nil {
		return
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err == nil {
		logf("control plane log kept: %s", filepath.Clean(dst.Name()))
	}
}
