package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// profile writes, for the warm-cache get commands, kdyn's CPU and
// allocation profiles (a profiling build of the same code), kubectl's CPU
// and heap profiles (its own --profile flag), GODEBUG=gctrace=1 logs of
// both, and `go tool pprof -top` texts of each.
func (b *bench) profile(ctx context.Context) error {
	dir, err := filepath.Abs(b.opts.ProfileDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.logf("building the profiling kdyn (go build -overlay)")
	prof, err := BuildProfilingKdyn(ctx, b.work)
	if err != nil {
		return err
	}
	kdCache, kcCache := b.newCache(Kdyn), b.newCache(Kubectl)
	for _, warm := range []struct {
		bin, cache string
	}{{prof, kdCache}, {b.bin.Kubectl, kcCache}} {
		if _, _, err := b.r.exec(ctx, b.devnull, warm.bin, b.args(warm.cache, getTable...)...); err != nil {
			return err
		}
	}
	write := func(name string, data []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err == nil {
			b.res.Profiles = append(b.res.Profiles, p)
		}
	}
	top := func(bin, profile, name string, extra ...string) {
		args := append([]string{"tool", "pprof", "-top", "-nodecount=40"}, extra...)
		args = append(args, bin, profile)
		out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
		if err != nil {
			out = append(out, []byte(fmt.Sprintf("\n(go tool pprof: %v)\n", err))...)
		}
		write(name, out)
	}
	for _, c := range []struct {
		name string
		cmd  []string
	}{{"get-json", getJSON}, {"get-table", getTable}, {"jsonl", jsonlBig}} {
		cpu := filepath.Join(dir, "kdyn-"+c.name+".cpu.pprof")
		mem := filepath.Join(dir, "kdyn-"+c.name+".allocs.pprof")
		s, _, err := b.r.execEnv(ctx, b.devnull, []string{"KDYN_CPUPROFILE=" + cpu, "KDYN_MEMPROFILE=" + mem}, prof, b.args(kdCache, c.cmd...)...)
		if err != nil {
			return err
		}
		b.logf("profiled kdyn %s: wall %.0f ms, cpu %.0f ms, rss %.1f MB", c.name, ms(s.Wall), ms(s.CPU), mb(s.MaxRSS))
		b.res.Profiles = append(b.res.Profiles, cpu, mem)
		top(prof, cpu, "kdyn-"+c.name+".cpu.top.txt")
		top(prof, cpu, "kdyn-"+c.name+".cpu.cum.txt", "-cum")
		top(prof, mem, "kdyn-"+c.name+".alloc_space.top.txt", "-sample_index=alloc_space")
		_, gclog, err := b.r.execEnv(ctx, b.devnull, []string{"GODEBUG=gctrace=1"}, b.bin.Kdyn, b.args(kdCache, c.cmd...)...)
		if err != nil {
			return err
		}
		write("kdyn-"+c.name+".gctrace.txt", gclog)
	}
	for _, c := range []struct {
		name string
		cmd  []string
	}{{"get-json", getJSON}, {"get-table", getTable}} {
		for _, kind := range []string{"cpu", "heap"} {
			p := filepath.Join(dir, "kubectl-"+c.name+"."+kind+".pprof")
			args := append(b.args(kcCache, c.cmd...), "--profile="+kind, "--profile-output="+p)
			if _, _, err := b.r.exec(ctx, b.devnull, b.bin.Kubectl, args...); err != nil {
				return err
			}
			b.res.Profiles = append(b.res.Profiles, p)
			if kind == "cpu" {
				top(b.bin.Kubectl, p, "kubectl-"+c.name+".cpu.top.txt")
			} else {
				top(b.bin.Kubectl, p, "kubectl-"+c.name+".alloc_space.top.txt", "-sample_index=alloc_space")
			}
		}
		_, gclog, err := b.r.execEnv(ctx, b.devnull, []string{"GODEBUG=gctrace=1"}, b.bin.Kubectl, b.args(kcCache, c.cmd...)...)
		if err != nil {
			return err
		}
		write("kubectl-"+c.name+".gctrace.txt", gclog)
	}
	b.logf("profiles written to %s", dir)
	return nil
}
