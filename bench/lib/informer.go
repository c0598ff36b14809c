package lib

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/internal/wire"
	krest "github.com/kdyn/kdyn/rest"
)

// rawListBytes returns the size of one unpaged JSON list (full objects, or
// PartialObjectMetadataList when metadataOnly).
func rawListBytes(ctx context.Context, rc *krest.Client, g schema.GroupVersionResource, ns string, metadataOnly bool) (int, error) {
	r := rc.Get().Group(g.Group).Version(g.Version).Namespace(ns).Resource(g.Resource)
	if metadataOnly {
		r = r.SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	} else {
		r = r.SetHeader("Accept", "application/json")
	}
	b, err := r.DoRaw(ctx)
	return len(b), err
}

// serverFloorMs is the server's own time to send what an informer's sync
// reads, received raw and not decoded: the unpaged list at
// resourceVersion 0 (as both libraries' list+watch ask for it), or the
// streaming list up to the initial-events-end bookmark. Full objects come
// as JSON; metadata-only as protobuf PartialObjectMetadata, as both
// metadata-only informers ask for it. Uncompressed, as kdyn's informers
// ask (client-go accepts gzip, which v1.37 servers use for streaming lists).
func serverFloorMs(ctx context.Context, rc *krest.Client, g schema.GroupVersionResource, ns string, stream, metadataOnly bool) (float64, error) {
	opts := metav1.ListOptions{ResourceVersion: "0", Limit: 500}
	if stream {
		opts = metav1.ListOptions{Watch: true, SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	}
	accept := "application/json"
	switch {
	case metadataOnly && stream:
		accept = wire.AcceptMetadataProtobuf
	case metadataOnly:
		accept = wire.AcceptMetadataListProtobuf
	}
	req := rc.Get().Group(g.Group).Version(g.Version).Namespace(ns).Resource(g.Resource).VersionedParams(&opts).SetHeader("Accept", accept).SetHeader("Accept-Encoding", "identity")
	if !metadataOnly {
		ctx = wire.WithBulk(ctx) // over HTTP/1.1, as kdyn's informers ask for whole objects
	}
	t0 := time.Now()
	body, err := req.Stream(ctx)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	if !stream {
		_, err = io.Copy(io.Discard, body)
		return ms(time.Since(t0)), err
	}
	br := bufio.NewReaderSize(body, 1<<20)
	if metadataOnly {
		// Protobuf watch frames: a 4-byte big-endian length, then the
		// event; the bookmark's annotation key is in it as plain bytes.
		var frame []byte
		for {
			var n [4]byte
			if _, err := io.ReadFull(br, n[:]); err != nil {
				return 0, fmt.Errorf("streaming list ended before its bookmark: %w", err)
			}
			size := int(n[0])<<24 | int(n[1])<<16 | int(n[2])<<8 | int(n[3])
			frame = slices.Grow(frame[:0], size)[:size]
			if _, err := io.ReadFull(br, frame); err != nil {
				return 0, fmt.Errorf("streaming list ended inside an event: %w", err)
			}
			if bytes.Contains(frame, []byte("BOOKMARK")) && bytes.Contains(frame, []byte("k8s.io/initial-events-end")) {
				return ms(time.Since(t0)), nil
			}
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("streaming list ended before its bookmark: %w", err)
		}
		if bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) && bytes.Contains(line, []byte(`"k8s.io/initial-events-end":"true"`)) {
			return ms(time.Since(t0)), nil
		}
	}
}

type infKey struct{ who, resource, mode string }

// settleBetweenChildren is the pause before each sync measurement.
const settleBetweenChildren = 1500 * time.Millisecond

func nsFor(resource string) string {
	if resource == "widgets" {
		return NSWidgets
	}
	return NSConfigMaps
}

func (b *Bench) informerArgs(resource string, streaming bool) (ChildArgs, []string) {
	args := ChildArgs{Conn: b.Conn, Namespace: nsFor(resource), Resource: resource, Count: b.Sizes.Objects, Streaming: streaming, ProfileDir: b.Opts.ProfileDir}
	env := []string{"KUBE_FEATURE_WatchListClient=" + strconv.FormatBool(streaming)}
	return args, env
}

// Informer runs every informer contender in its own process.
func (b *Bench) Informer(ctx context.Context) (*Table, error) {
	t := &Table{Title: fmt.Sprintf("informer (%d ConfigMaps, %d widgets; each contender in its own process)", b.Sizes.Objects, b.Sizes.Objects)}
	rc, err := krest.NewForConfig(b.Conn.Kdyn(Unlimited, nil))
	if err != nil {
		return nil, err
	}
	raw := map[string]float64{}
	rawMeta := map[string]float64{}
	for _, res := range []string{"configmaps", "widgets"} {
		n, err := rawListBytes(ctx, rc, gvrFor(res), nsFor(res), false)
		if err != nil {
			return nil, err
		}
		raw[res] = float64(n) / float64(b.Sizes.Objects)
		n, err = rawListBytes(ctx, rc, gvrFor(res), nsFor(res), true)
		if err != nil {
			return nil, err
		}
		rawMeta[res] = float64(n) / float64(b.Sizes.Objects)
	}

	runs := 3
	if b.Opts.Quick {
		runs = 1
	}
	if b.Opts.Runs > 0 {
		runs = b.Opts.Runs
	}
	results := map[infKey][]informerResult{}
	modes := []string{"stream", "listwatch"}
	floor := map[[2]string]float64{}     // full objects, JSON
	metaFloor := map[[2]string]float64{} // PartialObjectMetadata, protobuf
	for _, res := range []string{"configmaps", "widgets"} {
		for _, mode := range modes {
			if !b.Opts.part("sync") {
				break
			}
			for _, metadataOnly := range []bool{false, true} {
				var xs []float64
				for range runs {
					v, err := serverFloorMs(ctx, rc, gvrFor(res), nsFor(res), mode == "stream", metadataOnly)
					if err != nil {
						return nil, fmt.Errorf("server floor %s %s (metadata-only %v): %w", res, mode, metadataOnly, err)
					}
					xs = append(xs, v)
				}
				if metadataOnly {
					metaFloor[[2]string{res, mode}] = median(xs)
					b.logf("server floor %s %s, metadata-only (protobuf): %s ms", res, mode, fmtSample(xs, 0))
				} else {
					floor[[2]string{res, mode}] = median(xs)
					b.logf("server floor %s %s: %s ms", res, mode, fmtSample(xs, 0))
				}
			}
		}
	}
	for _, res := range []string{"configmaps", "widgets"} {
		for _, mode := range modes {
			if !b.Opts.part("sync") {
				break
			}
			for run := range runs {
				// Alternate the order, so that no contender always follows
				// the same one on the server.
				order := slices.Clone(b.Opts.contenders())
				if run%2 == 1 {
					slices.Reverse(order)
				}
				for _, who := range order {
					// Let the server settle (its GC after the previous
					// contender's list) so no contender pays for another.
					time.Sleep(settleBetweenChildren)
					args, env := b.informerArgs(res, mode == "stream")
					var r informerResult
					if err := runChild(ctx, "informer-"+who, args, &r, env...); err != nil {
						return nil, err
					}
					if r.Streaming != (mode == "stream") {
						return nil, fmt.Errorf("%s: child streaming=%v in mode %s", who, r.Streaming, mode)
					}
					k := infKey{who, res, mode}
					results[k] = append(results[k], r)
					b.logf("informer %s %s %s run %d: sync %.0f ms, heap %.1f MB, requests %+v", who, res, mode, run+1, r.SyncMs, float64(r.HeapBytes)/mib, r.Requests)
				}
			}
		}
	}

	// Relist: one child per contender (ConfigMaps, streaming), all through
	// the same restart. Watch throughput: one child per contender, in turn.
	phase := map[string]informerResult{}
	rel := map[string]informerResult{}
	if b.Opts.part("relist") {
		if rel, err = b.relistAll(ctx); err != nil {
			return nil, fmt.Errorf("relist: %w", err)
		}
	}
	// Watch: rounds of one child per contender, the order reversed every
	// other round, so that the host's load drifting over the minutes of
	// this phase does not fall on one contender; medians are reported.
	watches := map[string][]*watchResult{}
	if b.Opts.part("watch") {
		for round := range b.watchRounds() {
			order := slices.Clone(b.Opts.contenders())
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, who := range order {
				r, err := b.watchInformer(ctx, who)
				if err != nil {
					return nil, fmt.Errorf("%s watch: %w", who, err)
				}
				watches[who] = append(watches[who], r.Watch)
			}
		}
	}
	for _, who := range b.Opts.contenders() {
		phase[who] = informerResult{Relist: rel[who].Relist}
	}

	med := func(k infKey, f func(informerResult) float64) float64 { return median(vals(results[k], f)) }
	heapPer := func(r informerResult) float64 { return float64(r.HeapBytes) / float64(r.Objects) }
	syncMs := func(r informerResult) float64 { return r.SyncMs }
	allocPer := func(r informerResult) float64 { return float64(r.SyncMallocs) / float64(r.Objects) }
	allocMB := func(r informerResult) float64 { return r.SyncAllocMB }
	syncCPU := func(r informerResult) float64 { return r.SyncCPUMs }
	n := float64(b.Sizes.Objects)
	for _, res := range []string{"configmaps", "widgets"} {
		if !b.Opts.part("sync") {
			break
		}
		for _, mode := range modes {
			k := func(who string) infKey { return infKey{who, res, mode} }
			label := res + ", " + map[string]string{"stream": "streaming list", "listwatch": "list+watch"}[mode]
			t.Add(Row{Metric: label + ": heap/obj kdyn default vs client-go + strip transform", Unit: "B", Kdyn: med(k("kdyn-default"), heapPer), ClientGo: med(k("clientgo-strip"), heapPer), Target: "≤ 0.9×", Check: ratioAtMost(0.9)})
			t.Add(Row{Metric: label + ": heap/obj kdyn default vs client-go plain", Unit: "B", Kdyn: med(k("kdyn-default"), heapPer), ClientGo: med(k("clientgo-plain"), heapPer), Target: "≤ 0.5×", Check: ratioAtMost(0.5)})
			t.Add(Row{Metric: label + ": heap/obj kdyn compact vs client-go plain", Unit: "B", Kdyn: med(k("kdyn-compact"), heapPer), ClientGo: med(k("clientgo-plain"), heapPer), Target: "≤ 0.3×", Check: ratioAtMost(0.3)})
			t.Add(Row{Metric: label + ": heap/obj kdyn compact vs raw JSON of the list (client-go column)", Unit: "B", Kdyn: med(k("kdyn-compact"), heapPer), ClientGo: raw[res], Target: "≤ 1.0×", Check: ratioAtMost(1.0)})
			t.Add(Row{Metric: label + ": heap/obj metadata-only (kdyn ForResourceMetadata vs client-go metadatainformer)", Unit: "B", Kdyn: med(k("kdyn-metadata"), heapPer), ClientGo: med(k("clientgo-metadata"), heapPer), Target: "≤ 1.0×", Check: ratioAtMost(1.0)})
			t.Add(Row{Metric: label + ": sync time kdyn default vs client-go plain", Unit: "ms", Kdyn: med(k("kdyn-default"), syncMs), ClientGo: med(k("clientgo-plain"), syncMs), Target: "≤ 0.7×", Check: ratioAtMost(0.7)})
			t.Add(Row{Metric: label + ": sync time kdyn compact vs client-go plain", Unit: "ms", Kdyn: med(k("kdyn-compact"), syncMs), ClientGo: med(k("clientgo-plain"), syncMs), Target: "≤ 0.5×", Check: ratioAtMost(0.5)})
			t.Add(Row{Metric: label + ": server's own time to send it (read raw over HTTP/1.1, not decoded; kdyn column) vs client-go plain sync", Unit: "ms", Kdyn: floor[[2]string{res, mode}], ClientGo: med(k("clientgo-plain"), syncMs), Target: "— (the floor)"})
			t.Add(Row{Metric: label + ": sync time metadata-only", Unit: "ms", Kdyn: med(k("kdyn-metadata"), syncMs), ClientGo: med(k("clientgo-metadata"), syncMs), Target: "≤ 1.0×", Check: ratioAtMost(1.0)})
			t.Add(Row{Metric: label + ": server's own time to send it metadata-only (protobuf, read raw; kdyn column) vs client-go metadata-only sync", Unit: "ms", Kdyn: metaFloor[[2]string{res, mode}], ClientGo: med(k("clientgo-metadata"), syncMs), Target: "— (the floor)"})
			t.Add(Row{Metric: label + ": CPU during sync (getrusage), kdyn default vs client-go plain", Unit: "ms", Kdyn: med(k("kdyn-default"), syncCPU), ClientGo: med(k("clientgo-plain"), syncCPU), Target: "—"})
			t.Add(Row{Metric: label + ": CPU during sync, metadata-only", Unit: "ms", Kdyn: med(k("kdyn-metadata"), syncCPU), ClientGo: med(k("clientgo-metadata"), syncCPU), Target: "—"})
			t.Add(Row{Metric: label + ": allocations during sync, kdyn default vs client-go plain", Unit: "allocs/obj", Kdyn: med(k("kdyn-default"), allocPer), ClientGo: med(k("clientgo-plain"), allocPer), Target: "—"})
			t.Add(Row{Metric: label + ": bytes allocated during sync, kdyn default vs client-go plain", Unit: "MB", Kdyn: med(k("kdyn-default"), allocMB), ClientGo: med(k("clientgo-plain"), allocMB), Target: "—"})
			for _, who := range b.Opts.contenders() {
				rs := results[k(who)]
				if len(rs) == 0 {
					continue
				}
				t.RawLine("%-7s %-10s %-17s heap MB=%s B/obj=%s sync ms=%s sync CPU ms=%s alloc MB=%s allocs/obj=%s requests=%+v",
					res, mode, who, fmtSample(vals(rs, func(r informerResult) float64 { return float64(r.HeapBytes) / mib }), 1),
					fmtSample(vals(rs, heapPer), 0), fmtSample(vals(rs, syncMs), 0), fmtSample(vals(rs, func(r informerResult) float64 { return r.SyncCPUMs }), 0),
					fmtSample(vals(rs, allocMB), 0), fmtSample(vals(rs, allocPer), 0), rs[0].Requests)
			}
		}
		t.RawLine("raw JSON of one unpaged GET of %s: %.0f B/obj (%.1f MB); as PartialObjectMetadataList: %.0f B/obj", res, raw[res], raw[res]*n/mib, rawMeta[res])
	}

	// Relist rows.
	relPeak := func(who string) float64 {
		r := phase[who].Relist
		if r == nil || !r.Observed {
			return math.NaN()
		}
		return float64(r.PeakHeapAlloc) / float64(r.SteadyHeap)
	}
	relLive := func(who string) float64 {
		r := phase[who].Relist
		if r == nil || !r.Observed {
			return math.NaN()
		}
		return float64(r.PeakLive) / float64(r.SteadyHeap)
	}
	for _, p := range [][2]string{{"kdyn-default", "clientgo-plain"}, {"kdyn-compact", "clientgo-strip"}, {"kdyn-metadata", "clientgo-metadata"}} {
		t.Add(Row{Metric: fmt.Sprintf("relist after a restart: peak HeapAlloc / steady heap, %s vs %s", p[0], p[1]), Unit: "×", Kdyn: relPeak(p[0]), ClientGo: relPeak(p[1]), Target: "kdyn ≤ 1.3", Check: kdynAtMost(1.3)})
		t.Add(Row{Metric: fmt.Sprintf("relist after a restart: peak live heap (post-GC) / steady heap, %s vs %s", p[0], p[1]), Unit: "×", Kdyn: relLive(p[0]), ClientGo: relLive(p[1]), Target: "kdyn ≤ 1.3", Check: kdynAtMost(1.3)})
	}
	// Watch rows.
	w := func(who string, f func(*watchResult) float64) float64 {
		var xs []float64
		for _, r := range watches[who] {
			if r != nil && r.Events > 0 {
				if v := f(r); !math.IsNaN(v) {
					xs = append(xs, v)
				}
			}
		}
		if len(xs) == 0 {
			return math.NaN()
		}
		return median(xs)
	}
	per1000 := func(r *watchResult) float64 { return r.CPUPer1000 }
	paced := func(f func(*watchResult) float64) func(*watchResult) float64 {
		return func(r *watchResult) float64 {
			if r.Paced == nil || r.Paced.Events == 0 {
				return math.NaN()
			}
			return f(r.Paced)
		}
	}
	for _, p := range [][2]string{{"kdyn-default", "clientgo-plain"}, {"kdyn-default", "clientgo-strip"}, {"kdyn-compact", "clientgo-plain"}, {"kdyn-metadata", "clientgo-metadata"}} {
		t.Add(Row{Metric: fmt.Sprintf("watch: informer CPU per 1,000 events, %s vs %s", p[0], p[1]), Unit: "ms", Kdyn: w(p[0], per1000), ClientGo: w(p[1], per1000), Target: "≤ 0.6×", Check: ratioAtMost(0.6)})
		t.Add(Row{Metric: fmt.Sprintf("watch at a fixed %d patches/s: informer CPU per 1,000 events, %s vs %s", PacedPatchRate, p[0], p[1]), Unit: "ms", Kdyn: w(p[0], paced(per1000)), ClientGo: w(p[1], paced(per1000)), Target: "≤ 0.6×", Check: ratioAtMost(0.6)})
	}
	for _, p := range [][2]string{{"kdyn-default", "clientgo-plain"}, {"kdyn-metadata", "clientgo-metadata"}} {
		t.Add(Row{Metric: fmt.Sprintf("watch: events delivered per second, %s vs %s", p[0], p[1]), Unit: "ev/s", Kdyn: w(p[0], func(r *watchResult) float64 { return r.PerSecond }), ClientGo: w(p[1], func(r *watchResult) float64 { return r.PerSecond }), Target: "— (server-bound)"})
		t.Add(Row{Metric: fmt.Sprintf("watch: lag p50 (patch sent → handler), %s vs %s", p[0], p[1]), Unit: "ms", Kdyn: w(p[0], func(r *watchResult) float64 { return r.LagP50Ms }), ClientGo: w(p[1], func(r *watchResult) float64 { return r.LagP50Ms }), Target: "—"})
		t.Add(Row{Metric: fmt.Sprintf("watch: lag p99, %s vs %s", p[0], p[1]), Unit: "ms", Kdyn: w(p[0], func(r *watchResult) float64 { return r.LagP99Ms }), ClientGo: w(p[1], func(r *watchResult) float64 { return r.LagP99Ms }), Target: "—"})
	}
	for _, who := range b.Opts.contenders() {
		r := phase[who]
		if rr := r.Relist; rr != nil {
			t.RawLine("relist %-17s observed=%v after %.1fs, relist requests=%d (failed while down: %d), steady %.1f MB, peak HeapAlloc %.1f MB, peak live %.1f MB, after %.1f MB, %d samples",
				who, rr.Observed, rr.SecondsToSeen, rr.RelistRequests, rr.FailedRequests, float64(rr.SteadyHeap)/mib, float64(rr.PeakHeapAlloc)/mib, float64(rr.PeakLive)/mib, float64(rr.AfterHeap)/mib, rr.Samples)
		}
		for _, wr := range watches[who] {
			t.RawLine("watch  %-17s patches=%d events=%d in %.1fs = %.0f ev/s, lag p50 %.1f ms p99 %.1f ms, CPU %.0f ms (idle %.0f ms) = %.1f ms/1000 events (sys %.0f ms, %.1f context switches/event), heap after %.1f MB",
				who, wr.Patches, wr.Events, wr.Seconds, wr.PerSecond, wr.LagP50Ms, wr.LagP99Ms, wr.CPUMs, wr.IdleCPUMs, wr.CPUPer1000, wr.SysMs, wr.Switches, wr.HeapAfterMB)
			if pr := wr.Paced; pr != nil {
				t.RawLine("paced  %-17s patches=%d events=%d in %.1fs = %.0f ev/s, lag p50 %.1f ms p99 %.1f ms, CPU %.0f ms (idle %.0f ms) = %.1f ms/1000 events (sys %.0f ms, %.1f context switches/event)",
					who, pr.Patches, pr.Events, pr.Seconds, pr.PerSecond, pr.LagP50Ms, pr.LagP99Ms, pr.CPUMs, pr.IdleCPUMs, pr.CPUPer1000, pr.SysMs, pr.Switches)
			}
		}
	}
	t.Note("contenders: kdyn informer.NewFactory default (managedFields stripped), compact (InformerOptions.Compact), metadata-only (ForResourceMetadata); client-go dynamicinformer.NewFilteredDynamicSharedInformerFactory plain, the same with SetTransform stripping managedFields, and metadatainformer (protobuf); each with one counting event handler; %s", Unlimited)
	t.Note("each measurement is a fresh child process; heap = HeapAlloc after 2× runtime.GC() once synced (and the handler has seen every add) minus the same taken before the informer was created; sync = informer created → HasSynced (polled every 1 ms, both); allocations = MemStats deltas over the sync; %d run(s) per cell, median, the contenders in turn (the order reversed on every other run, %s pause before each)", runs, settleBetweenChildren)
	t.Note("modes: streaming list = kdyn default (sendInitialEvents) / client-go with KUBE_FEATURE_WatchListClient=true (its default in v0.37.2: beta, on since 1.35); list+watch = kdyn FactoryOptions{DisableStreaming: true} / client-go KUBE_FEATURE_WatchListClient=false; the requests each child made are in the raw lines (lists, streams = watches with sendInitialEvents, watches)")
	t.Note("relist: one extra child per contender (ConfigMaps, streaming), all six running through the same restart: once all are steady, the parent writes one object elsewhere and restarts the control plane (env.Restart; the fresh watch cache answers 410), each child samples runtime.ReadMemStats HeapAlloc and /gc/heap/live:bytes every 10 ms from before the restart until 5 s after its relist request. Peak HeapAlloc includes garbage not yet collected, so with GOGC=100 it can reach ~2× the live heap for any library that allocates more than the live heap while relisting; the live-heap row is what \"a relist does not double memory\" means")
	t.Note("watch: %d round(s) of one more child per contender, one at a time, the order reversed every other round, median reported (ConfigMaps, streaming): once synced, %d workers in the parent merge-patch an annotation (the send time, Unix ns) of random ConfigMaps for %s with a kdyn rest client (no client-side limit); the handler counts updates and the lag from that time; CPU = getrusage(self) user+sys over the phase minus the idle rate measured for 3 s before it; then the same for %s at a fixed %d patches/s in total, so that every contender's CPU per event is taken at the same event rate (at the server-bound rate the rates differ, and CPU per event falls as the rate rises)", b.watchRounds(), patchWorkers, b.watchDuration(), b.watchDuration(), PacedPatchRate)
	return t, nil
}

const patchWorkers = 16

// watchDuration is the length of each watch window (server-bound, then
// paced).
func (b *Bench) watchDuration() time.Duration {
	if b.Opts.Quick {
		return 5 * time.Second
	}
	return 10 * time.Second
}

// watchRounds is how many times each contender's watch phase runs: the
// timing runs, at most 3 (each round is about 30 s per contender).
func (b *Bench) watchRounds() int {
	return min(b.runs(), 3)
}

// relistAll starts one relist child per contender, restarts the control
// plane once they are all steady, and collects their results.
func (b *Bench) relistAll(ctx context.Context) (map[string]informerResult, error) {
	children := map[string]*child{}
	defer func() {
		for _, c := range children {
			c.cmd.Process.Kill()
		}
	}()
	for _, who := range b.Opts.contenders() {
		args, env := b.informerArgs("configmaps", true)
		args.Relist = true
		c, err := startChild(ctx, "informer-"+who, args, env...)
		if err != nil {
			return nil, err
		}
		children[who] = c
		if err := c.ready(ctx, nil); err != nil { // steady; sampling
			return nil, err
		}
	}
	// Move the etcd revision past the informers', then restart.
	dc, err := dynamic.NewForConfig(b.Conn.Kdyn(Unlimited, nil))
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"generateName": "bump-", "namespace": NSScratch}}}
	if _, err := dc.Resource(GVRConfigMaps).Namespace(NSScratch).Create(ctx, obj, createOpts); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := b.Env.Restart(ctx); err != nil {
		return nil, err
	}
	b.logf("informer relist: control plane restarted in %s", time.Since(t0).Round(time.Millisecond))
	for _, c := range children {
		if err := c.tell("RESTARTED"); err != nil {
			return nil, err
		}
	}
	out := map[string]informerResult{}
	for who, c := range children {
		var r informerResult
		if err := c.finish(ctx, &r); err != nil {
			return nil, err
		}
		out[who] = r
		delete(children, who)
	}
	return out, nil
}

// watchInformer runs the watch-throughput phase of one contender.
func (b *Bench) watchInformer(ctx context.Context, who string) (informerResult, error) {
	args, env := b.informerArgs("configmaps", true)
	args.Watch = true
	c, err := startChild(ctx, "informer-"+who, args, env...)
	if err != nil {
		return informerResult{}, err
	}
	// The watch phase as fast as the server allows, then the paced one.
	for _, p := range []struct {
		d    time.Duration
		rate int
	}{{b.watchDuration(), 0}, {b.watchDuration(), PacedPatchRate}} {
		if err := c.ready(ctx, nil); err != nil {
			c.cmd.Process.Kill()
			return informerResult{}, err
		}
		patches, err := b.patchStorm(ctx, p.d, p.rate)
		if err != nil {
			c.cmd.Process.Kill()
			return informerResult{}, err
		}
		if err := c.tell("PATCHES " + strconv.FormatInt(patches, 10)); err != nil {
			return informerResult{}, err
		}
	}
	var r informerResult
	if err := c.finish(ctx, &r); err != nil {
		return informerResult{}, err
	}
	return r, nil
}

// patchStorm merge-patches the ts annotation of random ConfigMaps with
// patchWorkers workers for d, and returns the number of successful patches.
// PacedPatchRate is the patch rate of the watch measurement at a fixed
// rate: below what the server sustains here, so every contender sees the
// same events per second.
const PacedPatchRate = 400

// patchStorm merge-patches random ConfigMaps from patchWorkers goroutines
// for d, as fast as the server allows, or at most rate patches per second
// in total when rate > 0.
func (b *Bench) patchStorm(ctx context.Context, d time.Duration, rate int) (int64, error) {
	rc, err := krest.NewForConfig(b.Conn.Kdyn(Unlimited, nil))
	if err != nil {
		return 0, err
	}
	var tick <-chan time.Time
	if rate > 0 {
		t := time.NewTicker(time.Second / time.Duration(rate))
		defer t.Stop()
		tick = t.C
	}
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range patchWorkers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if tick != nil {
					select {
					case <-tick:
					case <-ctx.Done():
						return
					}
				}
				name := fmt.Sprintf("cm-%05d", r.IntN(b.Sizes.Objects))
				body := `{"metadata":{"annotations":{"` + TSAnnotation + `":"` + strconv.FormatInt(time.Now().UnixNano(), 10) + `"}}}`
				_, err := rc.Patch(krest.ContentTypeMergePatch).Version("v1").Namespace(NSConfigMaps).Resource("configmaps").Name(name).Body([]byte(body)).DoRaw(ctx)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		b.logf("patch storm: %d patches failed (first: %v)", f, firstErr.Load())
	}
	return ok.Load(), nil
}
