package lib

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

const benchModule = "github.com/kdyn/kdyn/bench"

// benchDir finds the bench module's directory: the working directory or a
// parent of it, its bench/ subdirectory, or this source file's module.
func benchDir() (string, error) {
	isBench := func(d string) bool {
		f, err := os.Open(filepath.Join(d, "go.mod"))
		if err != nil {
			return false
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
				return strings.Trim(strings.TrimSpace(rest), `"`) == benchModule
			}
		}
		return false
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isBench(d) {
				return d, nil
			}
			if isBench(filepath.Join(d, "bench")) {
				return filepath.Join(d, "bench"), nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if d := filepath.Dir(filepath.Dir(file)); isBench(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("cannot find the %s module (run from bench/)", benchModule)
}

// buildDirs returns the bench module's directory and a new temporary
// directory for a scenario's binaries, which the caller removes.
func buildDirs(scenario string) (benchD, tmp string, err error) {
	if benchD, err = benchDir(); err != nil {
		return "", "", err
	}
	tmp, err = os.MkdirTemp("", "libbench-"+scenario+"-")
	return benchD, tmp, err
}

// binContender is a program a scenario (gc, crcache) builds, with go build
// (and -tags heapprobe), and runs (see proc).
type binContender struct {
	name  string // in the table and the raw lines
	dir   string // the module directory to build in
	pkg   string // the package, relative to dir
	flags []string
	// size is the binary built without the heap probe, for the table;
	// bin is the one built with it, for the runs.
	size int64
	bin  string
}

// args returns the contender's command line with kubeconfig.
func (c *binContender) args(kubeconfig string) []string {
	return append(slices.Clone(c.flags), "--kubeconfig", kubeconfig)
}

// build builds c into tmp with -tags heapprobe (c.bin) and, with plain,
// without it too, for c.size.
func (c *binContender) build(ctx context.Context, tmp string, plain bool) error {
	flags := []string{"build", "-trimpath", "-ldflags=-s -w"}
	c.bin = filepath.Join(tmp, c.name+"-heapprobe")
	if _, err := goCmd(ctx, c.dir, nil, append(flags, "-tags=heapprobe", "-o", c.bin, c.pkg)...); err != nil {
		return err
	}
	if !plain {
		return nil
	}
	path := filepath.Join(tmp, c.name+"-plain")
	if _, err := goCmd(ctx, c.dir, nil, append(flags, "-o", path, c.pkg)...); err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	c.size = st.Size()
	return nil
}

type footprint struct {
	pkgs, modules       int
	size, strippedSize  int64
	build, strippedLink time.Duration
	buildCPU            time.Duration
	ran                 string
}

func goCmd(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	out, _, err := goCmdCPU(ctx, dir, env, args...)
	return out, err
}

// goCmdCPU is goCmd that also returns the CPU time (user + system) the go
// command and the tools it waited for (compile, link) used.
func goCmdCPU(ctx context.Context, dir string, env []string, args ...string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS="), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return out, cpu, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, cpu, nil
}

func measureFootprint(ctx context.Context, dir, pkg, tmp string, env *testenv.Env) (footprint, error) {
	var fp footprint
	out, err := goCmd(ctx, dir, nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}{{end}}", pkg)
	if err != nil {
		return fp, err
	}
	mods := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] == strings.TrimPrefix(pkg, "./") || strings.HasSuffix(f[0], strings.TrimPrefix(pkg, ".")) {
			continue // the probe itself
		}
		fp.pkgs++
		if len(f) > 1 {
			mods[f[1]] = true
		}
	}
	fp.modules = len(mods)
	cache, err := os.MkdirTemp(tmp, "gocache-")
	if err != nil {
		return fp, err
	}
	bin := filepath.Join(tmp, filepath.Base(pkg))
	t0 := time.Now()
	if _, fp.buildCPU, err = goCmdCPU(ctx, dir, []string{"GOCACHE=" + cache}, "build", "-o", bin, pkg); err != nil {
		return fp, err
	}
	fp.build = time.Since(t0)
	st, err := os.Stat(bin)
	if err != nil {
		return fp, err
	}
	fp.size = st.Size()
	t0 = time.Now()
	if _, err := goCmd(ctx, dir, []string{"GOCACHE=" + cache}, "build", "-ldflags=-s -w", "-o", bin+"-stripped", pkg); err != nil {
		return fp, err
	}
	fp.strippedLink = time.Since(t0)
	if st, err = os.Stat(bin + "-stripped"); err != nil {
		return fp, err
	}
	fp.strippedSize = st.Size()
	os.RemoveAll(cache)
	if env != nil { // prove the probe works
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.KubeconfigPath(testenv.Admin))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fp, fmt.Errorf("running %s: %w\n%s", pkg, err, out)
		}
		fp.ran = strings.TrimSpace(string(out))
	}
	return fp, nil
}

// Footprint builds the two probe programs with clean build caches.
func (b *Bench) Footprint(ctx context.Context) (*Table, error) {
	t := &Table{Title: "footprint (minimal program: kubeconfig + dynamic client + REST mapper + informer factory)"}
	dir, tmp, err := buildDirs("footprint")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var fps [2]footprint
	for i, pkg := range []string{"./lib/footprint/kdyn", "./lib/footprint/clientgo"} {
		b.logf("footprint: clean-cache build of %s", pkg)
		fp, err := measureFootprint(ctx, dir, pkg, tmp, b.Env)
		if err != nil {
			return nil, err
		}
		fps[i] = fp
		t.RawLine("%-26s build %.1fs (CPU %.1fs), %d B (stripped %d B), %d non-std packages in %d modules; ran: %s", pkg, fp.build.Seconds(), fp.buildCPU.Seconds(), fp.size, fp.strippedSize, fp.pkgs, fp.modules, fp.ran)
	}
	k, c := fps[0], fps[1]
	t.Add(Row{Metric: "binary size", Unit: "MB", Kdyn: float64(k.size) / mib, ClientGo: float64(c.size) / mib, Target: "≤ 0.4×", Check: ratioAtMost(0.4)})
	t.Add(Row{Metric: "binary size, -ldflags=-s -w", Unit: "MB", Kdyn: float64(k.strippedSize) / mib, ClientGo: float64(c.strippedSize) / mib, Target: "—"})
	t.Add(Row{Metric: "non-std packages (go list -deps)", Kdyn: float64(k.pkgs), ClientGo: float64(c.pkgs), Target: "≤ 0.5×", Check: ratioAtMost(0.5)})
	t.Add(Row{Metric: "modules providing them", Kdyn: float64(k.modules), ClientGo: float64(c.modules), Target: "—"})
	t.Add(Row{Metric: "clean-cache build time", Unit: "s", Kdyn: k.build.Seconds(), ClientGo: c.build.Seconds(), Target: "≤ 0.5×", Check: ratioAtMost(0.5)})
	t.Add(Row{Metric: "clean-cache build CPU time (user+sys)", Unit: "s", Kdyn: k.buildCPU.Seconds(), ClientGo: c.buildCPU.Seconds(), Target: "—"})
	t.Note("probes: bench/lib/footprint/kdyn and bench/lib/footprint/clientgo (both resolve ConfigMap through the mapper, sync an informer, list); built one after the other with GOCACHE=$(mktemp -d) go build (std rebuilt too; modules already in GOMODCACHE), %s/%s, %d CPUs (shared), one build each; the wall time moves with other load on the machine, the CPU time much less", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	return t, nil
}

// controllerRun is one run of a controller probe.
type controllerRun struct {
	cached, reconciled int
	rss                int64
	wall               time.Duration
}

// runControllerProbe runs a built controller probe against the bench's
// server, in the ConfigMaps' namespace, and reads what it printed.
func runControllerProbe(ctx context.Context, bin string, env *testenv.Env) (controllerRun, error) {
	var r controllerRun
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.KubeconfigPath(testenv.Admin), "PROBE_NAMESPACE="+NSConfigMaps)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	r.wall = time.Since(t0)
	if err != nil {
		return r, fmt.Errorf("running %s: %w\n%s", bin, err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "cached %d, reconciled %d, rss %d", &r.cached, &r.reconciled, &r.rss); err == nil {
			return r, nil
		}
	}
	return r, fmt.Errorf("%s printed no figures:\n%s", bin, out)
}

// Controller compares a production-shaped controller — leader election,
// an event recorder, Prometheus metrics and probes, a work queue with two
// workers, caching every ConfigMap of one namespace — written with kdyn
// and with client-go + controller-runtime: binary size, packages, and
// resident memory once every cached object has been reconciled.
func (b *Bench) Controller(ctx context.Context) (*Table, error) {
	t := &Table{Title: fmt.Sprintf("controller (leader election + events + metrics + workers, %d cached ConfigMaps): kdyn vs client-go + controller-runtime v0.25.3", b.Sizes.Objects)}
	dir, err := benchDir()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "libbench-controller-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	pkgs := []string{"./lib/footprint/kdyncontroller", "./lib/footprint/crcontroller"}
	var fps [2]footprint
	for i, pkg := range pkgs {
		b.logf("controller: build %s", pkg)
		fp, err := measureFootprint(ctx, dir, pkg, tmp, nil)
		if err != nil {
			return nil, err
		}
		fps[i] = fp
	}
	var runs [2][]controllerRun
	for round := range b.runs() {
		for j := range 2 {
			i := (j + round) % 2 // alternate who goes first
			r, err := runControllerProbe(ctx, filepath.Join(tmp, filepath.Base(pkgs[i])), b.Env)
			if err != nil {
				return nil, err
			}
			if r.cached != b.Sizes.Objects || r.reconciled < r.cached {
				return nil, fmt.Errorf("%s cached %d and reconciled %d of %d ConfigMaps", pkgs[i], r.cached, r.reconciled, b.Sizes.Objects)
			}
			runs[i] = append(runs[i], r)
		}
	}
	medRSS := func(rs []controllerRun) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = float64(r.rss)
		}
		return median(v)
	}
	medWall := func(rs []controllerRun) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = r.wall.Seconds()
		}
		return median(v)
	}
	k, c := fps[0], fps[1]
	t.Add(Row{Metric: "binary size", Unit: "MB", Kdyn: float64(k.size) / mib, ClientGo: float64(c.size) / mib, Target: "—"})
	t.Add(Row{Metric: "binary size, -ldflags=-s -w", Unit: "MB", Kdyn: float64(k.strippedSize) / mib, ClientGo: float64(c.strippedSize) / mib, Target: "—"})
	t.Add(Row{Metric: "non-std packages (go list -deps)", Kdyn: float64(k.pkgs), ClientGo: float64(c.pkgs), Target: "—"})
	t.Add(Row{Metric: "modules providing them", Kdyn: float64(k.modules), ClientGo: float64(c.modules), Target: "—"})
	t.Add(Row{Metric: fmt.Sprintf("RSS with %d ConfigMaps cached and reconciled (after GC)", b.Sizes.Objects), Unit: "MB", Kdyn: medRSS(runs[0]) / mib, ClientGo: medRSS(runs[1]) / mib, Target: "—"})
	t.Add(Row{Metric: "start to all reconciled and measured (process wall time)", Unit: "s", Kdyn: medWall(runs[0]), ClientGo: medWall(runs[1]), Target: "—"})
	t.Note("probes: bench/lib/footprint/kdyncontroller and bench/lib/footprint/crcontroller, built with clean build caches; each run starts the process against the same server, syncs, reconciles every ConfigMap once (a no-op), records one Event, reads VmRSS after runtime.GC and debug.FreeOSMemory, and exits; %d runs each, alternating, medians; both caches leave managedFields out (kdyn's default; cache.TransformStripManagedFields for controller-runtime) and both release their Lease on exit", b.runs())
	return t, nil
}
