package lib

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
)

// The gc scenario's data set and timings.
const (
	// NSGC holds the gc scenario's objects and the collectors' Leases.
	NSGC = "bench-gc"
	// GCOwners is how many ConfigMaps the gc scenario seeds (a tenth with
	// -quick).
	GCOwners = 10000
	// GCDependents is how many Secrets it seeds, each owned by one of the
	// ConfigMaps (a tenth with -quick).
	GCDependents = 5000
	// GCSteadyWait is how long after its sync a collector's resident
	// memory and live heap are read.
	GCSteadyWait = 10 * time.Second
	// gcSyncTimeout bounds a collector's wait for its synced line.
	gcSyncTimeout = 3 * time.Minute
	// gcOrphans are the orphans the scenario's last check creates.
	gcOrphans = 3
)

// gcRun is what one measured run of a collector gave.
type gcRun struct {
	synced time.Duration // process start to the synced line
	cpu    time.Duration // user+system CPU when the line appeared
	rss    int64         // VmRSS GCSteadyWait after the line
	heap   int64         // HeapAlloc after runtime.GC, right after rss
	line   string        // the synced line
}

// gcCount is what one counting run gave: the requests the collector made
// until it printed its synced line.
type gcCount struct {
	total   int
	byClass map[string]int
	line    string
	reqs    []proxiedRequest
}

// startEnv starts a control plane of the scenario's own (testenv with
// opts; LIBBENCH_KEEP keeps its directory), points the bench at it, and
// returns a client without a rate limit. The caller stops b.Env.
func (b *Bench) startEnv(ctx context.Context, opts testenv.Options) (*dynamic.DynamicClient, error) {
	b.logf("starting a control plane %v", opts.ExtraArgs)
	opts.KeepDir = os.Getenv("LIBBENCH_KEEP") != ""
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	b.Env = env
	b.Conn = Conn{Host: env.Host(), Token: env.AdminToken(), CA: env.CAData()}
	b.logf("control plane at %s, directory %s", b.Conn.Host, env.Dir())
	dc, err := dynamic.NewForConfig(b.Conn.Kdyn(Unlimited, nil))
	if err != nil {
		env.Stop()
		return nil, err
	}
	return dc, nil
}

// GC compares the garbage collector of examples/gc (kdyn) with the same
// collector on controller-runtime (bench/lib/footprint/crgc), on a control
// plane of its own seeded with GCOwners ConfigMaps and GCDependents owned
// Secrets: binary size, time and CPU from process start to the synced
// line, resident memory and live heap GCSteadyWait later, and the requests
// made until synced (through a counting proxy, in runs of their own). Each
// collector runs alone in a fresh process, the two in turn, the first
// alternating; medians. A last run of each checks that both report the
// same orphans.
func (b *Bench) GC(ctx context.Context) ([]*Table, error) {
	owners, deps := GCOwners, GCDependents
	if b.Opts.Quick {
		owners, deps = GCOwners/10, GCDependents/10
	}
	rounds := b.Opts.Runs
	if rounds <= 0 {
		rounds = 5
		if b.Opts.Quick {
			rounds = 2
		}
	}
	benchD, tmp, err := buildDirs("gc")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	common := []string{"--leader-elect", "--lease-namespace", NSGC, "--metrics-bind-address", "127.0.0.1:0", "--metrics-secure=false"}
	cs := []*binContender{
		{name: "kdyn", dir: filepath.Dir(benchD), pkg: "./examples/gc", flags: common},
		{name: "controller-runtime", dir: benchD, pkg: "./lib/footprint/crgc", flags: append(slices.Clone(common), "--health-probe-bind-address", "127.0.0.1:0")},
	}
	if err := checkModule(cs[0].dir, "github.com/kdyn/kdyn"); err != nil {
		return nil, err
	}
	for _, c := range cs {
		b.logf("gc: build %s (%s), without and with the heap probe", c.pkg, c.name)
		if err := c.build(ctx, tmp, true); err != nil {
			return nil, err
		}
	}

	dc, err := b.startEnv(ctx, testenv.Options{})
	if err != nil {
		return nil, err
	}
	defer b.Env.Stop()
	t0 := time.Now()
	if err := seedGC(ctx, dc, owners, deps); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	seedTime := time.Since(t0)
	b.logf("gc: seeded %d ConfigMaps and %d owned Secrets in %s", owners, deps, seedTime.Round(time.Millisecond))
	direct := b.Env.KubeconfigPath(testenv.Admin)
	proxy, err := newCountingProxy(b.Conn.Host, b.Conn.CA)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	proxied := filepath.Join(tmp, "kubeconfig-proxy")
	if err := faultproxy.WriteKubeconfig(proxied, proxy.url, proxy.caPEM, b.Conn.Token, ""); err != nil {
		return nil, err
	}

	t := &Table{
		Title: fmt.Sprintf("gc (examples/gc on kdyn vs the same collector on controller-runtime v0.25.3: metadata-only watches of every resource, %d ConfigMaps + %d owned Secrets)", owners, deps),
		Cols:  [2]string{"kdyn", "controller-runtime"},
	}
	runs := make([][]gcRun, len(cs))
	counts := make([][]gcCount, len(cs))
	for round := range rounds {
		for j := range cs {
			i := (j + round) % len(cs) // alternate who goes first
			waitQuiet(ctx, b.Env)
			b.logf("gc: round %d/%d, %s", round+1, rounds, cs[i].name)
			r, err := runGC(ctx, cs[i], direct, nil)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], r)
			t.RawLine("round %d %-18s synced %4.0f ms, CPU %4.0f ms, RSS %5.1f MB, live heap %5.1f MB; %q", round+1, cs[i].name, ms(r.synced), ms(r.cpu), float64(r.rss)/mib, float64(r.heap)/mib, r.line)
		}
		for j := range cs {
			i := (j + round) % len(cs)
			waitQuiet(ctx, b.Env)
			n, err := countGC(ctx, cs[i], proxy, proxied)
			if err != nil {
				return nil, err
			}
			counts[i] = append(counts[i], n)
			t.RawLine("round %d %-18s %d requests until synced (%s); %q", round+1, cs[i].name, n.total, classes(n.byClass), n.line)
		}
	}
	if b.Opts.ProfileDir != "" {
		if err := os.MkdirAll(b.Opts.ProfileDir, 0o755); err != nil {
			return nil, err
		}
		for _, c := range cs {
			waitQuiet(ctx, b.Env)
			path, err := filepath.Abs(filepath.Join(b.Opts.ProfileDir, "gc-heap-"+c.name+".pprof"))
			if err != nil {
				return nil, err
			}
			if _, err := runGC(ctx, c, direct, &path); err != nil {
				return nil, err
			}
			t.RawLine("heap profile of %s at sync + %s (after a GC, sampled every 64 KiB): %s; CPU profile from its start to then: %s", c.name, GCSteadyWait, path, strings.TrimSuffix(path, ".pprof")+"-cpu.pprof")
		}
		for i, c := range cs {
			path := filepath.Join(b.Opts.ProfileDir, "gc-requests-"+c.name+".txt")
			if err := writeRequestLog(path, counts[i][len(counts[i])-1]); err != nil {
				return nil, err
			}
			t.RawLine("requests of %s's last counting run: %s", c.name, path)
		}
	}
	orphans, err := checkOrphans(ctx, b, dc, cs, direct)
	if err != nil {
		return nil, err
	}
	t.RawLine("orphan check: both collectors reported exactly the %d orphans created for it: %s", gcOrphans, strings.Join(orphans, "; "))

	med := func(i int, f func(gcRun) float64) float64 {
		v := make([]float64, len(runs[i]))
		for k, r := range runs[i] {
			v[k] = f(r)
		}
		return median(v)
	}
	medCount := func(i int) float64 {
		v := make([]float64, len(counts[i]))
		for k, n := range counts[i] {
			v[k] = float64(n.total)
		}
		return median(v)
	}
	row := func(metric, unit, target string, max float64, f func(gcRun) float64) {
		t.Add(Row{Metric: metric, Unit: unit, Kdyn: med(0, f), ClientGo: med(1, f), Target: target, Check: ratioAtMost(max)})
	}
	t.Add(Row{Metric: `binary size (go build -trimpath -ldflags "-s -w")`, Unit: "MB", Kdyn: float64(cs[0].size) / mib, ClientGo: float64(cs[1].size) / mib, Target: "≤ 0.35×", Check: ratioAtMost(0.35)})
	row("start → synced (process start to the synced line on stdout)", "ms", "≤ 0.4×", 0.4, func(r gcRun) float64 { return ms(r.synced) })
	row("CPU to sync (utime+stime when the synced line appears)", "ms", "≤ 0.4×", 0.4, func(r gcRun) float64 { return ms(r.cpu) })
	row(fmt.Sprintf("steady RSS (VmRSS at sync + %s)", GCSteadyWait), "MB", "≤ 0.45×", 0.45, func(r gcRun) float64 { return float64(r.rss) / mib })
	row("live heap after a GC (HeapAlloc after runtime.GC, right after the RSS)", "MB", "≤ 0.5×", 0.5, func(r gcRun) float64 { return float64(r.heap) / mib })
	t.Add(Row{Metric: "requests to sync (through a counting proxy, runs of their own)", Kdyn: medCount(0), ClientGo: medCount(1), Target: "≤ 1.0×", Check: ratioAtMost(1.0)})

	t.Note("flags for both: %s (and --kubeconfig; controller-runtime also --health-probe-bind-address 127.0.0.1:0, as it serves the probes on an address of its own); two workers each (the default of both); both strip managedFields and watch the metadata of every resource discovery offers with list, watch and delete", strings.Join(common, " "))
	t.Note("binaries: go build -trimpath -ldflags \"-s -w\" (kdyn in the main module, controller-runtime in bench/); the runs use the same builds with -tags heapprobe (examples/gc/heapprobe.go, bench/lib/footprint/crgc/heapprobe.go: SIGUSR1 → runtime.GC and HeapAlloc on stderr)")
	t.Note("%d rounds; in each, every collector runs alone in a fresh process (who goes first alternates), after the control plane has quieted, straight to the API server: time and CPU (/proc/PID/stat) when its synced line is read from stdout, VmRSS %s later, then the heap probe; then each runs again through a counting reverse proxy (TLS, HTTP/2 and HTTP/1.1 as the clients choose), which counts the requests that arrived before the synced line; medians", rounds, GCSteadyWait)
	t.Note("seed: namespace %s, %d ConfigMaps of ~1 KiB (5 labels, 2 annotations) and %d Secrets each owned by one of them (ownerReferences with the owner's UID), seeded in %s; plus what a fresh control plane holds (its own namespaces, the collectors' Leases)", NSGC, owners, deps, seedTime.Round(time.Millisecond))
	return []*Table{t}, nil
}

// writeRequestLog writes the requests of a counting run to path, one a
// line: milliseconds since the first, class, method, path and query.
func writeRequestLog(path string, n gcCount) error {
	var sb strings.Builder
	for _, r := range n.reqs {
		fmt.Fprintf(&sb, "%7.1f ms  %-9s %-6s %s", ms(r.at.Sub(n.reqs[0].at)), requestClass(r.method, r.path, r.query), r.method, r.path)
		if q := r.query.Encode(); q != "" {
			sb.WriteString("?" + q)
		}
		sb.WriteString("\n")
	}
	return os.WriteFile(path, []byte(sb.String()), 0o644)
}

// checkModule checks that dir holds the go.mod of module path.
func checkModule(dir, path string) error {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if strings.TrimSpace(first) != "module "+path {
		return fmt.Errorf("%s is not the module %s", dir, path)
	}
	return nil
}

// classes formats counts by request class, largest first.
func classes(by map[string]int) string {
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, by[k])
	}
	return strings.Join(parts, ", ")
}

// seedGC creates the namespace, owners ConfigMaps and deps Secrets, the
// i-th Secret owned by ConfigMap i*owners/deps.
func seedGC(ctx context.Context, dc *dynamic.DynamicClient, owners, deps int) error {
	if err := createNamespaces(ctx, dc, NSGC); err != nil {
		return err
	}
	uids := make([]string, owners)
	cms := dc.Resource(GVRConfigMaps).Namespace(NSGC)
	if err := parallel(ctx, owners, fastSeedWorkers, func(ctx context.Context, i int) error {
		obj, err := createOrGet(ctx, cms, ConfigMap(NSGC, i))
		if err != nil {
			return err
		}
		uids[i] = string(obj.GetUID())
		return nil
	}); err != nil {
		return fmt.Errorf("configmaps: %w", err)
	}
	secrets := dc.Resource(GVRSecrets).Namespace(NSGC)
	if err := parallel(ctx, deps, fastSeedWorkers, func(ctx context.Context, i int) error {
		o := i * owners / deps
		return createIgnoreExists(ctx, secrets, gcDependent(i, fmt.Sprintf("cm-%05d", o), uids[o]))
	}); err != nil {
		return fmt.Errorf("secrets: %w", err)
	}
	return nil
}

// gcDependent returns the i-th dependent: a Secret of ~256 B owned by the
// ConfigMap owner with UID uid.
func gcDependent(i int, owner, uid string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("dep-%05d", i),
			"namespace": NSGC,
			"labels":    labels(i),
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid,
			}},
		},
		"stringData": map[string]any{"token": fmt.Sprintf("%0256d", i)},
	}}
}

// orphanSecret returns the i-th orphan of the last check: a Secret whose
// one owner, a ConfigMap, never existed.
func orphanSecret(i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("orphan-%d", i),
			"namespace": NSGC,
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "name": fmt.Sprintf("gone-%d", i), "uid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			}},
		},
	}}
}

// checkOrphans creates gcOrphans orphans, runs each collector until it has
// reported as many, checks that both report the same lines, and deletes
// the orphans again.
func checkOrphans(ctx context.Context, b *Bench, dc *dynamic.DynamicClient, cs []*binContender, kubeconfig string) ([]string, error) {
	secrets := dc.Resource(GVRSecrets).Namespace(NSGC)
	for i := range gcOrphans {
		if err := createIgnoreExists(ctx, secrets, orphanSecret(i)); err != nil {
			return nil, err
		}
	}
	defer func() {
		for i := range gcOrphans {
			_ = secrets.Delete(context.WithoutCancel(ctx), fmt.Sprintf("orphan-%d", i), metav1.DeleteOptions{})
		}
	}()
	var want []string
	for _, c := range cs {
		waitQuiet(ctx, b.Env)
		b.logf("gc: orphan check, %s", c.name)
		p, err := startProc(ctx, c.name, c.bin, c.args(kubeconfig), nil)
		if err != nil {
			return nil, err
		}
		got, err := func() ([]string, error) {
			defer p.stop()
			if _, err := p.waitSynced(ctx, gcSyncTimeout); err != nil {
				return nil, err
			}
			deadline := time.Now().Add(time.Minute)
			for {
				lines := p.stdoutWith("orphan ")
				if len(lines) >= gcOrphans {
					slices.Sort(lines)
					return lines, nil
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("%s reported %d of %d orphans in a minute after its sync:\n%s", c.name, len(lines), gcOrphans, p.tail())
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
		if err != nil {
			return nil, err
		}
		if want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			return nil, fmt.Errorf("the collectors report different orphans:\n%s: %q\n%s: %q", cs[0].name, want, c.name, got)
		}
	}
	return want, nil
}

// runGC runs one measured run of c: start, synced line, GCSteadyWait,
// RSS, live heap, and, with profile set, a heap profile written there.
func runGC(ctx context.Context, c *binContender, kubeconfig string, profile *string) (gcRun, error) {
	var env []string
	if profile != nil {
		env = []string{"HEAPPROBE_PROFILE=" + *profile, "HEAPPROBE_CPUPROFILE=" + strings.TrimSuffix(*profile, ".pprof") + "-cpu.pprof"}
	}
	p, err := startProc(ctx, c.name, c.bin, c.args(kubeconfig), env)
	if err != nil {
		return gcRun{}, err
	}
	defer p.stop()
	s, err := p.waitSynced(ctx, gcSyncTimeout)
	if err != nil {
		return gcRun{}, err
	}
	r := gcRun{synced: s.at.Sub(p.start), cpu: s.cpu, line: s.line}
	select {
	case <-time.After(time.Until(s.at.Add(GCSteadyWait))):
	case <-p.exited:
		return r, fmt.Errorf("%s exited after its sync: %v\n%s", c.name, p.err, p.tail())
	case <-ctx.Done():
		return r, ctx.Err()
	}
	if r.rss, err = processRSS(p.cmd.Process.Pid); err != nil {
		return r, err
	}
	if r.heap, err = p.probe(syscall.SIGUSR1, p.heap); err != nil {
		return r, fmt.Errorf("%s: live heap: %w", c.name, err)
	}
	if profile != nil {
		if _, err := p.probe(syscall.SIGUSR2, p.profile); err != nil {
			return r, fmt.Errorf("%s: heap profile: %w", c.name, err)
		}
	}
	if err := p.stop(); err != nil {
		return r, fmt.Errorf("%s: %w", c.name, err)
	}
	return r, nil
}

// countGC runs c through the counting proxy until its synced line and
// counts the requests that arrived before it.
func countGC(ctx context.Context, c *binContender, proxy *countingProxy, kubeconfig string) (gcCount, error) {
	proxy.reset()
	p, err := startProc(ctx, c.name, c.bin, c.args(kubeconfig), nil)
	if err != nil {
		return gcCount{}, err
	}
	defer p.stop()
	s, err := p.waitSynced(ctx, gcSyncTimeout)
	if err != nil {
		return gcCount{}, err
	}
	n := gcCount{byClass: map[string]int{}, line: s.line, reqs: proxy.requestsBefore(s.at)}
	for _, r := range n.reqs {
		n.total++
		n.byClass[requestClass(r.method, r.path, r.query)]++
	}
	if err := p.stop(); err != nil {
		return n, fmt.Errorf("%s: %w", c.name, err)
	}
	return n, nil
}
