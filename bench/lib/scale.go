package lib

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	krest "github.com/kdyn/kdyn/rest"
)

// The scale scenario's objects: the same number of ConfigMaps, Secrets and
// two kinds of custom resource, spread over ScaleNamespaces namespaces.
const (
	ScaleGroup      = "scale.bench.kdyn.io"
	ScaleNamespaces = 20
	// ScaleShards is how many shards the largest size is also cached in.
	ScaleShards = 4
)

// ScaleSizes are the object counts the scale scenario grows through (all
// four resources together).
var ScaleSizes = []int{10000, 50000, 250000}

// The scale scenario's resources.
var (
	GVRSecrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	GVRGizmos     = schema.GroupVersionResource{Group: ScaleGroup, Version: "v1", Resource: "gizmos"}
	GVRDoohickeys = schema.GroupVersionResource{Group: ScaleGroup, Version: "v1", Resource: "doohickeys"}
	scaleGVRs     = []schema.GroupVersionResource{GVRConfigMaps, GVRSecrets, GVRGizmos, GVRDoohickeys}
)

// ScaleObject returns the i-th object of the scale scenario: resource i%4,
// the (i/4)-th of its resource, in namespace scale-NN; 5 labels, 2
// annotations and ~200 B of data or spec.
func ScaleObject(i int) (schema.GroupVersionResource, *unstructured.Unstructured) {
	gvr := scaleGVRs[i%len(scaleGVRs)]
	j := i / len(scaleGVRs)
	r := rand.New(rand.NewPCG(uint64(i), 13))
	md := map[string]any{
		"name":        fmt.Sprintf("o-%06d", j),
		"namespace":   fmt.Sprintf("scale-%02d", j%ScaleNamespaces),
		"labels":      labels(i),
		"annotations": annotations(i),
	}
	obj := map[string]any{"metadata": md}
	switch gvr {
	case GVRConfigMaps:
		obj["apiVersion"], obj["kind"] = "v1", "ConfigMap"
		obj["data"] = map[string]any{"value": filler(r, 200)}
	case GVRSecrets:
		obj["apiVersion"], obj["kind"] = "v1", "Secret"
		obj["type"] = "Opaque"
		obj["data"] = map[string]any{"value": base64.StdEncoding.EncodeToString([]byte(filler(r, 150)))}
	case GVRGizmos:
		obj["apiVersion"], obj["kind"] = ScaleGroup+"/v1", "Gizmo"
		obj["spec"] = map[string]any{"size": int64(i % 97), "payload": filler(r, 200)}
	case GVRDoohickeys:
		obj["apiVersion"], obj["kind"] = ScaleGroup+"/v1", "Doohickey"
		obj["spec"] = map[string]any{"color": []string{"red", "green", "blue"}[i%3], "payload": filler(r, 200)}
	}
	return gvr, &unstructured.Unstructured{Object: obj}
}

// quiet readies the control plane for a measurement: a full garbage
// collection (GET /debug/pprof/heap?gc=1), so that no sync pays for one
// the previous syncs' allocations made due — at 50,000 objects the second
// of three syncs in a row took 1.5× the others, whichever contender it
// was — then a wait until it has gone quiet (waitQuiet).
func (b *Bench) quiet(ctx context.Context, rc *krest.Client) {
	if _, err := rc.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil {
		b.logf("scale: could not make the control plane collect its garbage: %v", err)
	}
	if d := waitQuiet(ctx, b.Env); d > 3*time.Second {
		b.logf("scale: waited %s for the control plane to go quiet", d.Round(100*time.Millisecond))
	}
}

// scaleStep is what one size of the scale scenario measured.
type scaleStep struct {
	n         int
	objects   int           // of the four resources on the server: n and the apiserver's own ConfigMaps
	seed      time.Duration // seeding from the previous size to this one
	memSeeded procMemory    // the control plane after seeding
	rawMeta   float64       // PartialObjectMetadataList JSON bytes per object
	floorMs   float64       // the server's time to send the four metadata streaming lists: the best of floors
	floors    []float64
	// syncs are each contender's sync times (kdyn, compact, client-go):
	// the first round's, then the second's, run in the reverse order; its
	// result's SyncMs and SyncCPUMs are those of the faster run.
	syncs      [3][]float64
	restart    time.Duration
	kdyn, cg   scaleResult
	compact    scaleResult // kdyn with InformerOptions.Compact
	shards     []scaleResult
	probes     []string // what a sharded list of each resource returned
	shardOrder []int
}

// Scale runs the scale scenario on a control plane of its own: for each of
// ScaleSizes, seed up to that size, measure the raw metadata and the
// server's send time, run a kdyn ResourceSet (default and compact) and
// client-go's metadatainformer one after the other (each in its own
// process), restart the control plane so all three relist, then time
// their syncs again in the reverse order; at the largest size also run
// kdyn in ScaleShards shards.
func (b *Bench) Scale(ctx context.Context) ([]*Table, error) {
	sizes := b.sizes(ScaleSizes, []int{1000, 5000})
	dc, err := b.startGatedEnv(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Env.Stop()
	rc, err := krest.NewForConfig(b.Conn.Kdyn(Unlimited, nil))
	if err != nil {
		return nil, err
	}
	var nss []string
	for i := range ScaleNamespaces {
		nss = append(nss, fmt.Sprintf("scale-%02d", i))
	}
	if err := createNamespaces(ctx, dc, nss...); err != nil {
		return nil, err
	}
	crds := dc.Resource(GVRCRDs)
	for _, c := range []*unstructured.Unstructured{crd(ScaleGroup, "gizmos", "gizmo", "Gizmo", "GizmoList"), crd(ScaleGroup, "doohickeys", "doohickey", "Doohickey", "DoohickeyList")} {
		if err := createIgnoreExists(ctx, crds, c); err != nil {
			return nil, err
		}
	}
	if err := waitScaleCRDs(ctx, dc); err != nil {
		return nil, err
	}
	var gvrArgs []string
	for _, g := range scaleGVRs {
		gvrArgs = append(gvrArgs, formatGVR(g))
	}
	mem0, _ := controlPlaneMemory(b.Env)
	var steps []*scaleStep
	from := 0
	for _, n := range sizes {
		st := &scaleStep{n: n}
		steps = append(steps, st)
		// Seed up to n.
		t0 := time.Now()
		if err := b.seedRange(ctx, "scale", from, n, func(ctx context.Context, i int) error {
			gvr, obj := ScaleObject(i)
			if err := createIgnoreExists(ctx, dc.Resource(gvr).Namespace(obj.GetNamespace()), obj); err != nil {
				return fmt.Errorf("%s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
		st.seed = time.Since(t0)
		st.memSeeded, _ = controlPlaneMemory(b.Env)
		b.logf("scale: seeded %d → %d objects in %s (%.0f objects/s); control plane %s", from, n, st.seed.Round(time.Millisecond), float64(n-from)/st.seed.Seconds(), st.memSeeded)
		from = n

		// The references: raw metadata bytes and the server's send time.
		total := 0
		for _, g := range scaleGVRs {
			size, items, err := metadataListSize(ctx, rc, g)
			if err != nil {
				return nil, fmt.Errorf("raw metadata list of %s: %w", g.Resource, err)
			}
			total += size
			st.objects += items
		}
		st.rawMeta = float64(total) / float64(st.objects)
		for range 3 {
			b.quiet(ctx, rc)
			v, err := scaleFloorMs(ctx, rc)
			if err != nil {
				return nil, err
			}
			st.floors = append(st.floors, v)
		}
		st.floorMs = slices.Min(st.floors)
		b.logf("scale %d: %d objects on the server, raw metadata %.0f B/obj, server send time %s ms", n, st.objects, st.rawMeta, fmtSample(st.floors, 0))

		// kdyn, kdyn compact, then client-go, each synced alone; then all
		// through one restart of the control plane.
		args := ChildArgs{Conn: b.Conn, Count: st.objects, GVRs: gvrArgs, Relist: true, ProfileDir: b.Opts.ProfileDir}
		var children []*child
		kill := func() {
			for _, c := range children {
				c.cmd.Process.Kill()
			}
		}
		for _, who := range []string{"scale-kdyn", "scale-kdyn-compact", "scale-clientgo"} {
			b.quiet(ctx, rc)
			a := args
			if who == "scale-kdyn-compact" {
				who, a.Compact = "scale-kdyn", true
			}
			c, err := startChild(ctx, who, a)
			if err != nil {
				kill()
				return nil, err
			}
			children = append(children, c)
			if err := c.ready(ctx, nil); err != nil { // synced; sampling the heap
				kill()
				return nil, err
			}
			b.logf("scale %d: %s (compact %v) synced", n, who, a.Compact)
		}
		t0 = time.Now()
		if err := b.Env.Restart(ctx); err != nil {
			kill()
			return nil, err
		}
		st.restart = time.Since(t0)
		b.logf("scale %d: control plane restarted in %s", n, st.restart.Round(time.Millisecond))
		for _, c := range children {
			if err := c.tell("RESTARTED"); err != nil {
				kill()
				return nil, err
			}
		}
		for i, out := range []*scaleResult{&st.kdyn, &st.compact, &st.cg} {
			if err := children[i].finish(ctx, out); err != nil {
				kill()
				return nil, err
			}
		}
		// A second timing round in the reverse order, each alone: the
		// server's pace varies by seconds at 250k (its own GC, etcd's
		// compaction after seeding), and whoever comes first after the
		// seeding meets the slowest server. Each contender's sync is the
		// faster of its two, as the reference is the fastest of its
		// three.
		results := []*scaleResult{&st.kdyn, &st.compact, &st.cg}
		for i, r := range results {
			st.syncs[i] = append(st.syncs[i], r.SyncMs)
		}
		for _, i := range []int{2, 1, 0} {
			b.quiet(ctx, rc)
			a := args
			a.Relist, a.ProfileDir = false, ""
			who := []string{"scale-kdyn", "scale-kdyn", "scale-clientgo"}[i]
			a.Compact = i == 1
			var r scaleResult
			if err := runChild(ctx, who, a, &r); err != nil {
				return nil, err
			}
			st.syncs[i] = append(st.syncs[i], r.SyncMs)
			if r.SyncMs < results[i].SyncMs {
				results[i].SyncMs, results[i].SyncCPUMs = r.SyncMs, r.SyncCPUMs
			}
		}
		for i, r := range []scaleResult{st.kdyn, st.compact, st.cg} {
			b.logf("scale %d: %s sync %.0f ms, heap %.1f MB (%.0f B/obj), relist peak live %.2f× steady (settled %v)", n, []string{"kdyn", "kdyn compact", "client-go"}[i], r.SyncMs, float64(r.HeapBytes)/mib, float64(r.HeapBytes)/float64(max(r.Objects, 1)), relistLive(r), r.Relist != nil && r.Relist.Settled)
		}
	}

	// The largest size again, in shards, one after the other.
	last := steps[len(steps)-1]
	shardObjects := 0
	for i := range ScaleShards {
		b.quiet(ctx, rc)
		args := ChildArgs{Conn: b.Conn, Count: last.objects, GVRs: gvrArgs, ShardIndex: i, ShardCount: ScaleShards, ProfileDir: b.Opts.ProfileDir}
		var r scaleResult
		if err := runChild(ctx, "scale-kdyn", args, &r); err != nil {
			return nil, err
		}
		last.shards = append(last.shards, r)
		shardObjects += r.Objects
		b.logf("scale %d: shard %d of %d: %d objects, sync %.0f ms, heap %.1f MB, %d of %d informers sharded by the server", last.n, i, ScaleShards, r.Objects, r.SyncMs, float64(r.HeapBytes)/mib, r.ServerSharded, r.Informers)
	}
	if shardObjects != last.objects {
		return nil, fmt.Errorf("the %d shards cached %d objects together, want %d", ScaleShards, shardObjects, last.objects)
	}
	// Which resources the server shards: a list of whole objects with a
	// quarter's selector returns about a quarter of them when it does,
	// and echoes the selector in metadata.shardInfo.
	sel, err := informer.NewShard(informer.ShardByUID, informer.SplitRanges(ScaleShards)[0])
	if err != nil {
		return nil, err
	}
	for _, g := range scaleGVRs {
		l, err := dc.Resource(g).List(ctx, metav1.ListOptions{ShardSelector: sel.Selector()})
		if err != nil {
			return nil, fmt.Errorf("sharded list of %s: %w", g.Resource, err)
		}
		echo, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
		last.probes = append(last.probes, fmt.Sprintf("%s: a list with the selector of shard 0 of %d returned %d objects, shardInfo echo %v", g.Resource, ScaleShards, len(l.Items), echo != ""))
	}
	memEnd, _ := controlPlaneMemory(b.Env)
	return scaleTables(steps, mem0, memEnd), nil
}

// waitScaleCRDs waits until both scale CRDs serve.
func waitScaleCRDs(ctx context.Context, dc *dynamic.DynamicClient) error {
	for _, g := range []schema.GroupVersionResource{GVRGizmos, GVRDoohickeys} {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			_, err := dc.Resource(g).Namespace("scale-00").List(ctx, metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s does not serve: %w", g.Resource, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// metadataListSize lists g in all namespaces, unpaged, as
// PartialObjectMetadataList JSON, and returns the body's size and how many
// items it holds.
func metadataListSize(ctx context.Context, rc *krest.Client, g schema.GroupVersionResource) (size, items int, err error) {
	body, err := rc.Get().Group(g.Group).Version(g.Version).Resource(g.Resource).
		SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").DoRaw(ctx)
	if err != nil {
		return 0, 0, err
	}
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return 0, 0, err
	}
	return len(body), len(l.Items), nil
}

// scaleFloorMs is the server's own time to send the four resources'
// metadata streaming lists, read concurrently and raw (protobuf,
// uncompressed, as both metadata-only informers ask), until the last
// initial-events-end bookmark.
func scaleFloorMs(ctx context.Context, rc *krest.Client) (float64, error) {
	t0 := time.Now()
	errs := make([]error, len(scaleGVRs))
	var wg sync.WaitGroup
	for i, g := range scaleGVRs {
		wg.Go(func() { _, errs[i] = serverFloorMs(ctx, rc, g, "", true, true) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	return ms(time.Since(t0)), nil
}

func relistLive(r scaleResult) float64 {
	if r.Relist == nil || !r.Relist.Observed || r.Relist.SteadyHeap == 0 {
		return math.NaN()
	}
	return float64(r.Relist.PeakLive) / float64(r.Relist.SteadyHeap)
}

// scaleTables builds the scale scenario's tables: one per size, the
// growth across sizes, the shards, and seeding with the control plane's
// memory.
func scaleTables(steps []*scaleStep, mem0, memEnd procMemory) []*Table {
	var ts []*Table
	// Per object: of the objects the contender cached (n, and the
	// apiserver's own ConfigMaps in kube-system).
	per := func(r scaleResult, _ int) float64 { return float64(r.HeapBytes) / float64(max(r.Objects, 1)) }
	nan := math.NaN()
	relist := func(r scaleResult, peak func(*relistResult) uint64) (float64, float64) {
		if r.Relist == nil || !r.Relist.Observed {
			return nan, nan
		}
		return float64(peak(r.Relist)) / mib, float64(r.Relist.SteadyHeap) / mib
	}
	live := func(rr *relistResult) uint64 { return rr.PeakLive }
	alloc := func(rr *relistResult) uint64 { return rr.PeakHeapAlloc }
	for _, st := range steps {
		t := &Table{
			Title: fmt.Sprintf("scale, %d objects (%d each of ConfigMaps, Secrets and two CRDs, in %d namespaces): metadata-only kdyn ResourceSet (default and compact) and client-go metadatainformer, each in its own process", st.n, st.n/4, ScaleNamespaces),
			Cols:  [2]string{"value", "reference"},
		}
		t.Add(Row{Metric: "kdyn: heap per object vs raw metadata JSON per object (PartialObjectMetadataList)", Unit: "B", Kdyn: per(st.kdyn, st.n), ClientGo: st.rawMeta, Target: "≤ 1.0×", Check: ratioAtMost(1.0)})
		t.Add(Row{Metric: "kdyn compact (InformerOptions.Compact): heap per object vs raw metadata JSON per object", Unit: "B", Kdyn: per(st.compact, st.n), ClientGo: st.rawMeta, Target: "≤ 1.0×", Check: ratioAtMost(1.0)})
		t.Add(Row{Metric: "client-go: heap per object vs raw metadata JSON per object", Unit: "B", Kdyn: per(st.cg, st.n), ClientGo: st.rawMeta, Target: "—"})
		t.Add(Row{Metric: "heap per object, kdyn vs client-go", Unit: "B", Kdyn: per(st.kdyn, st.n), ClientGo: per(st.cg, st.n), Target: "—"})
		t.Add(Row{Metric: "kdyn: sync time vs the server's own send time", Unit: "ms", Kdyn: st.kdyn.SyncMs, ClientGo: st.floorMs, Target: "≤ 1.3×", Check: ratioAtMost(1.3)})
		t.Add(Row{Metric: "kdyn compact: sync time vs the server's own send time", Unit: "ms", Kdyn: st.compact.SyncMs, ClientGo: st.floorMs, Target: "≤ 1.3×", Check: ratioAtMost(1.3)})
		t.Add(Row{Metric: "client-go: sync time vs the server's own send time", Unit: "ms", Kdyn: st.cg.SyncMs, ClientGo: st.floorMs, Target: "—"})
		t.Add(Row{Metric: "CPU during sync (user+sys), kdyn vs client-go", Unit: "ms", Kdyn: st.kdyn.SyncCPUMs, ClientGo: st.cg.SyncCPUMs, Target: "—"})
		p, s := relist(st.kdyn, live)
		t.Add(Row{Metric: "kdyn: relist after a restart, peak live heap vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "≤ 1.2×", Check: ratioAtMost(1.2)})
		p, s = relist(st.kdyn, alloc)
		t.Add(Row{Metric: "kdyn: relist after a restart, peak HeapAlloc (garbage not yet collected included) vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "— (GC pacing)"})
		p, s = relist(st.compact, live)
		t.Add(Row{Metric: "kdyn compact: relist after a restart, peak live heap vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "≤ 1.2×", Check: ratioAtMost(1.2)})
		p, s = relist(st.compact, alloc)
		t.Add(Row{Metric: "kdyn compact: relist after a restart, peak HeapAlloc vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "— (GC pacing)"})
		p, s = relist(st.cg, live)
		t.Add(Row{Metric: "client-go: relist, peak live heap vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "—"})
		p, s = relist(st.cg, alloc)
		t.Add(Row{Metric: "client-go: relist, peak HeapAlloc vs steady heap", Unit: "MB", Kdyn: p, ClientGo: s, Target: "—"})
		t.RawLine("server send time (the four metadata streaming lists read raw, together) %s ms; raw metadata JSON %.0f B/obj (%.1f MB)", fmtSample(st.floors, 0), st.rawMeta, st.rawMeta*float64(st.objects)/mib)
		for i, r := range []scaleResult{st.kdyn, st.compact, st.cg} {
			who := []string{"kdyn", "compact", "client-go"}[i]
			t.RawLine("%-9s %d objects, sync %.0f ms of %s (CPU %.0f ms, allocated %.0f MB), heap %.1f MB = %.0f B/obj (baseline %.1f MB), requests %+v", who, r.Objects, r.SyncMs, fmtSample(st.syncs[i], 0), r.SyncCPUMs, r.AllocMB, float64(r.HeapBytes)/mib, per(r, st.n), float64(r.BaseHeap)/mib, r.Requests)
			if rr := r.Relist; rr != nil {
				t.RawLine("%-9s relist observed %v after %.1f s, settled %v after %.1f s; steady %.1f MB, peak HeapAlloc %.1f MB, peak live %.1f MB, after %.1f MB; %d relist requests (%d failed while down), %d samples", who, rr.Observed, rr.SecondsToSeen, rr.Settled, rr.SecondsToSettled, float64(rr.SteadyHeap)/mib, float64(rr.PeakHeapAlloc)/mib, float64(rr.PeakLive)/mib, float64(rr.AfterHeap)/mib, rr.RelistRequests, rr.FailedRequests, rr.Samples)
				if i < 2 {
					t.RawLine("%-9s the set's events from the restart on: %d adds, %d deletes of a released resource (ResourceGone)", who, r.ReaddedDuringRelist, r.GoneDuringRelist)
				}
			}
		}
		t.RawLine("control plane restart (for the relist) took %.1f s", st.restart.Seconds())
		ts = append(ts, t)
	}

	first, last := steps[0], steps[len(steps)-1]
	g := &Table{
		Title: fmt.Sprintf("scale: growth from %d to %d objects (per-object figures; flat = linear)", first.n, last.n),
		Cols:  [2]string{fmt.Sprintf("at %d", last.n), fmt.Sprintf("at %d", first.n)},
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("kdyn heap per object, %d vs %d", st.n, first.n), Unit: "B", Kdyn: per(st.kdyn, st.n), ClientGo: per(first.kdyn, first.n), Target: "≤ 1.1×", Check: ratioAtMost(1.1)})
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("kdyn compact heap per object, %d vs %d", st.n, first.n), Unit: "B", Kdyn: per(st.compact, st.n), ClientGo: per(first.compact, first.n), Target: "≤ 1.1×", Check: ratioAtMost(1.1)})
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("client-go heap per object, %d vs %d", st.n, first.n), Unit: "B", Kdyn: per(st.cg, st.n), ClientGo: per(first.cg, first.n), Target: "—"})
	}
	us := func(v float64, n int) float64 { return v * 1000 / float64(n) }
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("kdyn sync time per object, %d vs %d", st.n, first.n), Unit: "µs", Kdyn: us(st.kdyn.SyncMs, st.n), ClientGo: us(first.kdyn.SyncMs, first.n), Target: "≤ 1.2×", Check: ratioAtMost(1.2)})
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("kdyn compact sync time per object, %d vs %d", st.n, first.n), Unit: "µs", Kdyn: us(st.compact.SyncMs, st.n), ClientGo: us(first.compact.SyncMs, first.n), Target: "≤ 1.2×", Check: ratioAtMost(1.2)})
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("client-go sync time per object, %d vs %d", st.n, first.n), Unit: "µs", Kdyn: us(st.cg.SyncMs, st.n), ClientGo: us(first.cg.SyncMs, first.n), Target: "—"})
	}
	for _, st := range steps[1:] {
		g.Add(Row{Metric: fmt.Sprintf("server send time per object, %d vs %d", st.n, first.n), Unit: "µs", Kdyn: us(st.floorMs, st.n), ClientGo: us(first.floorMs, first.n), Target: "—"})
	}
	g.Add(Row{Metric: "raw metadata JSON per object", Unit: "B", Kdyn: last.rawMeta, ClientGo: first.rawMeta, Target: "—"})
	ts = append(ts, g)

	sh := &Table{
		Title: fmt.Sprintf("scale: kdyn at %d objects in %d shards (ResourceSet with InformerOptions.Shard = SplitRanges(%d)[i] by UID), each shard in its own process, one after the other", last.n, ScaleShards, ScaleShards),
		Cols:  [2]string{"per shard", "unsharded"},
	}
	stat := func(f func(scaleResult) float64) (mx, mean float64) {
		for _, r := range last.shards {
			mx = math.Max(mx, f(r))
			mean += f(r) / float64(len(last.shards))
		}
		return
	}
	heapMB := func(r scaleResult) float64 { return float64(r.HeapBytes) / mib }
	mx, mean := stat(heapMB)
	sh.Add(Row{Metric: "heap, max of the shards", Unit: "MB", Kdyn: mx, ClientGo: heapMB(last.kdyn), Target: "≤ 0.3×", Check: ratioAtMost(0.3)})
	sh.Add(Row{Metric: "heap, mean of the shards", Unit: "MB", Kdyn: mean, ClientGo: heapMB(last.kdyn), Target: "≤ 0.3×", Check: ratioAtMost(0.3)})
	syncMs := func(r scaleResult) float64 { return r.SyncMs }
	mx, mean = stat(syncMs)
	sh.Add(Row{Metric: "sync time, max of the shards", Unit: "ms", Kdyn: mx, ClientGo: last.kdyn.SyncMs, Target: "—"})
	sh.Add(Row{Metric: "sync time, mean of the shards", Unit: "ms", Kdyn: mean, ClientGo: last.kdyn.SyncMs, Target: "—"})
	objs := func(r scaleResult) float64 { return float64(r.Objects) }
	mx, mean = stat(objs)
	sh.Add(Row{Metric: "objects cached, max of the shards", Kdyn: mx, ClientGo: float64(last.n), Target: "—", Note: fmt.Sprintf("mean %.0f", mean)})
	served, infs := 0, 0
	for _, r := range last.shards {
		served += r.ServerSharded
		infs += r.Informers
	}
	sh.Add(Row{Metric: "informers whose server applied the shard selector (ServerSharded)", Kdyn: float64(served), ClientGo: nan, Target: fmt.Sprintf("= %d", infs), Check: func(r Row) bool { return r.Kdyn == float64(infs) }})
	for i, r := range last.shards {
		sh.RawLine("shard %d: %d objects, sync %.0f ms (CPU %.0f ms), heap %.1f MB = %.0f B/obj, sharded by the server: %v, requests %+v", i, r.Objects, r.SyncMs, r.SyncCPUMs, heapMB(r), float64(r.HeapBytes)/float64(max(r.Objects, 1)), r.ServedResources, r.Requests)
	}
	for _, p := range last.probes {
		sh.RawLine("%s", p)
	}
	ts = append(ts, sh)

	sd := &Table{Title: "scale: seeding and the control plane's memory (kube-apiserver with embedded etcd, one process)", Cols: [2]string{"value", "—"}}
	sd.Add(Row{Metric: "control plane RSS before seeding", Unit: "MB", Kdyn: float64(mem0.RSS) / mib, ClientGo: nan, Target: "—"})
	prev := 0
	for _, st := range steps {
		sd.Add(Row{Metric: fmt.Sprintf("seeding %d → %d objects (%d concurrent creates, no client-side rate limit)", prev, st.n, fastSeedWorkers), Unit: "s", Kdyn: st.seed.Seconds(), ClientGo: nan, Target: "—", Note: fmt.Sprintf("%.0f objects/s", float64(st.n-prev)/st.seed.Seconds())})
		sd.Add(Row{Metric: fmt.Sprintf("control plane RSS after seeding %d", st.n), Unit: "MB", Kdyn: float64(st.memSeeded.RSS) / mib, ClientGo: nan, Target: "—", Note: fmt.Sprintf("peak %.0f MB", float64(st.memSeeded.Peak)/mib)})
		sd.Add(Row{Metric: fmt.Sprintf("control plane restart with %d objects (for the relist)", st.n), Unit: "s", Kdyn: st.restart.Seconds(), ClientGo: nan, Target: "—"})
		prev = st.n
	}
	sd.Add(Row{Metric: "control plane RSS at the end (after the last restart and the shard runs)", Unit: "MB", Kdyn: float64(memEnd.RSS) / mib, ClientGo: nan, Target: "—", Note: fmt.Sprintf("peak %.0f MB since that restart", float64(memEnd.Peak)/mib)})
	ts = append(ts, sd)

	last4 := ts[len(ts)-1]
	last4.Note("objects: i-th object is resource i%%4 (configmaps, secrets, gizmos.%s, doohickeys.%s), in namespace scale-NN (%d namespaces), with 5 labels, 2 annotations and ~200 B of data or spec; seeded once, growing through the sizes", ScaleGroup, ScaleGroup, ScaleNamespaces)
	last4.Note("contenders: kdyn informer.NewResourceSet (metadata-only, the default; and the same with ResourceSetOptions.Informer.Compact, which keeps each object's metadata as its protobuf encoding) with restmapper.NewForConfig, Keep restricted to the four resources, all namespaces, streaming lists (the default); client-go metadatainformer.NewSharedInformerFactory with ForResource for each of the four (WatchListClient on, its default in v0.37.2); one counting handler each; sync = process start of the measurement (before any client, discovery included for kdyn) → every informer synced and every add delivered, the faster of two rounds (kdyn, compact, client-go; then, after the relist, client-go, compact, kdyn, each alone again); every measurement, and every sample of the server's send time, starts after a full garbage collection of the control plane (GET /debug/pprof/heap?gc=1) and once it has used under a tenth of a CPU for half a second (otherwise the second of three syncs in a row meets the collection the first two made due); heap = HeapAlloc after two runtime.GC() then minus the same before any client existed")
	last4.Note("references: raw metadata = the four unpaged lists with Accept application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, total body bytes / items (N, and the 2 ConfigMaps the apiserver keeps in kube-system, which both caches hold too; managedFields included: client-go's cache keeps them, kdyn's leaves them out by default); server send time = the four metadata streaming lists (sendInitialEvents, protobuf, Accept-Encoding identity) read raw and concurrently up to their initial-events-end bookmarks, the fastest of 3")
	last4.Note("relist: the three children stay up after their sync (idle while the next one syncs), then the parent restarts the control plane (testenv Restart: a fresh watch cache answers 410), and all three relist at once; each samples ReadMemStats HeapAlloc and /gc/heap/live:bytes (the heap marked live by the last GC) every 10 ms from before the restart until 1 s after its relist completed (kdyn: every informer synced again, seen by an informer.Metrics hook; client-go: every object received again, counted by a no-op transform); the goal applies to the live heap: HeapAlloc also holds garbage not yet collected, which Go's GC lets grow to the live heap's size (GOGC=100) in any program that allocates while it decodes; but /gc/heap/live:bytes is only updated as a GC cycle ends, so when no GC runs during the relist (a large steady heap, GOGC=100) the peak live figure stays at the steady one, and the peak HeapAlloc, an upper bound of the live heap, is the figure to read")
	return ts
}
