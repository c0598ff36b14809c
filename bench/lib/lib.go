package lib

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

// Scenarios in run order: what "all" runs.
var Scenarios = []string{"discovery", "mapper", "dynamic", "informer", "footprint", "controller", "load"}

// SpecialScenarios run only when named, never as part of "all" (nor of
// make test): each starts a control plane of its own and seeds it with
// what it alone uses. shard compares one unsharded controller with four
// sharded members over 40,000 ConfigMaps, and scale measures metadata-only
// caches at 10k, 50k and 250k objects, both with the ShardedListAndWatch
// feature gate on; gc compares examples/gc with the same collector on
// controller-runtime over 15,000 objects (collectors that watch every
// resource would also watch the data the other scenarios seed); crcache
// runs crcache/examples/secretsync on controller-runtime's cache and on
// crcache at 10k and 100k objects.
var SpecialScenarios = []string{"shard", "scale", "gc", "crcache"}

// shardGate turns on the server-side sharded list and watch (KEP-5866).
const shardGate = "--feature-gates=ShardedListAndWatch=true"

// Options configure Run.
type Options struct {
	Scenario string // "all", a comma list of Scenarios, or one of SpecialScenarios
	Quick    bool
	Runs     int // timing repetitions (median reported); 0 means 5 (3 with Quick; gc: 2)
	// ProfileDir, when set, receives CPU and heap profiles of the children.
	ProfileDir string
	// InformerParts limits the informer scenario to a comma list of sync,
	// relist, watch ("" runs all three).
	InformerParts string
	// InformerContenders limits the informer scenario to a comma list of
	// contenders ("" runs all), for head-to-head runs of two of them.
	InformerContenders string
	// ScaleSizes replaces the object counts of the scale scenario
	// (ScaleSizes, or with Quick 1,000 and 5,000) or of the crcache
	// scenario (CRCacheSizes), for a run at one size.
	ScaleSizes []int
	Out        io.Writer
}

// contenders returns the informer contenders to run, in their order.
func (o Options) contenders() []string {
	if o.InformerContenders == "" {
		return informerContenders
	}
	var out []string
	for _, c := range informerContenders {
		if slices.Contains(strings.Split(o.InformerContenders, ","), c) {
			out = append(out, c)
		}
	}
	return out
}

// part reports whether the informer scenario should run part p.
func (o Options) part(p string) bool {
	return o.InformerParts == "" || slices.Contains(strings.Split(o.InformerParts, ","), p)
}

// Bench is one run: the control plane, the connection and the sizes.
type Bench struct {
	Opts  Options
	Env   *testenv.Env
	Conn  Conn
	Sizes Sizes
	start time.Time
}

func (b *Bench) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, a...))
}

func (b *Bench) runs() int {
	if b.Opts.Runs > 0 {
		return b.Opts.Runs
	}
	if b.Opts.Quick {
		return 3
	}
	return 5
}

// sizes returns the object counts of a scenario that runs at several:
// Opts.ScaleSizes when set, else quick with Opts.Quick, else def.
func (b *Bench) sizes(def, quick []int) []int {
	switch {
	case len(b.Opts.ScaleSizes) > 0:
		return b.Opts.ScaleSizes
	case b.Opts.Quick:
		return quick
	}
	return def
}

// Run starts a control plane, seeds it, runs the scenarios and prints one
// table per scenario.
func Run(ctx context.Context, opts Options) error {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	want := Scenarios
	if opts.Scenario != "" && opts.Scenario != "all" {
		want = nil
		for _, s := range strings.Split(opts.Scenario, ",") {
			if !slices.Contains(Scenarios, s) && !slices.Contains(SpecialScenarios, s) {
				return fmt.Errorf("unknown scenario %q (want all, a comma list of %s, or one of %s alone)", s, strings.Join(Scenarios, ", "), strings.Join(SpecialScenarios, ", "))
			}
			want = append(want, s)
		}
	}
	b := &Bench{Opts: opts, start: time.Now(), Sizes: Sizes{Objects: 10000, CRDs: 200}}
	if opts.Quick {
		b.Sizes = Sizes{Objects: 1000, CRDs: 20}
	}
	var tables []*Table
	emit := func(t *Table) {
		tables = append(tables, t)
		t.Print(opts.Out)
	}
	if len(want) == 1 && slices.Contains(SpecialScenarios, want[0]) {
		// A control plane of its own (shard and scale: with the sharding
		// gate on).
		var ts []*Table
		var err error
		load0 := loadAvg()
		switch want[0] {
		case "shard":
			ts, err = b.Shard(ctx)
		case "scale":
			ts, err = b.Scale(ctx)
		case "gc":
			ts, err = b.GC(ctx)
		case "crcache":
			ts, err = b.CRCache(ctx)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", want[0], err)
		}
		for i, t := range ts {
			if i == len(ts)-1 {
				t.Note("machine load average (1 min) at the start / end of this scenario: %s / %s (2 CPUs shared with other work)", load0, loadAvg())
			}
			emit(t)
		}
		b.logf("done")
		return nil
	}
	for _, s := range want {
		if slices.Contains(SpecialScenarios, s) {
			return fmt.Errorf("scenario %s runs alone (-scenario %s): it starts a control plane of its own", s, s)
		}
	}
	if slices.Equal(want, []string{"footprint"}) {
		// Needs no control plane.
		t, err := b.Footprint(ctx)
		if err != nil {
			return err
		}
		emit(t)
		return nil
	}

	b.logf("starting the control plane")
	env, err := testenv.Start(ctx, testenv.Options{KeepDir: os.Getenv("LIBBENCH_KEEP") != ""})
	if err != nil {
		return err
	}
	defer env.Stop()
	b.Env = env
	b.logf("control plane directory %s", env.Dir())
	kc := env.RESTConfig(testenv.Admin)
	b.Conn = Conn{Host: kc.Host, Token: env.AdminToken(), CA: env.CAData()}
	b.logf("control plane at %s; seeding %d ConfigMaps, %d widgets, %d discovery CRDs, %d load ConfigMaps",
		b.Conn.Host, b.Sizes.Objects, b.Sizes.Objects, b.Sizes.CRDs, LoadObjects)
	if err := Seed(ctx, b.Conn, b.Sizes, b.logf); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(opts.Out, "# kdyn vs client-go v0.37.2 — library benchmarks\n\n")
	fmt.Fprintf(opts.Out, "%s, %s/%s, %d CPUs, kube-apiserver v1.37.2 (testenv, watch cache on), %d ConfigMaps + %d widgets (~1 KiB each), %d discovery CRDs; timings are medians of %d runs unless stated.\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), b.Sizes.Objects, b.Sizes.Objects, b.Sizes.CRDs, b.runs())

	for _, s := range want {
		b.logf("scenario %s", s)
		load0 := loadAvg()
		var t *Table
		var err error
		switch s {
		case "discovery":
			t, err = b.Discovery(ctx)
		case "mapper":
			t, err = b.Mapper(ctx)
		case "dynamic":
			t, err = b.Dynamic(ctx)
		case "informer":
			t, err = b.Informer(ctx)
		case "footprint":
			t, err = b.Footprint(ctx)
		case "controller":
			t, err = b.Controller(ctx)
		case "load":
			t, err = b.Load(ctx)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
		t.Note("machine load average (1 min) at the start / end of this scenario: %s / %s (2 CPUs shared with other work)", load0, loadAvg())
		emit(t)
	}
	if len(tables) > 1 {
		fmt.Fprintf(opts.Out, "\n## Summary\n\n| scenario | metric | ratio | target | result |\n|---|---|---:|---|---|\n")
		for _, t := range tables {
			for _, r := range t.Rows {
				if r.Verdict() == "" {
					continue
				}
				ratio := ratioString(r.Ratio())
				fmt.Fprintf(opts.Out, "| %s | %s | %s | %s | %s |\n", strings.SplitN(t.Title, " ", 2)[0], r.Metric, ratio, r.Target, r.Verdict())
			}
		}
	}
	b.logf("done")
	return nil
}

// loadAvg returns the 1-minute load average, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
