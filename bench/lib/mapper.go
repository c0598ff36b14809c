package lib

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	cgrestmapper "k8s.io/client-go/restmapper"

	"github.com/kdyn/kdyn/restmapper"
)

// Mappers returns a warmed kdyn and client-go REST mapper for cn.
func Mappers(cn Conn) (kdyn, clientGo meta.RESTMapper, err error) {
	km, err := restmapper.NewForConfig(cn.Kdyn(Unlimited, nil))
	if err != nil {
		return nil, nil, err
	}
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cn.ClientGo(Unlimited, nil))
	if err != nil {
		return nil, nil, err
	}
	cm := cgrestmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return km, cm, nil
}

// BenchRESTMapping benchmarks a hot RESTMapping of gk.
func BenchRESTMapping(b *testing.B, m meta.RESTMapper, gk schema.GroupKind) {
	if _, err := m.RESTMapping(gk); err != nil { // warm
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.RESTMapping(gk); err != nil {
			b.Fatal(err)
		}
	}
}

// Mapper measures a hot RESTMapping for known kinds.
func (b *Bench) Mapper(ctx context.Context) (*Table, error) {
	t := &Table{Title: "mapper (hot RESTMapping of a known kind, in process, testing.Benchmark)"}
	km, cm, err := Mappers(b.Conn)
	if err != nil {
		return nil, err
	}
	kinds := []schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Group: WidgetGroup, Kind: "Widget"}}
	for _, gk := range kinds {
		var kns, cns, kal, cal []float64
		for range 3 {
			var ferr error
			run := func(m meta.RESTMapper) testing.BenchmarkResult {
				return testing.Benchmark(func(tb *testing.B) {
					if _, err := m.RESTMapping(gk); err != nil {
						ferr = err
						return
					}
					BenchRESTMapping(tb, m, gk)
				})
			}
			kr, cr := run(km), run(cm)
			if ferr != nil {
				return nil, fmt.Errorf("RESTMapping %s: %w", gk, ferr)
			}
			kns, cns = append(kns, nsPerOp(kr)), append(cns, nsPerOp(cr))
			kal, cal = append(kal, float64(kr.AllocsPerOp())), append(cal, float64(cr.AllocsPerOp()))
			t.RawLine("%s: kdyn %s | client-go %s", gk, kr.String()+kr.MemString(), cr.String()+cr.MemString())
		}
		k, c := median(kns), median(cns)
		t.Add(Row{Metric: "RESTMapping " + gk.String() + ": time", Unit: "ns/op", Kdyn: k, ClientGo: c,
			Target: "kdyn < 1 µs and ≤ 0.2× (≥ 5× faster)", Check: both(kdynAtMost(999), ratioAtMost(0.2))})
		t.Add(Row{Metric: "RESTMapping " + gk.String() + ": allocations", Unit: "allocs/op", Kdyn: median(kal), ClientGo: median(cal),
			Target: "kdyn = 0", Check: kdynAtMost(0)})
	}
	t.Note("kdyn restmapper.NewForConfig vs client-go restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(...)), both warmed by one lookup; each figure is the median of 3 testing.Benchmark runs (≈1 s each)")
	return t, nil
}

func nsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}
