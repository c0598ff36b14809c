package lib

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

type loadResult struct {
	Ops        int64            `json:"ops"`
	Seconds    float64          `json:"seconds"`
	OpsPerSec  float64          `json:"opsPerSec"`
	ByOp       map[string]int64 `json:"byOp"`
	P50Ms      float64          `json:"p50Ms"`
	P99Ms      float64          `json:"p99Ms"`
	OpP50Ms    map[string]float64
	OpP99Ms    map[string]float64
	Errors     map[string]int64 `json:"errors"`
	GoBefore   int              `json:"goBefore"`
	GoPeak     int              `json:"goPeak"`
	GoAfter    int              `json:"goAfter"`    // right after the workers stopped
	GoSettled  int              `json:"goSettled"`  // 3 s later
	CPUSeconds float64          `json:"cpuSeconds"` // process CPU during the load
}

func errKind(err error) string {
	var ne net.Error
	switch {
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsNotFound(err):
		return "notfound"
	case apierrors.IsTooManyRequests(err):
		return "toomanyrequests"
	case apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err):
		return "servertimeout"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.As(err, &ne):
		return "network"
	case apierrors.ReasonForError(err) != metav1.StatusReasonUnknown:
		return "api:" + string(apierrors.ReasonForError(err))
	}
	return "other"
}

// loadChild runs the load of one library in this fresh process.
func loadChild(ctx context.Context, name string, args ChildArgs) (any, error) {
	l := Limits{QPS: args.QPS, Burst: args.Burst}
	goBefore := runtime.NumGoroutine()
	var ri resIface
	cs, err := dynamicContenders(args.Conn, l)
	if err != nil {
		return nil, err
	}
	switch name {
	case "load-kdyn":
		ri = cs[0].ri(GVRConfigMaps, args.Namespace)
	case "load-clientgo":
		ri = cs[1].ri(GVRConfigMaps, args.Namespace)
	default:
		return nil, fmt.Errorf("unknown load child %q", name)
	}
	ops := []string{"get", "update", "patch"}
	type wstate struct {
		lat   map[string][]float64
		count map[string]int64
		errs  map[string]int64
	}
	states := make([]*wstate, args.Workers)
	var peak atomic.Int64
	stopPeak := make(chan struct{})
	go func() {
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stopPeak:
				return
			case <-tk.C:
			}
		}
	}()
	cpu0 := cpuTime()
	t0 := time.Now()
	deadline := t0.Add(time.Duration(args.Seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for w := range args.Workers {
		st := &wstate{lat: map[string][]float64{}, count: map[string]int64{}, errs: map[string]int64{}}
		states[w] = st
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 5))
			seen := map[string]*unstructured.Unstructured{}
			for time.Now().Before(deadline) && ctx.Err() == nil {
				name := fmt.Sprintf("cm-%05d", r.IntN(args.Count))
				op := ops[r.IntN(len(ops))]
				if op == "update" && seen[name] == nil {
					op = "get" // need an object to update first
				}
				s := time.Now()
				var obj *unstructured.Unstructured
				var err error
				switch op {
				case "get":
					obj, err = ri.Get(ctx, name, metav1.GetOptions{})
				case "update":
					u := seen[name].DeepCopy()
					unstructured.SetNestedField(u.Object, strconv.FormatInt(s.UnixNano(), 10), "data", "updated")
					obj, err = ri.Update(ctx, u, metav1.UpdateOptions{})
				case "patch":
					obj, err = ri.Patch(ctx, name, types.MergePatchType, []byte(`{"data":{"patched":"`+strconv.FormatInt(s.UnixNano(), 10)+`"}}`), metav1.PatchOptions{})
				}
				st.lat[op] = append(st.lat[op], ms(time.Since(s)))
				st.count[op]++
				if err != nil {
					st.errs[errKind(err)]++
					if op == "update" {
						delete(seen, name) // stale: get it again
					}
					continue
				}
				seen[name] = obj
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	cpu := cpuTime() - cpu0
	close(stopPeak)
	res := loadResult{ByOp: map[string]int64{}, Errors: map[string]int64{}, OpP50Ms: map[string]float64{}, OpP99Ms: map[string]float64{},
		Seconds: el.Seconds(), GoBefore: goBefore, GoAfter: runtime.NumGoroutine(), CPUSeconds: cpu.Seconds()}
	var all []float64
	byOp := map[string][]float64{}
	for _, st := range states {
		for op, n := range st.count {
			res.ByOp[op] += n
			res.Ops += n
		}
		for k, n := range st.errs {
			res.Errors[k] += n
		}
		for op, l := range st.lat {
			all = append(all, l...)
			byOp[op] = append(byOp[op], l...)
		}
	}
	sort.Float64s(all)
	res.P50Ms, res.P99Ms = percentile(all, 50), percentile(all, 99)
	for op, l := range byOp {
		sort.Float64s(l)
		res.OpP50Ms[op], res.OpP99Ms[op] = percentile(l, 50), percentile(l, 99)
	}
	res.OpsPerSec = float64(res.Ops) / el.Seconds()
	res.GoPeak = int(peak.Load())
	time.Sleep(3 * time.Second)
	res.GoSettled = runtime.NumGoroutine()
	runtime.KeepAlive(ri)
	return res, nil
}

var loadLimits = Limits{QPS: 200, Burst: 400}

// Load runs the mixed Get/Update/Patch load, each library in its own process.
func (b *Bench) Load(ctx context.Context) (*Table, error) {
	secs := 60.0
	if b.Opts.Quick {
		secs = 30
	}
	const workers = 16
	t := &Table{Title: fmt.Sprintf("load (%d goroutines, Get/Update/Patch on %d ConfigMaps for %.0f s, one shared client, %s)", workers, LoadObjects, secs, loadLimits)}
	var rs [2]loadResult
	for i, who := range []string{"kdyn", "clientgo"} {
		b.logf("load: %s for %.0f s", who, secs)
		args := ChildArgs{Conn: b.Conn, Namespace: NSLoad, Count: LoadObjects, Seconds: secs, Workers: workers, QPS: loadLimits.QPS, Burst: loadLimits.Burst}
		if err := runChild(ctx, "load-"+who, args, &rs[i]); err != nil {
			return nil, err
		}
	}
	k, c := rs[0], rs[1]
	unexpected := func(r loadResult) float64 {
		n := int64(0)
		for kind, v := range r.Errors {
			if kind != "conflict" {
				n += v
			}
		}
		return float64(n)
	}
	t.Add(Row{Metric: "throughput", Unit: "ops/s", Kdyn: k.OpsPerSec, ClientGo: c.OpsPerSec, Target: "equal within noise (0.95–1.05×)",
		Check: func(r Row) bool { q := r.Ratio(); return q >= 0.95 && q <= 1.05 }})
	t.Add(Row{Metric: "latency p50 (incl. rate-limiter wait)", Unit: "ms", Kdyn: k.P50Ms, ClientGo: c.P50Ms, Target: "—"})
	t.Add(Row{Metric: "latency p99", Unit: "ms", Kdyn: k.P99Ms, ClientGo: c.P99Ms, Target: "—"})
	for _, op := range []string{"get", "update", "patch"} {
		t.Add(Row{Metric: op + " latency p50 / p99", Unit: "ms", Kdyn: k.OpP50Ms[op], ClientGo: c.OpP50Ms[op], Target: "—",
			Note: fmt.Sprintf("p99 kdyn %.1f, client-go %.1f", k.OpP99Ms[op], c.OpP99Ms[op])})
	}
	t.Add(Row{Metric: "conflicts (expected)", Kdyn: float64(k.Errors["conflict"]), ClientGo: float64(c.Errors["conflict"]), Target: "—"})
	t.Add(Row{Metric: "unexpected errors", Kdyn: unexpected(k), ClientGo: unexpected(c), Target: "kdyn = 0", Check: kdynAtMost(0)})
	t.Add(Row{Metric: "goroutine growth (3 s after the load − before the client)", Kdyn: float64(k.GoSettled - k.GoBefore), ClientGo: float64(c.GoSettled - c.GoBefore),
		Target: "kdyn ≤ 4 (connection goroutines)", Check: kdynAtMost(4)})
	t.Add(Row{Metric: "process CPU during the load", Unit: "s", Kdyn: k.CPUSeconds, ClientGo: c.CPUSeconds, Target: "—"})
	for i, who := range []string{"kdyn", "client-go"} {
		r := rs[i]
		t.RawLine("%-9s ops=%d in %.1fs (%.1f ops/s) by op %v; errors %v; goroutines before %d, peak %d, after %d, settled %d; CPU %.1fs",
			who, r.Ops, r.Seconds, r.OpsPerSec, r.ByOp, r.Errors, r.GoBefore, r.GoPeak, r.GoAfter, r.GoSettled, r.CPUSeconds)
	}
	t.Note("each library in its own child process, one after the other, on the same objects; ops chosen at random (update uses the last object this goroutine saw, so conflicts are expected; an update without a previous object becomes a get); latency includes the client-side rate limiter's wait")
	return t, nil
}
