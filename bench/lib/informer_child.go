package lib

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	kdynamic "github.com/kdyn/kdyn/dynamic"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdynamic "k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kdyn/kdyn/informer"
	krest "github.com/kdyn/kdyn/rest"
)

// TSAnnotation carries the patch time (Unix ns) in the watch-throughput
// phase.
const TSAnnotation = "bench.kdyn.io/ts"

// Informer contenders (child names are "informer-" + one of these).
var informerContenders = []string{"kdyn-default", "kdyn-compact", "kdyn-metadata", "clientgo-plain", "clientgo-strip", "clientgo-metadata"}

// informerResult is what an informer child reports.
type informerResult struct {
	Objects     int     `json:"objects"`
	SyncMs      float64 `json:"syncMs"`
	SyncCPUMs   float64 `json:"syncCpuMs"`
	SyncAllocMB float64 `json:"syncAllocMB"`
	SyncMallocs uint64  `json:"syncMallocs"`
	HeapBytes   int64   `json:"heapBytes"` // HeapAlloc after sync minus baseline, after 2 GCs
	Requests    reqLog  `json:"requests"`
	Streaming   bool    `json:"streamingGate"` // client-go feature gate / kdyn option as seen by the child

	Relist *relistResult `json:"relist,omitempty"`
	Watch  *watchResult  `json:"watch,omitempty"`
}

type relistResult struct {
	Observed       bool    `json:"observed"`
	SteadyHeap     uint64  `json:"steadyHeap"` // HeapAlloc after 2 GCs, before the restart
	PeakHeapAlloc  uint64  `json:"peakHeapAlloc"`
	PeakLive       uint64  `json:"peakLive"` // max of /gc/heap/live:bytes
	AfterHeap      uint64  `json:"afterHeap"`
	Samples        int     `json:"samples"`
	RelistRequests int     `json:"relistRequests"` // answered 200
	FailedRequests int     `json:"failedRequests"`
	SecondsToSeen  float64 `json:"secondsToSeen"`
	// Settled: the relist was seen to complete (relistPhase's settled
	// held); SecondsToSettled is from the restart until then.
	Settled          bool    `json:"settled,omitempty"`
	SecondsToSettled float64 `json:"secondsToSettled,omitempty"`
}

type watchResult struct {
	Events      int64   `json:"events"`
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"perSecond"`
	LagP50Ms    float64 `json:"lagP50Ms"`
	LagP99Ms    float64 `json:"lagP99Ms"`
	CPUMs       float64 `json:"cpuMs"`
	IdleCPUMs   float64 `json:"idleCpuMs"` // idle CPU scaled to the window
	CPUPer1000  float64 `json:"cpuPer1000Ms"`
	Patches     int64   `json:"patches"`
	SysMs       float64 `json:"sysMs"`    // of CPUMs, in the kernel
	Switches    float64 `json:"switches"` // context switches per event
	HeapAfterMB float64 `json:"heapAfterMB"`
	// Paced is the same measurement at a fixed patch rate (PacedPatchRate).
	Paced *watchResult `json:"paced,omitempty"`
}

// reqLog classifies the requests an informer made.
type reqLog struct {
	Lists   int `json:"lists"`   // GET without watch
	Streams int `json:"streams"` // watch with sendInitialEvents=true
	Watches int `json:"watches"` // other watches
	// OKRelists counts lists and streams answered 200.
	OKRelists int `json:"okRelists"`
	Failed    int `json:"failed"` // transport errors and non-2xx answers
}

type recordingRT struct {
	rt http.RoundTripper
	mu sync.Mutex
	l  reqLog
}

func (t *recordingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	q := r.URL.Query()
	relist := false
	t.mu.Lock()
	switch {
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		if q.Get("sendInitialEvents") == "true" {
			t.l.Streams++
			relist = true
		} else {
			t.l.Watches++
		}
	case r.Method == http.MethodGet:
		t.l.Lists++
		relist = true
	}
	t.mu.Unlock()
	resp, err := t.rt.RoundTrip(r)
	t.mu.Lock()
	switch {
	case err != nil || resp.StatusCode >= 300:
		t.l.Failed++
	case relist:
		t.l.OKRelists++
	}
	t.mu.Unlock()
	return resp, err
}

func (t *recordingRT) snapshot() reqLog {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.l
}

// eventCounter is the handler of both libraries' informers.
type eventCounter struct {
	adds, updates, deletes atomic.Int64
	watching               atomic.Bool
	mu                     sync.Mutex
	lags                   []float64 // ms
	first, last            time.Time
}

func (e *eventCounter) onAdd()    { e.adds.Add(1) }
func (e *eventCounter) onDelete() { e.deletes.Add(1) }
func (e *eventCounter) onUpdate(obj any) {
	e.updates.Add(1)
	if !e.watching.Load() {
		return
	}
	now := time.Now()
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	ts, err := strconv.ParseInt(m.GetAnnotations()[TSAnnotation], 10, 64)
	if err != nil {
		return
	}
	e.mu.Lock()
	if e.first.IsZero() {
		e.first = now
	}
	e.last = now
	e.lags = append(e.lags, float64(now.UnixNano()-ts)/1e6)
	e.mu.Unlock()
}

// runningInformer abstracts the six contenders.
type runningInformer struct {
	hasSynced func() bool
	len       func() int
	stop      func()
}

func cpuTime() time.Duration {
	u, s, _ := usage()
	return u + s
}

// usage returns the process's user and system CPU time and its context
// switches (voluntary and not) so far.
func usage() (user, sys time.Duration, switches int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}

func gvrFor(resource string) schema.GroupVersionResource {
	if resource == "widgets" {
		return GVRWidgets
	}
	return GVRConfigMaps
}

func startInformer(ctx context.Context, who string, args ChildArgs, rec *recordingRT, h *eventCounter) (*runningInformer, error) {
	gvr := gvrFor(args.Resource)
	wrap := func(rt http.RoundTripper) http.RoundTripper { rec.rt = rt; return rec }
	ctx, cancel := context.WithCancel(ctx)
	switch who {
	case "kdyn-default", "kdyn-compact", "kdyn-metadata":
		cfg := args.Conn.Kdyn(Unlimited, nil)
		cfg.WrapTransport = wrap
		rc, err := krest.NewForConfig(cfg)
		if err != nil {
			cancel()
			return nil, err
		}
		f := informer.NewFactory(kdynamic.New(rc), informer.FactoryOptions{Namespace: args.Namespace, DisableStreaming: !args.Streaming})
		var ri runningInformer
		if who == "kdyn-metadata" {
			inf := f.ForResourceMetadata(gvr, informer.InformerOptions{})
			if _, err := inf.AddEventHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
				AddFunc:    func(*metav1.PartialObjectMetadata, bool) { h.onAdd() },
				UpdateFunc: func(_, n *metav1.PartialObjectMetadata) { h.onUpdate(n) },
				DeleteFunc: func(informer.Deleted[*metav1.PartialObjectMetadata]) { h.onDelete() },
			}); err != nil {
				cancel()
				return nil, err
			}
			ri = runningInformer{hasSynced: inf.HasSynced, len: inf.Store().Len}
		} else {
			inf := f.ForResource(gvr, informer.InformerOptions{Compact: who == "kdyn-compact"})
			if _, err := inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
				AddFunc:    func(*unstructured.Unstructured, bool) { h.onAdd() },
				UpdateFunc: func(_, n *unstructured.Unstructured) { h.onUpdate(n) },
				DeleteFunc: func(informer.Deleted[*unstructured.Unstructured]) { h.onDelete() },
			}); err != nil {
				cancel()
				return nil, err
			}
			ri = runningInformer{hasSynced: inf.HasSynced, len: inf.Store().Len}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = f.Run(ctx)
		}()
		ri.stop = func() { cancel(); <-done }
		return &ri, nil
	case "clientgo-plain", "clientgo-strip", "clientgo-metadata":
		cfg := args.Conn.ClientGo(Unlimited, nil)
		cfg.WrapTransport = wrap
		var inf cache.SharedIndexInformer
		var start func(<-chan struct{})
		var shutdown func()
		if who == "clientgo-metadata" {
			mc, err := metadata.NewForConfig(cfg)
			if err != nil {
				cancel()
				return nil, err
			}
			f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, args.Namespace, nil)
			inf = f.ForResource(gvr).Informer()
			start, shutdown = f.Start, f.Shutdown
		} else {
			dc, err := cgdynamic.NewForConfig(cfg)
			if err != nil {
				cancel()
				return nil, err
			}
			f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, args.Namespace, nil)
			inf = f.ForResource(gvr).Informer()
			if who == "clientgo-strip" {
				if err := inf.SetTransform(stripManagedFields); err != nil {
					cancel()
					return nil, err
				}
			}
			start, shutdown = f.Start, f.Shutdown
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { h.onAdd() },
			UpdateFunc: func(_, n any) { h.onUpdate(n) },
			DeleteFunc: func(any) { h.onDelete() },
		}); err != nil {
			cancel()
			return nil, err
		}
		start(ctx.Done())
		return &runningInformer{
			hasSynced: inf.HasSynced,
			len:       func() int { return len(inf.GetStore().ListKeys()) },
			stop:      func() { cancel(); shutdown() },
		}, nil
	}
	cancel()
	return nil, fmt.Errorf("unknown informer contender %q", who)
}

// stripManagedFields is the transform a careful client-go user writes.
func stripManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil && a.GetManagedFields() != nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

func gc2() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func waitFor(ctx context.Context, every, limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(every)
	}
	return true
}

// startCPUProfile starts a CPU profile and an execution trace of this
// process into dir (nothing when dir is ""); the function it returns ends
// both. The trace shows where the time the CPU profile does not see went:
// `go tool trace -pprof=net` (waiting on the network) and -pprof=sched
// (runnable, waiting for a CPU).
func startCPUProfile(dir, name string) func() {
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".cpu.pprof"))
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	tf, err := os.Create(filepath.Join(dir, name+".trace"))
	if err == nil && trace.Start(tf) != nil {
		tf.Close()
		tf = nil
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		if tf != nil {
			trace.Stop()
			tf.Close()
		}
	}
}

func writeHeapProfile(dir, name string) {
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name+".heap.pprof"))
	if err != nil {
		return
	}
	defer f.Close()
	pprof.Lookup("heap").WriteTo(f, 0)
}

// informerChild measures one informer in this fresh process.
func informerChild(ctx context.Context, name string, args ChildArgs, cio *childIO) (any, error) {
	who := strings.TrimPrefix(name, "informer-")
	if strings.HasPrefix(who, "clientgo") {
		args.Streaming = clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	}
	profName := fmt.Sprintf("%s-%s-%s", who, args.Resource, map[bool]string{true: "stream", false: "listwatch"}[args.Streaming])
	rec := &recordingRT{}
	h := &eventCounter{}
	base := gc2()
	cpu0 := cpuTime()
	stopProf := startCPUProfile(args.ProfileDir, profName+"-sync")
	t0 := time.Now()
	inf, err := startInformer(ctx, who, args, rec, h)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	if !waitFor(ctx, time.Millisecond, 5*time.Minute, inf.hasSynced) {
		return nil, fmt.Errorf("%s did not sync", who)
	}
	syncDur := time.Since(t0)
	syncCPU := cpuTime() - cpu0
	stopProf()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	if !waitFor(ctx, time.Millisecond, time.Minute, func() bool { return h.adds.Load() >= int64(args.Count) }) {
		return nil, fmt.Errorf("%s: handler saw %d adds, want %d", who, h.adds.Load(), args.Count)
	}
	after := gc2()
	writeHeapProfile(args.ProfileDir, profName)
	res := informerResult{
		Objects:     inf.len(),
		SyncMs:      ms(syncDur),
		SyncCPUMs:   ms(syncCPU),
		SyncAllocMB: float64(ms1.TotalAlloc-base.TotalAlloc) / mib,
		SyncMallocs: ms1.Mallocs - base.Mallocs,
		HeapBytes:   int64(after.HeapAlloc) - int64(base.HeapAlloc),
		Requests:    rec.snapshot(),
		Streaming:   args.Streaming,
	}
	if res.Objects != args.Count {
		return nil, fmt.Errorf("%s: cache holds %d objects, want %d", who, res.Objects, args.Count)
	}

	if args.Relist {
		rr, err := relistPhase(ctx, cio, rec, after.HeapAlloc, args.ProfileDir, profName, nil)
		if err != nil {
			return nil, err
		}
		res.Relist = rr
	}
	if args.Watch {
		wr, err := watchPhase(ctx, cio, h, args, profName)
		if err != nil {
			return nil, err
		}
		res.Watch = wr
	}
	runtime.KeepAlive(inf)
	return res, nil
}

// relistPhase: tell the parent we are steady, let it restart the control
// plane, sample the heap every 10 ms until a relist was seen and settled:
// 5 s after it was seen, or, when settled is set, 1 s after settled holds
// (at most 5 minutes).
func relistPhase(ctx context.Context, cio *childIO, rec *recordingRT, steady uint64, profDir, profName string, settled func() bool) (*relistResult, error) {
	before := rec.snapshot()
	rr := &relistResult{SteadyHeap: steady}
	var peak, peakLive atomic.Uint64
	var samples atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var m runtime.MemStats
		var profiled uint64 // the live heap of the last peak profile
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			metrics.Read(s)
			if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > peakLive.Load() {
				peakLive.Store(s[0].Value.Uint64())
				// With -profile, the in-use heap at the highest live
				// heap seen: what a relist holds beyond the cache. A GC
				// first, so that the profile is of this moment (its
				// in-use figures are otherwise a cycle or two old);
				// written again each time the peak grows by 5% or more.
				// The forced GCs lower the peak HeapAlloc of a profiled
				// run.
				if live := s[0].Value.Uint64(); profDir != "" && live > steady+steady/20 && live >= profiled+profiled/20 {
					profiled = live
					runtime.GC()
					writeHeapProfile(profDir, profName+"-relist-peaklive")
				}
			}
			samples.Add(1)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	// With -profile, the allocations of the relist are the difference of
	// these two heap profiles (go tool pprof -sample_index=alloc_space -base).
	writeHeapProfile(profDir, profName+"-relist-before")
	defer writeHeapProfile(profDir, profName+"-relist-after")
	cio.send("READY", map[string]any{"phase": "relist"})
	if err := cio.wait("RESTARTED"); err != nil {
		return nil, err
	}
	t0 := time.Now()
	relisted := func() bool { return rec.snapshot().OKRelists > before.OKRelists }
	rr.Observed = waitFor(ctx, 10*time.Millisecond, 90*time.Second, relisted)
	rr.SecondsToSeen = time.Since(t0).Seconds()
	switch {
	case rr.Observed && settled != nil:
		rr.Settled = waitFor(ctx, 10*time.Millisecond, 5*time.Minute, settled)
		rr.SecondsToSettled = time.Since(t0).Seconds()
		time.Sleep(time.Second)
	case rr.Observed:
		time.Sleep(5 * time.Second) // the relist of 10k objects takes 1–3 s
	}
	close(stop)
	<-done
	n := rec.snapshot()
	rr.RelistRequests = n.OKRelists - before.OKRelists
	rr.FailedRequests = n.Failed - before.Failed
	rr.PeakHeapAlloc, rr.PeakLive, rr.Samples = peak.Load(), peakLive.Load(), int(samples.Load())
	rr.AfterHeap = gc2().HeapAlloc
	return rr, nil
}

// watchPhase measures idle CPU, then counts events while the parent patches.
func watchPhase(ctx context.Context, cio *childIO, h *eventCounter, args ChildArgs, profName string) (*watchResult, error) {
	const idle = 3 * time.Second
	c0 := cpuTime()
	time.Sleep(idle)
	idleRate := float64(cpuTime()-c0) / float64(idle)
	h.watching.Store(true)
	stopProf := startCPUProfile(args.ProfileDir, profName+"-watch")
	wr, err := watchWindow(ctx, cio, h, idleRate, "watch")
	stopProf()
	if err != nil {
		return nil, err
	}
	// The same at a fixed patch rate, equal for every contender, so that
	// CPU per event is compared at the same event rate.
	stopProf = startCPUProfile(args.ProfileDir, profName+"-paced")
	wr.Paced, err = watchWindow(ctx, cio, h, idleRate, "paced")
	stopProf()
	if err != nil {
		return nil, err
	}
	wr.HeapAfterMB = float64(gc2().HeapAlloc) / mib
	return wr, nil
}

// watchWindow tells the parent to start patching and measures until it
// says how many patches it made ("PATCHES n") and their events arrived.
func watchWindow(ctx context.Context, cio *childIO, h *eventCounter, idleRate float64, phase string) (*watchResult, error) {
	u0 := h.updates.Load()
	h.mu.Lock()
	h.first, h.last, h.lags = time.Time{}, time.Time{}, nil
	h.mu.Unlock()
	user0, sys0, sw0 := usage()
	cpu0 := user0 + sys0
	t0 := time.Now()
	cio.send("READY", map[string]any{"phase": phase})
	var patches int64
	got := false
	for cio.in.Scan() {
		l := strings.TrimSpace(cio.in.Text())
		if v, ok := strings.CutPrefix(l, "PATCHES "); ok {
			patches, _ = strconv.ParseInt(v, 10, 64)
			got = true
			break
		}
	}
	if !got {
		return nil, errors.New("the parent did not say how many patches it made")
	}
	// Wait for the stragglers: every patch, or 3 s without a new event.
	lastN, lastChange := h.updates.Load(), time.Now()
	for h.updates.Load()-u0 < patches && time.Since(lastChange) < 3*time.Second && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond) // coarse: this loop's wake-ups count in the CPU measured
		if n := h.updates.Load(); n != lastN {
			lastN, lastChange = n, time.Now()
		}
	}
	h.mu.Lock()
	last := h.last
	lags := append([]float64(nil), h.lags...)
	first := h.first
	h.mu.Unlock()
	user1, sys1, sw1 := usage()
	cpuEnd := user1 + sys1
	wr := &watchResult{Events: h.updates.Load() - u0, Patches: patches, SysMs: ms(sys1 - sys0)}
	wr.CPUMs = ms(cpuEnd - cpu0)
	wr.IdleCPUMs = idleRate * ms(time.Since(t0))
	if !first.IsZero() && last.After(first) {
		wr.Seconds = last.Sub(first).Seconds()
		wr.PerSecond = float64(wr.Events) / wr.Seconds
	}
	sort.Float64s(lags)
	wr.LagP50Ms, wr.LagP99Ms = percentile(lags, 50), percentile(lags, 99)
	if wr.Events > 0 {
		wr.CPUPer1000 = (wr.CPUMs - wr.IdleCPUMs) / float64(wr.Events) * 1000
		wr.Switches = float64(sw1-sw0) / float64(wr.Events)
	}
	return wr, nil
}
