package lib

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/disk"
	"k8s.io/client-go/discovery/cached/memory"

	"github.com/kdyn/kdyn/discovery"
	krest "github.com/kdyn/kdyn/rest"
)

type discResult struct {
	Requests  int64   `json:"requests"`
	Ms        float64 `json:"ms"`
	Groups    int     `json:"groups"`
	Resources int     `json:"resources"`
}

func kdynColdDiscovery(ctx context.Context, cn Conn) (discResult, error) {
	var c Counter
	t0 := time.Now()
	dc, err := discovery.NewForConfig(cn.Kdyn(Unlimited, &c))
	if err != nil {
		return discResult{}, err
	}
	snap, err := dc.Snapshot(ctx)
	if err != nil {
		return discResult{}, err
	}
	d := time.Since(t0)
	return discResult{Requests: c.N(), Ms: ms(d), Groups: len(snap.Groups), Resources: countSnap(snap)}, nil
}

func countSnap(s *discovery.Snapshot) int {
	n := 0
	for _, l := range s.ResourceLists() {
		n += len(l.APIResources)
	}
	return n
}

func clientGoColdDiscovery(ctx context.Context, cn Conn) (discResult, error) {
	var c Counter
	t0 := time.Now()
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cn.ClientGo(Unlimited, &c))
	if err != nil {
		return discResult{}, err
	}
	mc := memory.NewMemCacheClient(dc)
	groups, lists, err := mc.ServerGroupsAndResources()
	if err != nil {
		return discResult{}, err
	}
	d := time.Since(t0)
	n := 0
	for _, l := range lists {
		n += len(l.APIResources)
	}
	return discResult{Requests: c.N(), Ms: ms(d), Groups: len(groups), Resources: n}, nil
}

// discoveryChild is one process of the warm-start measurement: it runs
// discovery with a disk cache in args.CacheDir.
func discoveryChild(ctx context.Context, name string, args ChildArgs) (any, error) {
	var c Counter
	switch name {
	case "disc-warm-kdyn":
		t0 := time.Now()
		rc, err := krest.NewForConfig(args.Conn.Kdyn(Unlimited, &c))
		if err != nil {
			return nil, err
		}
		dc, err := discovery.New(rc, discovery.Options{CacheDir: args.CacheDir})
		if err != nil {
			return nil, err
		}
		snap, err := dc.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		return discResult{Requests: c.N(), Ms: ms(time.Since(t0)), Groups: len(snap.Groups), Resources: countSnap(snap)}, nil
	case "disc-warm-clientgo":
		t0 := time.Now()
		dc, err := disk.NewCachedDiscoveryClientForConfig(args.Conn.ClientGo(Unlimited, &c),
			filepath.Join(args.CacheDir, "discovery"), filepath.Join(args.CacheDir, "http"), 6*time.Hour)
		if err != nil {
			return nil, err
		}
		groups, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			return nil, err
		}
		n := 0
		for _, l := range lists {
			n += len(l.APIResources)
		}
		return discResult{Requests: c.N(), Ms: ms(time.Since(t0)), Groups: len(groups), Resources: n}, nil
	}
	return nil, fmt.Errorf("unknown discovery child %q", name)
}

// Discovery measures cold discovery in process and warm starts from the
// disk cache in second processes.
func (b *Bench) Discovery(ctx context.Context) (*Table, error) {
	t := &Table{Title: fmt.Sprintf("discovery (%d CRDs in %d groups + built-ins)", b.Sizes.CRDs+1, b.Sizes.CRDs+1)}
	runs := b.runs()
	var kc, cc []discResult
	for range runs {
		k, err := kdynColdDiscovery(ctx, b.Conn)
		if err != nil {
			return nil, fmt.Errorf("kdyn cold: %w", err)
		}
		c, err := clientGoColdDiscovery(ctx, b.Conn)
		if err != nil {
			return nil, fmt.Errorf("client-go cold: %w", err)
		}
		kc, cc = append(kc, k), append(cc, c)
	}
	var kw, cw []discResult
	var kFill, cFill discResult
	for _, who := range []string{"kdyn", "clientgo"} {
		dir, err := os.MkdirTemp("", "libbench-disc-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		args := ChildArgs{Conn: b.Conn, CacheDir: filepath.Join(dir, "cache")}
		var fill discResult
		if err := runChild(ctx, "disc-warm-"+who, args, &fill); err != nil {
			return nil, err
		}
		for range runs {
			var r discResult
			if err := runChild(ctx, "disc-warm-"+who, args, &r); err != nil {
				return nil, err
			}
			if who == "kdyn" {
				kw = append(kw, r)
			} else {
				cw = append(cw, r)
			}
		}
		if who == "kdyn" {
			kFill = fill
		} else {
			cFill = fill
		}
	}
	med := func(rs []discResult, f func(discResult) float64) float64 {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return median(xs)
	}
	reqs := func(r discResult) float64 { return float64(r.Requests) }
	msf := func(r discResult) float64 { return r.Ms }
	t.Add(Row{Metric: "cold: requests", Kdyn: med(kc, reqs), ClientGo: med(cc, reqs), Target: "kdyn = 2", Check: kdynAtMost(2)})
	t.Add(Row{Metric: "cold: time", Unit: "ms", Kdyn: med(kc, msf), ClientGo: med(cc, msf), Target: "—"})
	t.Add(Row{Metric: "warm start (2nd process): requests", Kdyn: med(kw, reqs), ClientGo: med(cw, reqs), Target: "kdyn = 0", Check: kdynAtMost(0)})
	t.Add(Row{Metric: "warm start (2nd process): time", Unit: "ms", Kdyn: med(kw, msf), ClientGo: med(cw, msf), Target: "—"})
	t.Add(Row{Metric: "first process filling the disk cache: requests", Kdyn: float64(kFill.Requests), ClientGo: float64(cFill.Requests), Target: "—"})
	t.Note("cold: kdyn discovery.NewForConfig + Snapshot vs client-go memory.NewMemCacheClient(NewDiscoveryClientForConfig) + ServerGroupsAndResources, fresh client (new TLS connection) each run, %d runs, in process; requests counted by a WrapTransport on both", runs)
	t.Note("warm: kdyn discovery.New(rc, Options{CacheDir}) + Snapshot vs client-go disk.NewCachedDiscoveryClientForConfig (TTL 6 h) + ServerGroupsAndResources, each a fresh process after one process filled the cache; time measured inside the child from config to result (process start excluded); %d runs", runs)
	t.Note("both: client-side rate limit off; both saw the same catalogue: kdyn %d groups / %d resources, client-go %d groups / %d resources",
		kc[0].Groups, kc[0].Resources, cc[0].Groups, cc[0].Resources)
	for _, p := range []struct {
		n  string
		rs []discResult
	}{{"kdyn cold", kc}, {"client-go cold", cc}, {"kdyn warm", kw}, {"client-go warm", cw}} {
		t.RawLine("%-15s ms=%s requests=%s", p.n, fmtSample(vals(p.rs, msf), 2), fmtSample(vals(p.rs, reqs), 0))
	}
	_ = math.NaN
	return t, nil
}

func vals[T any](rs []T, f func(T) float64) []float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return xs
}
