package lib

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	cgdynamic "k8s.io/client-go/dynamic"

	"github.com/kdyn/kdyn/dynamic"
)

// resIface is the part of a dynamic ResourceInterface the harness uses;
// kdyn's and client-go's both satisfy it (same method set by contract).
type resIface interface {
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error)
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, options metav1.PatchOptions, subresources ...string) (*unstructured.Unstructured, error)
}

// contender is one library's dynamic client for a namespaced resource.
type contender struct {
	name string
	ri   func(gvr schema.GroupVersionResource, ns string) resIface
}

func dynamicContenders(cn Conn, l Limits) ([2]contender, error) {
	kc, err := dynamic.NewForConfig(cn.Kdyn(l, nil))
	if err != nil {
		return [2]contender{}, err
	}
	cc, err := cgdynamic.NewForConfig(cn.ClientGo(l, nil))
	if err != nil {
		return [2]contender{}, err
	}
	return [2]contender{
		{"kdyn", func(g schema.GroupVersionResource, ns string) resIface { return kc.Resource(g).Namespace(ns) }},
		{"client-go", func(g schema.GroupVersionResource, ns string) resIface { return cc.Resource(g).Namespace(ns) }},
	}, nil
}

type allocSample struct {
	d              time.Duration
	mallocs, bytes uint64
	n              int
}

// measure runs fn after a GC and returns its time and allocations.
func measure(fn func() (int, error)) (allocSample, error) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	n, err := fn()
	d := time.Since(t0)
	runtime.ReadMemStats(&m1)
	return allocSample{d: d, mallocs: m1.Mallocs - m0.Mallocs, bytes: m1.TotalAlloc - m0.TotalAlloc, n: n}, err
}

func listAll(ctx context.Context, ri resIface, limit int64) (int, error) {
	if limit == 0 {
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		runtime.KeepAlive(l)
		return len(l.Items), nil
	}
	var items []unstructured.Unstructured
	opts := metav1.ListOptions{Limit: limit}
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			return 0, err
		}
		items = append(items, l.Items...)
		if l.GetContinue() == "" {
			break
		}
		opts.Continue = l.GetContinue()
	}
	runtime.KeepAlive(items)
	return len(items), nil
}

// Dynamic measures list-and-decode, Get latency and Create throughput.
func (b *Bench) Dynamic(ctx context.Context) (*Table, error) {
	t := &Table{Title: "dynamic (list-and-decode, Get, Create)"}
	cs, err := dynamicContenders(b.Conn, Unlimited)
	if err != nil {
		return nil, err
	}
	runs := b.runs()
	// Warm each client's connection.
	for _, c := range cs {
		if _, err := c.ri(GVRConfigMaps, NSConfigMaps).Get(ctx, "cm-00000", metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
	type listCase struct {
		label string
		gvr   schema.GroupVersionResource
		ns    string
		limit int64
	}
	n := b.Sizes.Objects
	cases := []listCase{
		{fmt.Sprintf("list %d ConfigMaps, one unpaged List", n), GVRConfigMaps, NSConfigMaps, 0},
		{fmt.Sprintf("list %d ConfigMaps, paged 500", n), GVRConfigMaps, NSConfigMaps, 500},
		{fmt.Sprintf("list %d widgets (CR), one unpaged List", n), GVRWidgets, NSWidgets, 0},
		{fmt.Sprintf("list %d widgets (CR), paged 500", n), GVRWidgets, NSWidgets, 500},
	}
	for _, lc := range cases {
		var samples [2][]allocSample
		for range runs {
			for i, c := range cs {
				ri := c.ri(lc.gvr, lc.ns)
				s, err := measure(func() (int, error) { return listAll(ctx, ri, lc.limit) })
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", c.name, lc.label, err)
				}
				if s.n != n {
					return nil, fmt.Errorf("%s %s: %d items, want %d", c.name, lc.label, s.n, n)
				}
				samples[i] = append(samples[i], s)
			}
		}
		f := func(i int, g func(allocSample) float64) float64 { return median(vals(samples[i], g)) }
		tms := func(s allocSample) float64 { return ms(s.d) }
		al := func(s allocSample) float64 { return float64(s.mallocs) / float64(s.n) }
		by := func(s allocSample) float64 { return float64(s.bytes) / float64(s.n) }
		t.Add(Row{Metric: lc.label + ": wall time", Unit: "ms", Kdyn: f(0, tms), ClientGo: f(1, tms), Target: "≤ 0.8×", Check: ratioAtMost(0.8)})
		t.Add(Row{Metric: lc.label + ": allocations", Unit: "allocs/obj", Kdyn: f(0, al), ClientGo: f(1, al), Target: "≤ 0.8×", Check: ratioAtMost(0.8)})
		t.Add(Row{Metric: lc.label + ": bytes allocated", Unit: "B/obj", Kdyn: f(0, by), ClientGo: f(1, by), Target: "—"})
		for i, c := range cs {
			t.RawLine("%s | %-9s ms=%s allocs/obj=%s B/obj=%s", lc.label, c.name, fmtSample(vals(samples[i], tms), 1), fmtSample(vals(samples[i], al), 1), fmtSample(vals(samples[i], by), 0))
		}
	}

	// Get loop.
	gets := 2000
	if b.Opts.Quick {
		gets = 500
	}
	var getUS [2][]float64
	for range runs {
		for i, c := range cs {
			ri := c.ri(GVRConfigMaps, NSConfigMaps)
			r := rand.New(rand.NewPCG(1, 2))
			t0 := time.Now()
			for range gets {
				if _, err := ri.Get(ctx, fmt.Sprintf("cm-%05d", r.IntN(n)), metav1.GetOptions{}); err != nil {
					return nil, fmt.Errorf("%s get: %w", c.name, err)
				}
			}
			getUS[i] = append(getUS[i], float64(time.Since(t0).Microseconds())/float64(gets))
		}
	}
	t.Add(Row{Metric: fmt.Sprintf("Get one ConfigMap (%d sequential Gets)", gets), Unit: "µs/Get", Kdyn: median(getUS[0]), ClientGo: median(getUS[1]),
		Target: "≤ 1.1× (no slower; server-bound)", Check: ratioAtMost(1.1)})
	t.RawLine("get µs/Get: kdyn %s client-go %s", fmtSample(getUS[0], 0), fmtSample(getUS[1], 0))

	// Create throughput, 8 workers.
	const workers = 8
	creates := 2000
	if b.Opts.Quick {
		creates = 400
	}
	var cps [2][]float64
	for run := range runs {
		for i, c := range cs {
			ri := c.ri(GVRConfigMaps, NSCreate)
			prefix := fmt.Sprintf("%s-%d", c.name, run)
			t0 := time.Now()
			if err := parallel(ctx, creates, workers, func(ctx context.Context, j int) error {
				obj := ConfigMap(NSCreate, j)
				obj.SetName(fmt.Sprintf("%s-%05d", prefix, j))
				_, err := ri.Create(ctx, obj, metav1.CreateOptions{})
				return err
			}); err != nil {
				return nil, fmt.Errorf("%s create: %w", c.name, err)
			}
			cps[i] = append(cps[i], float64(creates)/time.Since(t0).Seconds())
		}
	}
	t.Add(Row{Metric: fmt.Sprintf("Create throughput (%d workers, %d creates)", workers, creates), Unit: "obj/s", Kdyn: median(cps[0]), ClientGo: median(cps[1]),
		Target: "≥ 0.9× (no slower; server-bound)", Check: ratioAtLeast(0.9)})
	t.RawLine("create obj/s: kdyn %s client-go %s", fmtSample(cps[0], 0), fmtSample(cps[1], 0))
	t.Note("kdyn dynamic.NewForConfig vs client-go dynamic.NewForConfig, %s; one client each, connection warmed first", Unlimited)
	t.Note("lists: the same harness code for both; \"unpaged\" = one List without limit; \"paged 500\" = List with limit 500 following continue tokens, items appended into one slice; allocations = runtime.MemStats Mallocs/TotalAlloc delta over the whole call (HTTP read + decode), after a GC; %d runs alternating kdyn/client-go, median", runs)
	t.Note("Get: %d Gets of random names (same sequence for both), sequential; Create: %d ConfigMaps like the seeded ones, %d workers; %d runs, median", gets, creates, workers, runs)
	return t, nil
}

var createOpts = metav1.CreateOptions{}
