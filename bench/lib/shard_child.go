package lib

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/controller"
	kdynamic "github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/shard"
)

// Timings of the shard members: short, so that a killed member's ranges
// are taken over within seconds (as the integration tests use them).
const (
	shardLeaseDuration = 3 * time.Second
	shardRenewDeadline = 2 * time.Second
	shardRetryPeriod   = 300 * time.Millisecond
)

// byteCounter counts the response body bytes a client reads, split into
// the Lease traffic of ring membership and everything else (the
// informer's lists and watches), and the requests of each.
type byteCounter struct {
	informer, leases       atomic.Int64
	informerReq, leasesReq atomic.Int64
}

// wrap is a rest.Config WrapTransport.
func (b *byteCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n, req := &b.informer, &b.informerReq
		if strings.Contains(r.URL.Path, "/leases") {
			n, req = &b.leases, &b.leasesReq
		}
		req.Add(1)
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.Body != nil {
			resp.Body = &countingBody{ReadCloser: resp.Body, n: n}
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingBody adds the bytes read from a response body to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	k, err := c.ReadCloser.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// syncMetrics is an informer.Metrics that records when syncs complete,
// and the shard's selector at each.
type syncMetrics struct {
	syncs   atomic.Int64
	shard   *informer.Shard
	syncSel atomic.Pointer[string] // the shard's selector as of the last completed sync
}

func (m *syncMetrics) ListStarted(string, bool)      {}
func (m *syncMetrics) WatchStarted(string)           {}
func (m *syncMetrics) Event(string, watch.EventType) {}
func (m *syncMetrics) Cached(string, int, int64)     {}
func (m *syncMetrics) Synced(string, time.Time) {
	m.syncs.Add(1)
	if m.shard != nil {
		sel := m.shard.Selector()
		m.syncSel.Store(&sel)
	}
}

// syncSelector returns the shard's selector as of the last completed
// sync ("" before the first).
func (m *syncMetrics) syncSelector() string {
	if p := m.syncSel.Load(); p != nil {
		return *p
	}
	return ""
}

func (m *syncMetrics) ShardServed(string, bool)        {}
func (m *syncMetrics) Delivered(string, time.Duration) {}

// shardResult is what a shard child reports once every key of its
// initial list has been reconciled.
type shardResult struct {
	Identity string  `json:"identity"`
	Share    float64 `json:"share"`   // of the hash space processed
	Objects  int     `json:"objects"` // cached once synced
	// HeapBytes is the live heap (HeapAlloc after two GCs) once synced
	// and every add delivered, minus the same before any client existed.
	HeapBytes int64   `json:"heapBytes"`
	BaseHeap  uint64  `json:"baseHeap"`
	SyncMs    float64 `json:"syncMs"` // GO → informer synced
	SyncCPUMs float64 `json:"syncCpuMs"`
	// CPUMs is the process's CPU time (user+sys) from GO until every key
	// of the initial list is reconciled: list, watch, cache, queue,
	// reconciles and, for members, Lease renewals.
	CPUMs float64 `json:"cpuMs"`
	// InformerBytes are response body bytes of the informer's requests
	// from GO until synced; LeaseBytes of ring membership from the start
	// of the process until every key was reconciled.
	InformerBytes int64 `json:"informerBytes"`
	InformerReqs  int64 `json:"informerReqs"`
	LeaseBytes    int64 `json:"leaseBytes"`
	LeaseReqs     int64 `json:"leaseReqs"`
	Reconciled    int64 `json:"reconciled"`
	// Unix ns: GO received, first reconcile started, last one ended.
	GoAt       int64 `json:"goAt"`
	FirstStart int64 `json:"firstStart"`
	LastEnd    int64 `json:"lastEnd"`
	// ServerSharded and ShardKnown are Informer.ServerSharded's answer.
	ServerSharded bool `json:"serverSharded"`
	ShardKnown    bool `json:"shardKnown"`
}

// memberState is a member's state, sent whenever it changes after its
// initial list is reconciled (the kill phase).
type memberState struct {
	Identity   string               `json:"identity"`
	At         int64                `json:"at"` // Unix ns
	Processing []informer.HashRange `json:"processing"`
	Target     []informer.HashRange `json:"target"`
	// Selector is the shard's selector now; SyncSelector was its selector
	// as of the informer's last completed sync: equal once the informer
	// has synced on its current ranges.
	Selector     string `json:"selector"`
	SyncSelector string `json:"syncSelector"`
	Cached       int    `json:"cached"`
	Reconciled   int64  `json:"reconciled"`
	Idle         bool   `json:"idle"` // the queue is empty, nothing in flight
}

func (s memberState) same(o memberState) bool {
	return slices.Equal(s.Processing, o.Processing) && slices.Equal(s.Target, o.Target) &&
		s.Selector == o.Selector && s.SyncSelector == o.SyncSelector && s.Cached == o.Cached && s.Reconciled == o.Reconciled && s.Idle == o.Idle
}

// atomicMax raises v to x.
func atomicMax(v *atomic.Int64, x int64) {
	for {
		cur := v.Load()
		if x <= cur || v.CompareAndSwap(cur, x) {
			return
		}
	}
}

// shardChild is one controller process of the shard scenario:
// "shard-single" caches and reconciles every ConfigMap of the namespace;
// "shard-member" is a ring member that caches and reconciles its share.
// Both wait for GO after they are ready (a member: once the ring has
// settled on its final assignment), then start the informer and the
// controller, and report once every key of the initial list has been
// reconciled. A member then sends its state whenever it changes, until
// the parent says STOP.
func shardChild(ctx context.Context, name string, args ChildArgs, cio *childIO) (any, error) {
	sharded := name == "shard-member"
	if !sharded && name != "shard-single" {
		return nil, fmt.Errorf("unknown shard child %q", name)
	}
	base := gc2()
	counter := &byteCounter{}
	cfg := args.Conn.Kdyn(Unlimited, nil)
	cfg.WrapTransport = counter.wrap
	dc, err := kdynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var sh *informer.Shard
	if sharded {
		if sh, err = informer.NewShard(informer.ShardByUID); err != nil {
			return nil, err
		}
	}
	sm := &syncMetrics{shard: sh}
	f := informer.NewFactory(dc, informer.FactoryOptions{Namespace: args.Namespace, Metrics: sm})
	inf := f.ForResource(GVRConfigMaps, informer.InformerOptions{Shard: sh})

	cost := time.Duration(args.ReconcileMs * float64(time.Millisecond))
	var reconciled, firstStart, lastEnd atomic.Int64
	opts := controller.Options[string]{Workers: args.Workers}
	if sharded {
		opts.Owns = func(key string) bool {
			obj, ok := inf.Store().Get(key)
			return ok && sh.Contains(obj)
		}
	}
	ctrl, err := controller.New("bench", func(ctx context.Context, key string) (controller.Result, error) {
		firstStart.CompareAndSwap(0, time.Now().UnixNano())
		// A reconcile reads its object from the cache, then does work of
		// a fixed duration (a call to another system, say).
		if _, ok := inf.Store().Get(key); ok {
			time.Sleep(cost)
		}
		reconciled.Add(1)
		atomicMax(&lastEnd, time.Now().UnixNano())
		return controller.Result{}, nil
	}, opts)
	if err != nil {
		return nil, err
	}
	var adds atomic.Int64
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(o *unstructured.Unstructured, initial bool) {
			adds.Add(1)
			if initial {
				ctrl.AddInitial(informer.Key(o))
			} else {
				ctrl.Add(informer.Key(o))
			}
		},
		UpdateFunc: func(_, o *unstructured.Unstructured) { ctrl.Add(informer.Key(o)) },
	}); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var member *shard.Member
	memberDone := make(chan struct{})
	if sharded {
		member, err = shard.New(dc, shard.Options{
			Namespace: args.LeaseNamespace, Ring: args.Ring, Identity: args.Identity,
			LeaseDuration: shardLeaseDuration, RenewDeadline: shardRenewDeadline, RetryPeriod: shardRetryPeriod,
			Shard: sh, Drainers: []shard.Drainer{ctrl},
		})
		if err != nil {
			return nil, err
		}
		go func() {
			defer close(memberDone)
			_ = member.Run(ctx)
		}()
		// Wait until the ring has settled on every member: this member
		// processes exactly what the assignment of Members members gives
		// it. The informer starts only then, so no member lists objects
		// it holds only until the others join.
		want := 1 / float64(args.Members)
		if !waitFor(ctx, 10*time.Millisecond, 2*time.Minute, func() bool {
			p := member.Processing()
			return len(p) > 0 && slices.Equal(p, member.Target()) && math.Abs(informer.RangesSize(p)-want) < 0.01
		}) {
			return nil, fmt.Errorf("%s: the ring did not settle: processing %s, target %s", args.Identity, informer.FormatRanges(member.Processing()), informer.FormatRanges(member.Target()))
		}
	} else {
		close(memberDone)
	}
	cio.send("READY", map[string]any{"phase": "ready"})
	if err := cio.wait("GO"); err != nil {
		return nil, err
	}

	res := shardResult{Identity: args.Identity, Share: 1, BaseHeap: base.HeapAlloc}
	if sharded {
		res.Share = informer.RangesSize(member.Processing())
	}
	profName := name + "-" + args.Identity
	stopProf := startCPUProfile(args.ProfileDir, profName)
	goAt := time.Now()
	res.GoAt = goAt.UnixNano()
	cpu0 := cpuTime()
	bytes0, reqs0 := counter.informer.Load(), counter.informerReq.Load()
	done := make(chan struct{}, 2)
	go func() { _ = f.Run(ctx); done <- struct{}{} }()
	go func() { _ = ctrl.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-memberDone; <-done; <-done }()

	if !waitFor(ctx, time.Millisecond, 5*time.Minute, inf.HasSynced) {
		return nil, fmt.Errorf("%s: the informer did not sync: %v", name, inf.LastError())
	}
	res.SyncMs = ms(time.Since(goAt))
	res.SyncCPUMs = ms(cpuTime() - cpu0)
	res.InformerBytes = counter.informer.Load() - bytes0
	res.InformerReqs = counter.informerReq.Load() - reqs0
	res.Objects = inf.Store().Len()
	if !waitFor(ctx, time.Millisecond, time.Minute, func() bool { return adds.Load() >= int64(res.Objects) }) {
		return nil, fmt.Errorf("%s: the handler saw %d adds of %d objects", name, adds.Load(), res.Objects)
	}
	after := gc2()
	res.HeapBytes = int64(after.HeapAlloc) - int64(base.HeapAlloc)
	writeHeapProfile(args.ProfileDir, profName)
	if sharded {
		// A streaming list's bookmark does not say whether the server
		// sharded it; the informer probes with a one-object list as it
		// starts watching, right after the sync.
		waitFor(ctx, 5*time.Millisecond, 30*time.Second, func() bool { _, known := inf.ServerSharded(); return known })
		res.ServerSharded, res.ShardKnown = inf.ServerSharded()
	}
	if !waitFor(ctx, 10*time.Millisecond, 10*time.Minute, func() bool {
		st := ctrl.Queue().Stats()
		return reconciled.Load() >= int64(res.Objects) && st.Depth == 0 && st.Processing == 0
	}) {
		return nil, fmt.Errorf("%s: reconciled %d of %d keys", name, reconciled.Load(), res.Objects)
	}
	res.CPUMs = ms(cpuTime() - cpu0)
	stopProf()
	res.Reconciled = reconciled.Load()
	res.FirstStart, res.LastEnd = firstStart.Load(), lastEnd.Load()
	res.LeaseBytes, res.LeaseReqs = counter.leases.Load(), counter.leasesReq.Load()
	if !sharded {
		return res, nil
	}

	// The kill phase: report the state whenever it changes, until STOP.
	cio.send("READY", res)
	stop := make(chan error, 1)
	go func() { stop <- cio.wait("STOP") }()
	var last memberState
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		st := ctrl.Queue().Stats()
		s := memberState{
			Identity: args.Identity, At: time.Now().UnixNano(),
			Processing: member.Processing(), Target: member.Target(),
			Selector: sh.Selector(), SyncSelector: sm.syncSelector(),
			Cached: inf.Store().Len(), Reconciled: reconciled.Load(),
			Idle: st.Depth == 0 && st.Processing == 0,
		}
		if last.At == 0 || !s.same(last) {
			cio.send("READY", s)
			last = s
		}
		select {
		case err := <-stop:
			if err != nil {
				return nil, err
			}
			return res, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
