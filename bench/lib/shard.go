package lib

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
)

// The shard scenario's namespaces and sizes.
const (
	NSShard     = "bench-shard"      // the ConfigMaps the controllers cache
	NSShardRing = "bench-shard-ring" // the ring's Leases
	// ShardObjects is how many ConfigMaps the shard scenario seeds.
	ShardObjects = 40000
	// ShardMembers is how many sharded members it runs.
	ShardMembers = 4
	// ShardWorkers reconcile concurrently in every controller, single or
	// member.
	ShardWorkers = 10
	// ShardReconcileCost is the fixed time one reconcile takes.
	ShardReconcileCost = 10 * time.Millisecond
	// fastSeedWorkers create objects concurrently when seeding the
	// special scenarios (no client-side rate limit).
	fastSeedWorkers = 32
)

// startGatedEnv starts a control plane of the scenario's own with the
// ShardedListAndWatch feature gate on, points the bench at it, and returns
// a client without a rate limit. The caller stops b.Env.
func (b *Bench) startGatedEnv(ctx context.Context) (*dynamic.DynamicClient, error) {
	return b.startEnv(ctx, testenv.Options{
		ExtraArgs:    []string{shardGate},
		ReadyTimeout: 5 * time.Minute, // a restart with 250k objects reloads every watch cache
	})
}

// createNamespaces creates namespaces that may exist already.
func createNamespaces(ctx context.Context, dc *dynamic.DynamicClient, names ...string) error {
	for _, ns := range names {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if err := createIgnoreExists(ctx, dc.Resource(GVRNamespaces), obj); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}

// Shard runs the shard scenario on a control plane of its own: one
// unsharded controller, then four sharded ring members, over the same
// ConfigMaps, each in its own process; then one member is killed.
func (b *Bench) Shard(ctx context.Context) ([]*Table, error) {
	n := ShardObjects
	if b.Opts.Quick {
		n = ShardObjects / 10
	}
	dc, err := b.startGatedEnv(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Env.Stop()
	if err := createNamespaces(ctx, dc, NSShard, NSShardRing); err != nil {
		return nil, err
	}
	t0 := time.Now()
	cms := dc.Resource(GVRConfigMaps).Namespace(NSShard)
	if err := parallel(ctx, n, fastSeedWorkers, func(ctx context.Context, i int) error {
		return createIgnoreExists(ctx, cms, ConfigMap(NSShard, i))
	}); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	seedTime := time.Since(t0)
	b.logf("shard: seeded %d ConfigMaps in %s (%d workers, no client-side rate limit)", n, seedTime.Round(time.Millisecond), fastSeedWorkers)
	mem0, _ := controlPlaneMemory(b.Env)

	args := ChildArgs{Conn: b.Conn, Namespace: NSShard, Workers: ShardWorkers, ReconcileMs: ms(ShardReconcileCost), ProfileDir: b.Opts.ProfileDir}

	// One unsharded controller.
	b.logf("shard: the single unsharded controller")
	var single shardResult
	{
		c, err := startChild(ctx, "shard-single", args)
		if err != nil {
			return nil, err
		}
		if err := c.ready(ctx, nil); err != nil {
			return nil, err
		}
		if err := c.tell("GO"); err != nil {
			return nil, err
		}
		if err := c.finish(ctx, &single); err != nil {
			return nil, err
		}
	}
	if single.Objects != n {
		return nil, fmt.Errorf("the single controller cached %d of %d ConfigMaps", single.Objects, n)
	}
	b.logf("shard: single: sync %.0f ms, heap %.1f MB, %d reconciles in %.1f s", single.SyncMs, float64(single.HeapBytes)/mib, single.Reconciled, float64(single.LastEnd-single.FirstStart)/1e9)
	time.Sleep(settleBetweenChildren)

	// Four ring members.
	b.logf("shard: %d ring members", ShardMembers)
	mr, err := b.runMembers(ctx, args, n)
	if err != nil {
		return nil, err
	}
	mem1, _ := controlPlaneMemory(b.Env)
	return []*Table{shardTable(n, seedTime, single, mr, mem0, mem1)}, nil
}

// memberRun is one ring member's child, its result and the states it sent.
type memberRun struct {
	id     string
	c      *child
	res    shardResult
	resErr error
	got    chan struct{} // closed once res is in

	mu     sync.Mutex
	states []memberState
}

func (m *memberRun) latest() (memberState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.states) == 0 {
		return memberState{}, false
	}
	return m.states[len(m.states)-1], true
}

// membersResult is what runMembers measured.
type membersResult struct {
	members []*memberRun
	victim  string
	killAt  time.Time
	// Times from the kill (negative: not reached) until the survivors'
	// targets, then their processing ranges, cover the whole hash space;
	// until their informers have synced on those ranges and hold every
	// object; until the dead member's objects have all been reconciled
	// again.
	target, processing, synced, reconciled time.Duration
	overlaps                               int // samples with two survivors processing one range
	timeline                               []string
}

// runMembers starts ShardMembers ring members, lets the ring settle, starts
// their informers together, waits until each has reconciled its initial
// list, then kills one and follows the others until they cover the whole
// space again.
func (b *Bench) runMembers(ctx context.Context, args ChildArgs, n int) (*membersResult, error) {
	out := &membersResult{}
	defer func() {
		for _, m := range out.members {
			m.c.cmd.Process.Kill()
		}
	}()
	for i := range ShardMembers {
		a := args
		a.Ring, a.Identity, a.Members, a.LeaseNamespace = "bench", fmt.Sprintf("m%d", i), ShardMembers, NSShardRing
		c, err := startChild(ctx, "shard-member", a)
		if err != nil {
			return nil, err
		}
		out.members = append(out.members, &memberRun{id: a.Identity, c: c, got: make(chan struct{})})
	}
	t0 := time.Now()
	for _, m := range out.members {
		if err := m.c.ready(ctx, nil); err != nil {
			return nil, err
		}
	}
	b.logf("shard: the ring settled on %d members in %s", ShardMembers, time.Since(t0).Round(time.Millisecond))
	for _, m := range out.members {
		if err := m.c.tell("GO"); err != nil {
			return nil, err
		}
	}
	// Each member's first line is its result, the others its states.
	for _, m := range out.members {
		go func() {
			first := true
			for {
				select {
				case l := <-m.c.lines:
					if first {
						m.resErr = json.Unmarshal([]byte(l), &m.res)
						first = false
						close(m.got)
						continue
					}
					var s memberState
					if err := json.Unmarshal([]byte(l), &s); err == nil {
						m.mu.Lock()
						m.states = append(m.states, s)
						m.mu.Unlock()
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	for _, m := range out.members {
		select {
		case <-m.got:
			if m.resErr != nil {
				return nil, m.resErr
			}
		case err := <-m.c.done:
			return nil, fmt.Errorf("member %s exited: %v", m.id, err)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		b.logf("shard: %s: share %.3f, %d objects, sync %.0f ms, heap %.1f MB, %d reconciles in %.1f s, server sharded %v", m.id, m.res.Share, m.res.Objects, m.res.SyncMs, float64(m.res.HeapBytes)/mib, m.res.Reconciled, float64(m.res.LastEnd-m.res.FirstStart)/1e9, m.res.ServerSharded)
	}
	total := 0
	for _, m := range out.members {
		total += m.res.Objects
	}
	if total != n {
		return nil, fmt.Errorf("the members cached %d objects together, want %d", total, n)
	}

	// Kill one member (no goodbye) once the ring is quiet.
	time.Sleep(2 * time.Second)
	victim := out.members[1]
	out.victim = victim.id
	survivors := slices.DeleteFunc(slices.Clone(out.members), func(m *memberRun) bool { return m == victim })
	before := map[string]memberState{}
	for _, m := range survivors {
		s, ok := m.latest()
		if !ok {
			return nil, fmt.Errorf("member %s sent no state", m.id)
		}
		before[m.id] = s
	}
	out.killAt = time.Now()
	if err := victim.c.cmd.Process.Kill(); err != nil {
		return nil, err
	}
	b.logf("shard: killed %s (SIGKILL)", victim.id)
	// Wait until the survivors are done, as they report it.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		cur := map[string]memberState{}
		for _, m := range survivors {
			s, _ := m.latest()
			cur[m.id] = s
		}
		if _, _, _, done := coverage(cur, before, n, victim.res.Objects); done {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the survivors did not cover the space within 3 minutes of the kill: %v", cur)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out.follow(survivors, before, n, victim.res.Objects)
	for _, m := range survivors {
		if err := m.c.tell("STOP"); err != nil {
			return nil, err
		}
	}
	for _, m := range survivors {
		var r shardResult
		if err := m.c.finish(ctx, &r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// coverage evaluates the survivors' states: whether their targets, then
// their processing ranges, cover the whole space; whether their informers
// have synced on them and hold all n objects; and whether all the objects
// the victim held have been reconciled again (and nothing waits).
func coverage(cur, before map[string]memberState, n, victimObjects int) (target, processing, synced, reconciled bool) {
	var targets, procs []informer.HashRange
	cached, again := 0, int64(0)
	allSynced, idle := true, true
	for id, s := range cur {
		targets = append(targets, s.Target...)
		procs = append(procs, s.Processing...)
		cached += s.Cached
		again += s.Reconciled - before[id].Reconciled
		allSynced = allSynced && s.SyncSelector == s.Selector
		idle = idle && s.Idle
	}
	target = wholeSpace(targets)
	processing = wholeSpace(procs)
	synced = processing && allSynced && cached == n
	reconciled = synced && again >= int64(victimObjects) && idle
	return
}

// wholeSpace reports whether ranges cover the whole hash space.
func wholeSpace(ranges []informer.HashRange) bool {
	m, err := informer.MergeRanges(ranges)
	return err == nil && len(m) == 1 && m[0] == informer.HashRange{From: 0, To: math.MaxUint64}
}

// overlapping reports whether two members' processing ranges intersect.
func overlapping(cur map[string]memberState) bool {
	ids := make([]string, 0, len(cur))
	for id := range cur {
		ids = append(ids, id)
	}
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if len(informer.IntersectRanges(cur[ids[i]].Processing, cur[ids[j]].Processing)) > 0 {
				return true
			}
		}
	}
	return false
}

// follow replays the survivors' states from the kill on, in the order
// they were taken, and records when each coverage condition first held.
func (out *membersResult) follow(survivors []*memberRun, before map[string]memberState, n, victimObjects int) {
	var evs []memberState
	for _, m := range survivors {
		m.mu.Lock()
		for _, s := range m.states {
			if s.At >= out.killAt.UnixNano() {
				evs = append(evs, s)
			}
		}
		m.mu.Unlock()
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At < evs[j].At })
	cur := map[string]memberState{}
	for id, s := range before {
		cur[id] = s
	}
	out.target, out.processing, out.synced, out.reconciled = -1, -1, -1, -1
	since := func(s memberState) time.Duration { return time.Duration(s.At - out.killAt.UnixNano()) }
	lastProc := map[string]string{}
	for id, s := range before {
		lastProc[id] = informer.FormatRanges(s.Processing)
	}
	for _, s := range evs {
		cur[s.Identity] = s
		if p := informer.FormatRanges(s.Processing); p != lastProc[s.Identity] {
			out.timeline = append(out.timeline, fmt.Sprintf("+%.3fs %s processes %.4f of the space (target %.4f)", since(s).Seconds(), s.Identity, informer.RangesSize(s.Processing), informer.RangesSize(s.Target)))
			lastProc[s.Identity] = p
		}
		if overlapping(cur) {
			out.overlaps++
		}
		t, p, sy, r := coverage(cur, before, n, victimObjects)
		if t && out.target < 0 {
			out.target = since(s)
		}
		if p && out.processing < 0 {
			out.processing = since(s)
		}
		if sy && out.synced < 0 {
			out.synced = since(s)
		}
		if r && out.reconciled < 0 {
			out.reconciled = since(s)
		}
	}
}

// shardTable builds the shard scenario's table.
func shardTable(n int, seed time.Duration, single shardResult, mr *membersResult, mem0, mem1 procMemory) *Table {
	t := &Table{
		Title: fmt.Sprintf("shard (%d ConfigMaps of ~1 KiB; one unsharded controller vs %d sharded ring members, each in its own process; kube-apiserver with ShardedListAndWatch on)", n, ShardMembers),
		Cols:  [2]string{"sharded member", "single member"},
	}
	var rs []shardResult
	for _, m := range mr.members {
		rs = append(rs, m.res)
	}
	stat := func(f func(shardResult) float64) (mx, mean float64) {
		for _, r := range rs {
			v := f(r)
			mx = math.Max(mx, v)
			mean += v / float64(len(rs))
		}
		return
	}
	heap := func(r shardResult) float64 { return float64(r.HeapBytes) / mib }
	bytes := func(r shardResult) float64 { return float64(r.InformerBytes) / mib }
	cpu := func(r shardResult) float64 { return r.CPUMs }
	objs := func(r shardResult) float64 { return float64(r.Objects) }
	sync := func(r shardResult) float64 { return r.SyncMs }
	for _, m := range []struct {
		name, unit string
		f          func(shardResult) float64
		target     float64
	}{
		{"live heap after sync (after GC, minus the process's baseline)", "MB", heap, 0.3},
		{"bytes received by the informer, start → synced (response bodies)", "MB", bytes, 0.3},
		{"CPU time (user+sys), start → initial list reconciled", "ms", cpu, 0.3},
	} {
		mx, mean := stat(m.f)
		t.Add(Row{Metric: m.name + ", max of the members", Unit: m.unit, Kdyn: mx, ClientGo: m.f(single), Target: fmt.Sprintf("≤ %.1f×", m.target), Check: ratioAtMost(m.target)})
		t.Add(Row{Metric: m.name + ", mean of the members", Unit: m.unit, Kdyn: mean, ClientGo: m.f(single), Target: fmt.Sprintf("≤ %.1f×", m.target), Check: ratioAtMost(m.target)})
	}
	mx, mean := stat(objs)
	t.Add(Row{Metric: "objects cached, max / mean of the members", Kdyn: mx, ClientGo: objs(single), Target: "—", Note: fmt.Sprintf("mean %.0f", mean)})
	mx, mean = stat(sync)
	t.Add(Row{Metric: "informer sync time, max of the members (all four start together)", Unit: "ms", Kdyn: mx, ClientGo: sync(single), Target: "—", Note: fmt.Sprintf("mean %.0f ms", mean)})

	// Throughput over the initial list.
	var first, last, goAt int64 = math.MaxInt64, 0, math.MaxInt64
	var keys int64
	for _, r := range rs {
		first = min(first, r.FirstStart)
		last = max(last, r.LastEnd)
		goAt = min(goAt, r.GoAt)
		keys += r.Reconciled
	}
	aggregate := float64(keys) / (float64(last-first) / 1e9)
	one := float64(single.Reconciled) / (float64(single.LastEnd-single.FirstStart) / 1e9)
	t.Add(Row{Metric: fmt.Sprintf("reconcile throughput over the initial list (%d workers per process, %v per reconcile), all members together vs the single one", ShardWorkers, ShardReconcileCost), Unit: "keys/s", Kdyn: aggregate, ClientGo: one, Target: "≥ 3×", Check: ratioAtLeast(3)})
	t.Add(Row{Metric: "start → every key of the initial list reconciled", Unit: "s", Kdyn: float64(last-goAt) / 1e9, ClientGo: float64(single.LastEnd-single.GoAt) / 1e9, Target: "—"})
	served := 0
	for _, r := range rs {
		if r.ServerSharded && r.ShardKnown {
			served++
		}
	}
	t.Add(Row{Metric: "members whose server applied the shard selector (Informer.ServerSharded)", Kdyn: float64(served), ClientGo: math.NaN(), Target: fmt.Sprintf("= %d", len(rs)), Check: func(r Row) bool { return r.Kdyn == float64(len(rs)) }})
	secs := func(d time.Duration) float64 {
		if d < 0 {
			return math.NaN()
		}
		return d.Seconds()
	}
	t.Add(Row{Metric: fmt.Sprintf("after SIGKILL of %s: the survivors' assignment covers the whole space (its Lease seen expired)", mr.victim), Unit: "s", Kdyn: secs(mr.target), ClientGo: math.NaN(), Target: "—"})
	t.Add(Row{Metric: "after SIGKILL: the survivors' Processing ranges cover the whole space", Unit: "s", Kdyn: secs(mr.processing), ClientGo: math.NaN(), Target: "—"})
	t.Add(Row{Metric: fmt.Sprintf("after SIGKILL: full coverage — Processing covers the space and every survivor's informer has synced on its ranges (caches hold all %d)", n), Unit: "s", Kdyn: secs(mr.synced), ClientGo: math.NaN(), Target: "—"})
	t.Add(Row{Metric: fmt.Sprintf("after SIGKILL: every object of %s's share reconciled again by a survivor", mr.victim), Unit: "s", Kdyn: secs(mr.reconciled), ClientGo: math.NaN(), Target: "—"})
	t.Add(Row{Metric: "state samples after the kill in which two survivors processed one range (sampled every 5 ms; integration/shard's reconcile ledger is the proof)", Kdyn: float64(mr.overlaps), ClientGo: math.NaN(), Target: "= 0", Check: kdynAtMost(0)})

	t.Note("seeding: %d ConfigMaps (4 data keys of 256 B, 5 labels, 2 annotations) in %.1f s with %d concurrent creates and no client-side rate limit (%.0f objects/s); kube-apiserver+etcd process RSS after seeding %s, at the end %s", n, seed.Seconds(), fastSeedWorkers, float64(n)/seed.Seconds(), mem0, mem1)
	t.Note("each controller is a child process with a kdyn informer (full objects, managedFields stripped, streaming list) of the namespace's ConfigMaps and a controller.Controller with %d workers whose reconcile reads its object from the cache and sleeps %v (work of fixed duration, as a call to another system: a busy loop would make throughput CPU-bound, and 4 processes on 2 cores cannot reconcile 4× the CPU work); initial-list keys go in with AddInitial", ShardWorkers, ShardReconcileCost)
	t.Note("members: shard.Member (Leases in %s, LeaseDuration %v, RenewDeadline %v, RetryPeriod %v) with Options.Shard = the informer's Shard and Drainers = the controller, InformerOptions.Shard by UID, controller Owns = the object is cached and in the shard; they start together, and their informers and controllers start (GO) only once every member processes exactly its final quarter, so no member lists objects it holds only until the others join; the single controller runs first and alone", NSShardRing, shardLeaseDuration, shardRenewDeadline, shardRetryPeriod)
	t.Note("heap = HeapAlloc after two runtime.GC() once synced and every add delivered (the controller still reconciling), minus the same taken as the process started (the Go runtime and linked packages); bytes = response body bytes the informer's client read from start until synced (Lease traffic apart); CPU = getrusage user+sys from start until every initial key was reconciled, Lease renewals included; throughput = keys reconciled / (last reconcile end − first reconcile start) across all members")
	t.Note("kill: %s is killed with SIGKILL once all are idle; each survivor sends its state whenever it changes (sampled every 5 ms: Member.Target, Member.Processing, whether its informer completed a sync on its current ranges — an informer.Metrics Synced hook — cache size, reconciles, idle queue); the times are from the kill to the first sample where the condition holds for the survivors together", mr.victim)
	for _, r := range rs {
		t.RawLine("member %s: share %.4f, %d objects, sync %.0f ms (CPU %.0f ms), heap %.2f MB (baseline %.2f MB), informer %d requests %.2f MB, Leases %d requests %.2f MB, %d reconciles %.2f s, CPU %.0f ms, server sharded %v (known %v)",
			r.Identity, r.Share, r.Objects, r.SyncMs, r.SyncCPUMs, float64(r.HeapBytes)/mib, float64(r.BaseHeap)/mib, r.InformerReqs, float64(r.InformerBytes)/mib, r.LeaseReqs, float64(r.LeaseBytes)/mib, r.Reconciled, float64(r.LastEnd-r.FirstStart)/1e9, r.CPUMs, r.ServerSharded, r.ShardKnown)
	}
	t.RawLine("single: %d objects, sync %.0f ms (CPU %.0f ms), heap %.2f MB (baseline %.2f MB), informer %d requests %.2f MB, %d reconciles %.2f s, CPU %.0f ms",
		single.Objects, single.SyncMs, single.SyncCPUMs, float64(single.HeapBytes)/mib, float64(single.BaseHeap)/mib, single.InformerReqs, float64(single.InformerBytes)/mib, single.Reconciled, float64(single.LastEnd-single.FirstStart)/1e9, single.CPUMs)
	for _, l := range mr.timeline {
		t.RawLine("after the kill %s", l)
	}
	return t
}

// procMemory is a process's resident memory now and at its peak.
type procMemory struct {
	RSS, Peak int64 // bytes
}

func (m procMemory) String() string {
	if m.RSS == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MB (peak %.0f MB)", float64(m.RSS)/mib, float64(m.Peak)/mib)
}

// controlPlaneMemory reads the memory of the control plane's process
// (kube-apiserver with etcd embedded): the process whose command line
// holds the env's directory (its --etcd-dir).
func controlPlaneMemory(env *testenv.Env) (procMemory, error) {
	pid, err := controlPlanePID(env)
	if err != nil {
		return procMemory{}, err
	}
	st, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return procMemory{}, err
	}
	var m procMemory
	for _, l := range strings.Split(string(st), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(l, "VmRSS: %d kB", &kb); err == nil {
			m.RSS = kb << 10
		}
		if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kb); err == nil {
			m.Peak = kb << 10
		}
	}
	return m, nil
}

// controlPlanePID finds the process that runs env's control plane.
func controlPlanePID(env *testenv.Env) (string, error) {
	dir := env.Dir()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmd), "--etcd-dir\x00"+dir) {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("no process runs the control plane of %s", dir)
}

// processCPUTicks is a process's user and system CPU time, in clock ticks
// (/proc/PID/stat).
func processCPUTicks(pid string) (int64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	n, err := parseStatCPUTicks(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%s/stat: %w", pid, err)
	}
	return n, nil
}

// parseStatCPUTicks returns utime + stime from the text of /proc/PID/stat.
func parseStatCPUTicks(b []byte) (int64, error) {
	// The fields after the command name (which may hold spaces and
	// parentheses) start with the state; utime and stime are the 12th and
	// 13th after it.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q, stime %q", f[11], f[12])
	}
	return u + s, nil
}

// waitQuiet waits until the control plane has used under a tenth of a CPU
// over half a second (at most 30 s), so that a measurement does not share
// the two cores with work the server still does for the previous one. It
// returns how long it waited.
func waitQuiet(ctx context.Context, env *testenv.Env) time.Duration {
	t0 := time.Now()
	pid, err := controlPlanePID(env)
	if err != nil {
		time.Sleep(settleBetweenChildren)
		return time.Since(t0)
	}
	prev, err := processCPUTicks(pid)
	for err == nil && time.Since(t0) < 30*time.Second && ctx.Err() == nil {
		time.Sleep(500 * time.Millisecond)
		var now int64
		if now, err = processCPUTicks(pid); err == nil {
			if now-prev < 5 { // clock ticks are 10 ms: under 50 ms of CPU in 500 ms
				break
			}
			prev = now
		}
	}
	return time.Since(t0)
}
