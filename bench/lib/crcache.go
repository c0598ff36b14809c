package lib

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/crcache/examples/secretsync"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

// The crcache scenario's data set and timings.
const (
	// CRCacheNamespaces spread the crcache scenario's objects.
	CRCacheNamespaces = 10
	// crSyncTimeout bounds an operator's wait for its synced line, and
	// then for its reconciled line.
	crSyncTimeout = 10 * time.Minute
	// crUpdateTimeout bounds the wait for the reconciles of the updates.
	crUpdateTimeout = 5 * time.Minute
	// crQuietAfterUpdates: with every update's Secret written, the
	// reconciles are done when their count has not moved for this long
	// (should the queue have merged some of the second, no-op ones).
	crQuietAfterUpdates = 2 * time.Second
)

// CRCacheSizes are the crcache scenario's object counts, ConfigMaps and
// Secrets half each (with -quick 1,000 and 3,000).
var CRCacheSizes = []int{10000, 100000}

// crCaches are the contenders, croperator's --cache values, in column
// order: the first two are the bases of the ratios, the last two kdyn's,
// whose goals are checked.
var crCaches = []string{"default", "strip", "kdyn", "kdyn-compact"}

// crRun is what one run of the operator on one cache gave.
type crRun struct {
	synced, syncCPU time.Duration // process start to the synced line, and CPU then
	// reconciled is process start to the last initial reconcile, and
	// reconCPU the CPU then; initial are the operator's counters then.
	reconciled, reconCPU time.Duration
	initial              map[string]int64
	// idleCPU is the CPU used from the last initial reconcile to the
	// steady figures (GCSteadyWait after the reconciled line).
	idleCPU            time.Duration
	rss, hwm           int64 // VmRSS and VmHWM GCSteadyWait after the last initial reconcile
	heap               int64 // the live heap right after
	peakHeap, peakLive int64 // the largest heap and live heap sampled until then
	// The updates: how many ConfigMaps, the wall time from the first to
	// the operator's last reconcile, its reconciles and Secret updates,
	// and its CPU.
	updates    int
	updateWall time.Duration
	recs, upds int64
	cpu        time.Duration
}

// cpuPerReconcile is the run's CPU per reconcile during the updates, in
// microseconds.
func (r crRun) cpuPerReconcile() float64 {
	if r.recs <= 0 {
		return math.NaN()
	}
	return float64(r.cpu.Microseconds()) / float64(r.recs)
}

// peakRatio is the run's initial-list peak over its steady RSS.
func (r crRun) peakRatio() float64 {
	if r.rss <= 0 {
		return math.NaN()
	}
	return float64(r.hwm) / float64(r.rss)
}

// crRounds returns how many rounds to run at size n.
func (b *Bench) crRounds(n int) int {
	switch {
	case b.Opts.Runs > 0:
		return b.Opts.Runs
	case b.Opts.Quick:
		return 2
	case n <= 10000:
		return 3
	}
	return 2
}

// crUpdates returns how many source ConfigMaps a run updates at size n:
// enough for the CPU to be read well past its 10 ms ticks.
func crUpdates(n int) int {
	k := 2000
	if n >= 50000 {
		k = 5000
	}
	return min(k, n/2)
}

// crNamespace is the namespace of the i-th source ConfigMap and its
// Secret.
func crNamespace(i int) string { return fmt.Sprintf("bench-crcache-%02d", i%CRCacheNamespaces) }

// crSource returns the i-th source ConfigMap: a seeded ConfigMap (~1 KiB
// of data in 4 keys, 5 labels, 2 annotations) with secretsync's source
// label.
func crSource(i int) *unstructured.Unstructured {
	cm := ConfigMap(crNamespace(i), i)
	l := cm.GetLabels()
	l[secretsync.SourceLabel] = "true"
	cm.SetLabels(l)
	return cm
}

// crSecret returns the Secret secretsync keeps for cm (whose UID is uid):
// its name plus secretsync.Suffix, controlled by it, with its data.
func crSecret(cm *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	data := map[string]any{}
	for k, v := range cm.Object["data"].(map[string]any) {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      cm.GetName() + secretsync.Suffix,
			"namespace": cm.GetNamespace(),
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": cm.GetName(), "uid": uid,
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
		"data": data,
	}}
}

// seedCRCache creates the source ConfigMaps [from, to) and their Secrets.
func (b *Bench) seedCRCache(ctx context.Context, dc *dynamic.DynamicClient, from, to int) error {
	return b.seedRange(ctx, "crcache", from, to, func(ctx context.Context, i int) error {
		cm := crSource(i)
		obj, err := createOrGet(ctx, dc.Resource(GVRConfigMaps).Namespace(cm.GetNamespace()), cm)
		if err != nil {
			return fmt.Errorf("configmap %s/%s: %w", cm.GetNamespace(), cm.GetName(), err)
		}
		s := crSecret(cm, string(obj.GetUID()))
		if err := createIgnoreExists(ctx, dc.Resource(GVRSecrets).Namespace(s.GetNamespace()), s); err != nil {
			return fmt.Errorf("secret %s/%s: %w", s.GetNamespace(), s.GetName(), err)
		}
		return nil
	})
}

// crUpdatePatch is the merge patch of the update number seq of source
// ConfigMap i: a new value of ~256 bytes for one of its keys.
func crUpdatePatch(i, seq int) []byte {
	p, _ := json.Marshal(map[string]any{"data": map[string]any{"key-0": fmt.Sprintf("%-256s", fmt.Sprintf("update %d of source %d", seq, i))}})
	return p
}

// crUpdate patches k of the sources source ConfigMaps, spread over them
// all, with update number seq.
func crUpdate(ctx context.Context, dc *dynamic.DynamicClient, sources, k, seq int) error {
	return parallel(ctx, k, fastSeedWorkers, func(ctx context.Context, j int) error {
		i := j * sources / k
		_, err := dc.Resource(GVRConfigMaps).Namespace(crNamespace(i)).Patch(ctx, fmt.Sprintf("cm-%05d", i), types.MergePatchType, crUpdatePatch(i, seq), metav1.PatchOptions{})
		return err
	})
}

// serverCount returns how many objects of a core resource the server holds (one item
// and the remaining count).
func serverCount(ctx context.Context, dc *dynamic.DynamicClient, resource string) (int64, error) {
	l, err := dc.Resource(GVRConfigMaps.GroupVersion().WithResource(resource)).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	n := int64(len(l.Items))
	if r := l.GetRemainingItemCount(); r != nil {
		n += *r
	}
	return n, nil
}

// parseKV reads the key=value fields (integers) that follow a line's first
// word, as croperator prints them.
func parseKV(line string) (map[string]int64, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty line")
	}
	out := map[string]int64{}
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: %q is not key=value", line, kv)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %s: %w", line, k, err)
		}
		out[k] = n
	}
	return out, nil
}

// crStats asks p for its counters.
func crStats(ctx context.Context, p *proc) (map[string]int64, error) {
	l, err := p.request(ctx, "stats", "stats ")
	if err != nil {
		return nil, err
	}
	kv, err := parseKV(l.line)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"reconciles", "updates", "cpu_us", "peak_heap", "peak_live"} {
		if _, ok := kv[k]; !ok {
			return nil, fmt.Errorf("no %s in %q", k, l.line)
		}
	}
	return kv, nil
}

// crRunOpts are what one run needs beside its contender.
type crRunOpts struct {
	kubeconfig string
	sources    int // source ConfigMaps on the server
	updates    int // how many of them the run updates
	// update patches the ConfigMaps.
	update func(ctx context.Context) error
	// profile, when set, is the path prefix of the run's profiles.
	profile string
}

// runCR runs the operator on one cache: start, synced, initial reconciles
// done, GCSteadyWait, RSS, live heap and peaks, then o.updates ConfigMap
// updates and the reconciles they cause.
func runCR(ctx context.Context, c *binContender, o crRunOpts) (crRun, error) {
	var env []string
	if o.profile != "" {
		env = []string{"HEAPPROBE_PROFILE=" + o.profile + "-heap.pprof", "HEAPPROBE_CPUPROFILE=" + o.profile + "-cpu-start.pprof"}
	}
	p, err := startProc(ctx, c.name, c.bin, append(c.args(o.kubeconfig), "--sources", strconv.Itoa(o.sources)), env)
	if err != nil {
		return crRun{}, err
	}
	defer p.stop()
	fail := func(what string, err error) (crRun, error) {
		return crRun{}, fmt.Errorf("%s: %s: %w", c.name, what, err)
	}
	s, err := p.waitSynced(ctx, crSyncTimeout)
	if err != nil {
		return fail("sync", err)
	}
	r := crRun{synced: s.at.Sub(p.start), syncCPU: s.cpu, updates: o.updates}
	if o.profile != "" {
		// What the initial list leaves live as it ends (the reconciles
		// and the handlers' deliveries may still be going on).
		if l, err := p.request(ctx, "heapprofile "+o.profile+"-heap-synced.pprof", "heapprofile "); err != nil || l.line != "heapprofile written" {
			return fail("heap profile", fmt.Errorf("%v %q", err, l.line))
		}
	}
	l, err := p.waitLine(ctx, 0, "reconciled ", crSyncTimeout)
	if err != nil {
		return fail("initial reconciles", err)
	}
	if r.initial, err = parseKV(l.line); err != nil {
		return fail("initial reconciles", err)
	}
	r.reconciled = l.at.Add(-time.Duration(r.initial["ago_us"]) * time.Microsecond).Sub(p.start)
	r.reconCPU = time.Duration(r.initial["cpu_us"]) * time.Microsecond
	select {
	case <-time.After(time.Until(l.at.Add(GCSteadyWait))):
	case <-p.exited:
		return fail("steady", fmt.Errorf("exited: %v\n%s", p.err, p.tail()))
	case <-ctx.Done():
		return r, ctx.Err()
	}
	idle, err := crStats(ctx, p)
	if err != nil {
		return fail("stats", err)
	}
	r.idleCPU = time.Duration(idle["cpu_us"])*time.Microsecond - r.reconCPU
	if r.rss, r.hwm, err = processMemory(p.cmd.Process.Pid); err != nil {
		return fail("memory", err)
	}
	if r.heap, err = p.probe(syscall.SIGUSR1, p.heap); err != nil {
		return fail("live heap", err)
	}
	if o.profile != "" {
		if _, err := p.probe(syscall.SIGUSR2, p.profile); err != nil {
			return fail("heap profile", err)
		}
		if l, err := p.request(ctx, "cpuprofile "+o.profile+"-cpu-updates.pprof", "cpuprofile "); err != nil || l.line != "cpuprofile started" {
			return fail("cpu profile", fmt.Errorf("%v %q", err, l.line))
		}
	}
	st0, err := crStats(ctx, p)
	if err != nil {
		return fail("stats", err)
	}
	r.peakHeap, r.peakLive = st0["peak_heap"], st0["peak_live"]

	t0 := time.Now()
	if err := o.update(ctx); err != nil {
		return fail("update", err)
	}
	last, lastAt := st0, time.Now()
	for {
		st, err := crStats(ctx, p)
		if err != nil {
			return fail("stats", err)
		}
		if st["reconciles"] != last["reconciles"] {
			last, lastAt = st, time.Now()
		}
		upds := last["updates"] - st0["updates"]
		recs := last["reconciles"] - st0["reconciles"]
		if upds >= int64(o.updates) && (recs >= 2*int64(o.updates) || time.Since(lastAt) >= crQuietAfterUpdates) {
			r.updateWall = lastAt.Sub(t0)
			r.recs, r.upds = recs, upds
			r.cpu = time.Duration(last["cpu_us"]-st0["cpu_us"]) * time.Microsecond
			break
		}
		if time.Since(t0) > crUpdateTimeout {
			return fail("updates", fmt.Errorf("%d Secret updates and %d reconciles in %s after %d ConfigMap updates\n%s", upds, recs, crUpdateTimeout, o.updates, p.tail()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o.profile != "" {
		if l, err := p.request(ctx, "cpuprofile stop", "cpuprofile "); err != nil || l.line != "cpuprofile stopped" {
			return fail("cpu profile", fmt.Errorf("%v %q", err, l.line))
		}
	}
	if err := p.stop(); err != nil {
		return fail("stop", err)
	}
	return r, nil
}

// crRawLine formats one run for the raw lines.
func crRawLine(round int, name string, r crRun) string {
	return fmt.Sprintf("round %d %-12s synced %6.0f ms (CPU %6.0f ms); %d initial reconciles (%d creates, %d updates) done at %6.0f ms (CPU %6.0f ms), %.0f ms more CPU up to the steady figures; RSS %6.1f MB, peak %6.1f MB (%.2f×), live heap %6.1f MB, peak heap %6.1f MB, peak live %6.1f MB; %d updates: %d reconciles, %d Secret updates in %.1f s, CPU %.0f ms, %.0f µs/reconcile",
		round, name, ms(r.synced), ms(r.syncCPU), r.initial["n"], r.initial["creates"], r.initial["updates"], ms(r.reconciled), ms(r.reconCPU), ms(r.idleCPU),
		float64(r.rss)/mib, float64(r.hwm)/mib, r.peakRatio(), float64(r.heap)/mib, float64(r.peakHeap)/mib, float64(r.peakLive)/mib,
		r.updates, r.recs, r.upds, r.updateWall.Seconds(), ms(r.cpu), r.cpuPerReconcile())
}

// crGrid builds the table of one size from the runs of each contender
// (in crCaches order): medians of each figure.
func crGrid(runs [][]crRun) *Grid {
	g := &Grid{Cols: crCaches, Bases: []int{0, 1}, Goals: []int{2, 3}}
	row := func(metric, unit string, f func(crRun) float64) *GridRow {
		r := GridRow{Metric: metric, Unit: unit}
		for _, rs := range runs {
			v := make([]float64, len(rs))
			for k, x := range rs {
				v[k] = f(x)
			}
			r.Values = append(r.Values, median(v))
		}
		g.Rows = append(g.Rows, r)
		return &g.Rows[len(g.Rows)-1]
	}
	mb := func(v int64) float64 { return float64(v) / mib }
	row("start → cache synced (process start to the synced line)", "ms", func(r crRun) float64 { return ms(r.synced) })
	row("CPU to sync (utime+stime at the synced line)", "ms", func(r crRun) float64 { return ms(r.syncCPU) })
	row("start → initial reconciles done (the last of them)", "ms", func(r crRun) float64 { return ms(r.reconciled) })
	row("CPU to initial reconciles done", "ms", func(r crRun) float64 { return ms(r.reconCPU) })
	row(fmt.Sprintf("steady RSS (VmRSS at reconciles done + %s)", GCSteadyWait), "MB", func(r crRun) float64 { return mb(r.rss) })
	live := row("live heap after a GC (heap probe, right after the RSS)", "MB", func(r crRun) float64 { return mb(r.heap) })
	live.Target, live.Goals = "≤ 0.5× default, ≤ 0.7× strip", []Goal{{Base: 0, Max: 0.5}, {Base: 1, Max: 0.7}}
	row("initial-list peak RSS (VmHWM, before the updates)", "MB", func(r crRun) float64 { return mb(r.hwm) })
	peak := row("initial-list peak ÷ steady RSS (VmHWM / VmRSS)", "×", crRun.peakRatio)
	peak.NoRatio, peak.Target, peak.Goals = true, "≤ 1.3", []Goal{{Base: -1, Max: 1.3}}
	row("peak heap (largest /memory/classes/heap/objects:bytes, sampled every 10 ms)", "MB", func(r crRun) float64 { return mb(r.peakHeap) })
	row("peak live heap (largest /gc/heap/live:bytes, sampled every 10 ms)", "MB", func(r crRun) float64 { return mb(r.peakLive) })
	cpu := row("CPU per reconcile (the updates' CPU ÷ their reconciles)", "µs", crRun.cpuPerReconcile)
	cpu.Target, cpu.Goals = "≤ 1.2× default and strip", []Goal{{Base: 0, Max: 1.2}, {Base: 1, Max: 1.2}}
	return g
}

// CRCache runs crcache/examples/secretsync (bench/lib/footprint/croperator)
// on controller-runtime's cache (as it comes, and with
// TransformStripManagedFields) and on crcache (default and compact), on a
// control plane of its own seeded, for each of CRCacheSizes, with half as
// many source ConfigMaps and their Secrets, already in sync: time and CPU
// to the cache's sync and to the last initial reconcile, steady RSS and
// live heap, the initial list's peak, and the CPU per reconcile of a burst
// of ConfigMap updates. Each contender runs alone in a fresh process, in
// rounds whose first contender rotates; medians.
func (b *Bench) CRCache(ctx context.Context) ([]*Table, error) {
	sizes := b.sizes(CRCacheSizes, []int{1000, 3000})
	benchD, tmp, err := buildDirs("crcache")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var cs []*binContender
	for _, name := range crCaches {
		cs = append(cs, &binContender{name: name, dir: benchD, pkg: "./lib/footprint/croperator", flags: []string{"--cache", name}})
	}
	// One binary for all four.
	b.logf("crcache: build %s with the heap probe", cs[0].pkg)
	if err := cs[0].build(ctx, tmp, false); err != nil {
		return nil, err
	}
	for _, c := range cs[1:] {
		c.bin = cs[0].bin
	}
	var prof string
	if b.Opts.ProfileDir != "" {
		if err := os.MkdirAll(b.Opts.ProfileDir, 0o755); err != nil {
			return nil, err
		}
		if prof, err = filepath.Abs(b.Opts.ProfileDir); err != nil {
			return nil, err
		}
	}

	dc, err := b.startEnv(ctx, testenv.Options{ReadyTimeout: 5 * time.Minute})
	if err != nil {
		return nil, err
	}
	defer b.Env.Stop()
	var nss []string
	for i := range CRCacheNamespaces {
		nss = append(nss, crNamespace(i))
	}
	if err := createNamespaces(ctx, dc, nss...); err != nil {
		return nil, err
	}
	kubeconfig := b.Env.KubeconfigPath(testenv.Admin)
	var tables []*Table
	from, seq := 0, 0
	for _, n := range sizes {
		sources := n / 2
		t0 := time.Now()
		if err := b.seedCRCache(ctx, dc, from, sources); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		seed := time.Since(t0)
		from = sources
		var onServer []string
		for _, res := range []string{"configmaps", "secrets"} {
			c, err := serverCount(ctx, dc, res)
			if err != nil {
				return nil, err
			}
			onServer = append(onServer, fmt.Sprintf("%d %s", c, res))
		}
		b.logf("crcache %d: seeded %d source ConfigMaps with their Secrets in %s; the server holds %s", n, sources, seed.Round(time.Millisecond), strings.Join(onServer, ", "))

		k, rounds := crUpdates(n), b.crRounds(n)
		o := crRunOpts{kubeconfig: kubeconfig, sources: sources, updates: k}
		run := func(c *binContender) (crRun, error) {
			seq++
			this := seq
			o.update = func(ctx context.Context) error { return crUpdate(ctx, dc, sources, k, this) }
			return runCR(ctx, c, o)
		}
		t := &Table{Title: fmt.Sprintf("crcache, %d objects (%d source ConfigMaps of ~1 KiB + their %d Secrets, in %d namespaces): crcache/examples/secretsync on controller-runtime v0.25.3's cache (default, strip = TransformStripManagedFields) and on crcache (kdyn, kdyn-compact)", n, sources, sources, CRCacheNamespaces)}
		runs := make([][]crRun, len(cs))
		for round := range rounds {
			for j := range cs {
				i := (j + round) % len(cs) // rotate who goes first
				waitQuiet(ctx, b.Env)
				b.logf("crcache %d: round %d/%d, %s", n, round+1, rounds, cs[i].name)
				r, err := run(cs[i])
				if err != nil {
					return nil, err
				}
				runs[i] = append(runs[i], r)
				t.RawLine("%s", crRawLine(round+1, cs[i].name, r))
				if r.initial["creates"] != 0 || r.initial["updates"] != 0 {
					t.Note("round %d, %s: the initial reconciles wrote %d Secrets and updated %d (the seed was not in sync)", round+1, cs[i].name, r.initial["creates"], r.initial["updates"])
				}
			}
		}
		if prof != "" {
			for _, c := range cs {
				waitQuiet(ctx, b.Env)
				b.logf("crcache %d: profiled run of %s", n, c.name)
				po := o
				po.profile = filepath.Join(prof, fmt.Sprintf("crcache-%d-%s", n, c.name))
				seq++
				this := seq
				po.update = func(ctx context.Context) error { return crUpdate(ctx, dc, sources, k, this) }
				if _, err := runCR(ctx, c, po); err != nil {
					return nil, err
				}
				t.RawLine("profiles of %s (a run of its own): %s-cpu-start.pprof (CPU from the start to the heap probe at reconciles done + %s), %s-heap.pprof (heap then, after a GC, sampled every 64 KiB), %s-heap-synced.pprof (the same at the synced line), %s-cpu-updates.pprof (CPU during the updates)", c.name, po.profile, GCSteadyWait, po.profile, po.profile, po.profile)
			}
		}
		t.Grid = crGrid(runs)
		t.Note("cells: median value (its ratio to default / to strip); goals checked for kdyn and kdyn-compact: live heap ≤ 0.5× default and ≤ 0.7× strip, initial-list peak ≤ 1.3× steady RSS, CPU per reconcile ≤ 1.2× default and ≤ 1.2× strip")
		t.Note("one binary, bench/lib/footprint/croperator (go build -trimpath -ldflags \"-s -w\" -tags heapprobe), run with --cache default|strip|kdyn|kdyn-compact --sources %d --kubeconfig (admin): a kubebuilder-style manager (ctrl.GetConfigOrDie: no client-side rate limit), metrics server off, no leader election, no health probes; the operator's one worker (controller-runtime's default) and priority queue", sources)
		t.Note("%d rounds; in each, every contender runs alone in a fresh process (who goes first rotates), after the control plane has quieted. Synced: the operator's informers of ConfigMaps, Secrets and Namespaces (metadata) have synced (GetInformer, then WaitForCacheSync), timed when the harness reads the line, CPU from /proc/PID/stat (10 ms ticks). Initial reconciles done: at least %d reconciles, then none for 1 s; the time and CPU (getrusage) of the last one (the initial reconciles are no-ops: every Secret is already in sync; the For, Owns and namespace handlers queue each ConfigMap up to three times)", rounds, sources)
		t.Note("steady: VmRSS and VmHWM of /proc/PID/status %s after the last initial reconcile, then the heap probe (runtime.GC, HeapAlloc); peak heap and peak live heap: the largest values the operator sampled every 10 ms since its start (runtime/metrics), read then", GCSteadyWait)
		t.Note("CPU per reconcile: the harness patches one data key of %d of the source ConfigMaps (spread over all, %d at a time, a new value each run); each update makes the operator update the Secret, whose event brings a second, no-op reconcile: done when it has updated %d Secrets and reconciled %d times (or, with every Secret updated, reconciled nothing for %s); its CPU (getrusage, from its stats just before the first patch to those at its last reconcile, polled every 100 ms) ÷ its reconciles", k, fastSeedWorkers, k, 2*k, crQuietAfterUpdates)
		t.Note("seed: namespaces %s … %s, %d source ConfigMaps (crcache's source label, 5 more labels, 2 annotations, 4 data keys of 256 bytes) and for each its Secret (%s, controlled by it, its data) created by kdyn's client with %d workers, in %s; the server holds %s", crNamespace(0), crNamespace(CRCacheNamespaces-1), sources, "<name>"+secretsync.Suffix, fastSeedWorkers, seed.Round(time.Millisecond), strings.Join(onServer, ", "))
		tables = append(tables, t)
		t.Print(os.Stderr) // as the sizes finish: the larger one takes a while
	}
	return tables, nil
}
