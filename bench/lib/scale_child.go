package lib

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kdyn/kdyn/discovery"
	kdynamic "github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/restmapper"
)

// scaleResult is what a scale child reports.
type scaleResult struct {
	Objects   int     `json:"objects"` // cached once synced
	SyncMs    float64 `json:"syncMs"`  // created → every informer synced and every add delivered
	SyncCPUMs float64 `json:"syncCpuMs"`
	// HeapBytes is HeapAlloc after two GCs once synced, minus the same
	// before any client existed.
	HeapBytes int64   `json:"heapBytes"`
	BaseHeap  uint64  `json:"baseHeap"`
	AllocMB   float64 `json:"allocMB"` // allocated during the sync
	Requests  reqLog  `json:"requests"`
	// Informers (of the scale resources) and how many of them report
	// that the server applied their shard selector.
	// ReaddedDuringRelist and GoneDuringRelist count, for a kdyn set,
	// the adds of objects it already had and the Deleted events marked
	// ResourceGone from the restart on: a set that released a member
	// while the server came back, and added it again.
	ReaddedDuringRelist int64    `json:"readdedDuringRelist,omitempty"`
	GoneDuringRelist    int64    `json:"goneDuringRelist,omitempty"`
	Informers           int      `json:"informers"`
	ServerSharded       int      `json:"serverSharded"`
	ServedResources     []string `json:"servedResources,omitempty"` // those sharded by the server

	Relist *relistResult `json:"relist,omitempty"`
}

// syncsByName counts completed syncs per informer (an informer.Metrics).
type syncsByName struct {
	mu sync.Mutex
	n  map[string]int
}

func (m *syncsByName) ListStarted(string, bool)      {}
func (m *syncsByName) WatchStarted(string)           {}
func (m *syncsByName) Event(string, watch.EventType) {}
func (m *syncsByName) Cached(string, int, int64)     {}
func (m *syncsByName) Synced(name string, _ time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n[name]++
}
func (m *syncsByName) ShardServed(string, bool)        {}
func (m *syncsByName) Delivered(string, time.Duration) {}

func (m *syncsByName) get(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[name]
}

// parseGVRs reads "group/version/resource" strings.
func parseGVRs(ss []string) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	for _, s := range ss {
		p := strings.Split(s, "/")
		if len(p) != 3 {
			return nil, fmt.Errorf("bad resource %q (want group/version/resource)", s)
		}
		out = append(out, schema.GroupVersionResource{Group: p[0], Version: p[1], Resource: p[2]})
	}
	return out, nil
}

func formatGVR(g schema.GroupVersionResource) string {
	return g.Group + "/" + g.Version + "/" + g.Resource
}

// scaleChild caches the metadata of every object of args.GVRs in all
// namespaces: "scale-kdyn" with a kdyn ResourceSet (its resources found by
// discovery, restricted by Keep; a Shard when args.ShardCount is set;
// compact informers with args.Compact),
// "scale-clientgo" with client-go's metadatainformer. It reports once
// synced, or, with args.Relist, after the relist that follows the
// parent's restart of the control plane.
func scaleChild(ctx context.Context, name string, args ChildArgs, cio *childIO) (any, error) {
	gvrs, err := parseGVRs(args.GVRs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rec := &recordingRT{}
	wrap := func(rt http.RoundTripper) http.RoundTripper { rec.rt = rt; return rec }
	var adds, updates, gone atomic.Int64
	profName := fmt.Sprintf("%s-%d", name, args.Count)
	if args.ShardCount > 0 {
		profName += fmt.Sprintf("-shard%dof%d", args.ShardIndex, args.ShardCount)
	}
	if args.Compact {
		profName += "-compact"
	}

	base := gc2()
	cpu0 := cpuTime()
	stopProf := startCPUProfile(args.ProfileDir, profName+"-sync")
	t0 := time.Now()
	var (
		synced   func() bool
		cached   func() int
		settled  func() bool // after a restart: every informer synced again
		mark     func()      // called before the restart, for settled
		sharded  func() (n, known int, served []string)
		stopping func()
	)
	switch name {
	case "scale-kdyn":
		cfg := args.Conn.Kdyn(Unlimited, nil)
		cfg.WrapTransport = wrap
		dc, err := kdynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		mp, err := restmapper.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		var sh *informer.Shard
		if args.ShardCount > 0 {
			if sh, err = informer.NewShard(informer.ShardByUID, informer.SplitRanges(args.ShardCount)[args.ShardIndex]); err != nil {
				return nil, err
			}
		}
		syncs := &syncsByName{n: map[string]int{}}
		f := informer.NewFactory(dc, informer.FactoryOptions{Metrics: syncs})
		want := map[schema.GroupVersionResource]bool{}
		for _, g := range gvrs {
			want[g] = true
		}
		opts := informer.InformerOptions{Shard: sh, Compact: args.Compact}
		set := informer.NewResourceSet(f, mp, informer.ResourceSetOptions{
			Keep:     func(r *discovery.Resource) bool { return want[r.GVR()] },
			Informer: opts,
			Handler: func(e informer.Event) {
				switch {
				case e.Type == watch.Added:
					adds.Add(1)
				case e.Type == watch.Modified:
					updates.Add(1)
				case e.ResourceGone:
					gone.Add(1)
				}
			},
		})
		var wg sync.WaitGroup
		wg.Go(func() { _ = f.Run(ctx) })
		wg.Go(func() { _ = set.Run(ctx) })
		stopping = func() { cancel(); wg.Wait() }
		// The set's informers, once it has them (the factory hands out the
		// same informer for the same options).
		infs := func() []*informer.Informer[*metav1.PartialObjectMetadata] {
			var out []*informer.Informer[*metav1.PartialObjectMetadata]
			for _, g := range set.Resources() {
				out = append(out, f.ForResourceMetadata(g, opts))
			}
			return out
		}
		synced = func() bool { return len(set.Resources()) == len(gvrs) && set.HasSynced() }
		cached = func() int {
			n := 0
			for _, inf := range infs() {
				n += inf.Store().Len()
			}
			return n
		}
		var before map[string]int
		settled = func() bool {
			for _, g := range gvrs {
				if syncs.get(informer.ResourceName(g)) <= before[informer.ResourceName(g)] {
					return false
				}
			}
			return true
		}
		mark = func() {
			before = map[string]int{}
			for _, g := range gvrs {
				before[informer.ResourceName(g)] = syncs.get(informer.ResourceName(g))
			}
		}
		sharded = func() (int, int, []string) {
			n, known := 0, 0
			var served []string
			for _, g := range set.Resources() {
				n++
				s, k := f.ForResourceMetadata(g, opts).ServerSharded()
				if k {
					known++
				}
				if s && k {
					served = append(served, g.Resource)
				}
			}
			return n, known, served
		}
	case "scale-clientgo":
		cfg := args.Conn.ClientGo(Unlimited, nil)
		cfg.WrapTransport = wrap
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		f := metadatainformer.NewSharedInformerFactory(mc, 0)
		var infs []cache.SharedIndexInformer
		// Every object the informers receive passes the transform, which
		// counts them: a relist is complete once every object came again
		// (unchanged objects are not redelivered to handlers).
		var received atomic.Int64
		for _, g := range gvrs {
			inf := f.ForResource(g).Informer()
			if err := inf.SetTransform(func(o any) (any, error) { received.Add(1); return o, nil }); err != nil {
				return nil, err
			}
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { adds.Add(1) },
				UpdateFunc: func(_, _ any) { updates.Add(1) },
			}); err != nil {
				return nil, err
			}
			infs = append(infs, inf)
		}
		f.Start(ctx.Done())
		stopping = func() { cancel(); f.Shutdown() }
		synced = func() bool {
			for _, inf := range infs {
				if !inf.HasSynced() {
					return false
				}
			}
			return true
		}
		cached = func() int {
			n := 0
			for _, inf := range infs {
				n += len(inf.GetStore().ListKeys())
			}
			return n
		}
		var received0 int64
		settled = func() bool { return received.Load() >= received0+int64(args.Count) }
		mark = func() { received0 = received.Load() }
		sharded = func() (int, int, []string) { return len(infs), 0, nil }
	default:
		return nil, fmt.Errorf("unknown scale child %q", name)
	}
	defer stopping()
	if !waitFor(ctx, time.Millisecond, 8*time.Minute, synced) {
		return nil, fmt.Errorf("%s did not sync", name)
	}
	n := cached()
	if !waitFor(ctx, time.Millisecond, 2*time.Minute, func() bool { return adds.Load() >= int64(n) }) {
		return nil, fmt.Errorf("%s: the handler saw %d adds of %d objects", name, adds.Load(), n)
	}
	syncDur := time.Since(t0)
	syncCPU := cpuTime() - cpu0
	stopProf()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	after := gc2()
	writeHeapProfile(args.ProfileDir, profName)
	res := scaleResult{
		Objects: n, SyncMs: ms(syncDur), SyncCPUMs: ms(syncCPU),
		HeapBytes: int64(after.HeapAlloc) - int64(base.HeapAlloc), BaseHeap: base.HeapAlloc,
		AllocMB:  float64(ms1.TotalAlloc-base.TotalAlloc) / mib,
		Requests: rec.snapshot(),
	}
	if args.ShardCount > 0 {
		// Each informer learns whether the server shards by a one-object
		// probe as it starts watching, right after its sync.
		waitFor(ctx, 10*time.Millisecond, 30*time.Second, func() bool { n, known, _ := sharded(); return n == len(gvrs) && known == n })
	}
	var served []string
	res.Informers, _, served = sharded()
	res.ServerSharded, res.ServedResources = len(served), served
	if args.ShardCount == 0 && n != args.Count {
		return nil, fmt.Errorf("%s cached %d objects, want %d", name, n, args.Count)
	}
	if args.Relist {
		mark()
		adds0, gone0 := adds.Load(), gone.Load()
		rr, err := relistPhase(ctx, cio, rec, after.HeapAlloc, args.ProfileDir, profName, settled)
		if err != nil {
			return nil, err
		}
		res.Relist = rr
		res.ReaddedDuringRelist, res.GoneDuringRelist = adds.Load()-adds0, gone.Load()-gone0
	}
	return res, nil
}
