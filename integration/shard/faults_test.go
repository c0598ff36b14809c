package shard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/shard"
)

// The timing of the members in child processes (memberMain): short, so a
// fault test sees expiries and hand-overs within seconds.
const (
	memberLeaseDuration = 3 * time.Second
	memberRenewDeadline = 2 * time.Second
	memberRetryPeriod   = 300 * time.Millisecond
)

var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// faultObjects is how many ConfigMaps the fault tests shard.
const faultObjects = 3000

// seeded holds, per control plane, the namespace of faultObjects
// ConfigMaps that every fault test on it shares (each with a ring of its
// own).
var seeded struct {
	mu sync.Mutex
	ns map[*testenv.Env]string
}

func seededNamespace(t *testing.T, env *testenv.Env, c dynamic.Interface) string {
	t.Helper()
	seeded.mu.Lock()
	defer seeded.mu.Unlock()
	if ns, ok := seeded.ns[env]; ok {
		return ns
	}
	ns := newNamespace(t, c, "shard-faults")
	createConfigMaps(t, c, ns, faultObjects)
	if seeded.ns == nil {
		seeded.ns = map[*testenv.Env]string{}
	}
	seeded.ns[env] = ns
	return ns
}

// TestMemberFaults runs three members (child processes, each behind a
// fault proxy of its own) over 3,000 ConfigMaps while writers change them,
// and breaks one member in four ways, with the ShardedListAndWatch gate on
// and off:
//
//   - paused: SIGSTOP for LeaseDuration + 2 s, then SIGCONT;
//   - cut off for longer than RenewDeadline (every connection dropped and
//     refused for RenewDeadline + 2 s);
//   - cut off for less (RenewDeadline / 2);
//   - its reads of Leases slowed by 4 s for 8 s.
//
// The reconcile ledgers must show no two members acting on one key at
// overlapping times, no member acting later than RenewDeadline after it
// sent the last renewal of its Lease that the server recorded (each write
// is known by the renewTime it carried; times are on CLOCK_MONOTONIC, which
// the member's deadline counts with and a wall clock set right after a
// suspended machine resumes does not disturb), no member acting on an older
// version of an object than another member had already acted on, and
// every object's final version reconciled.
func TestMemberFaults(t *testing.T) {
	faults := []struct {
		name   string
		inject func(t *testing.T, r *faultRing, victim *memberProc)
	}{
		{"paused", func(t *testing.T, r *faultRing, v *memberProc) {
			if err := v.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(memberLeaseDuration + 2*time.Second)
			if err := v.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}},
		{"cut longer than RenewDeadline", func(t *testing.T, r *faultRing, v *memberProc) {
			d := memberRenewDeadline + 2*time.Second
			r.proxies[v.id].Down(d)
			time.Sleep(d)
		}},
		{"cut shorter than RenewDeadline", func(t *testing.T, r *faultRing, v *memberProc) {
			d := memberRenewDeadline / 2
			r.proxies[v.id].Down(d)
			time.Sleep(d)
		}},
		{"lease reads slowed", func(t *testing.T, r *faultRing, v *memberProc) {
			p := r.proxies[v.id]
			p.DelayMatching(4*time.Second, -1, faultproxy.Method(http.MethodGet,
				faultproxy.PathPrefix("/apis/coordination.k8s.io/v1/namespaces/"+r.ns+"/leases")))
			time.Sleep(8 * time.Second)
			p.Reset()
		}},
	}
	for _, gate := range []struct {
		name string
		env  func(t *testing.T) *testenv.Env
	}{
		{"gate on", func(t *testing.T) *testenv.Env { return testenv.Shared(t) }},
		{"gate off", gateOffEnv},
	} {
		t.Run(gate.name, func(t *testing.T) {
			for _, f := range faults {
				t.Run(f.name, func(t *testing.T) {
					r := startFaultRing(t, gate.env(t), 3)
					r.run(t, func() { f.inject(t, r, r.members[0]) })
				})
			}
		})
	}
}

// faultRing is a ring of members in child processes, each behind its own
// fault proxy, with writers changing the objects and a recorder of every
// write of the ring's Leases.
type faultRing struct {
	env     *testenv.Env
	c       *dynamic.DynamicClient
	ns      string
	ring    string
	members []*memberProc
	proxies map[string]*faultproxy.Proxy
	leases  *leaseLog
}

func startFaultRing(t *testing.T, env *testenv.Env, n int) *faultRing {
	t.Helper()
	c := client(t, env)
	r := &faultRing{env: env, c: c, ns: seededNamespace(t, env, c),
		ring: fmt.Sprintf("faults-%06d", rand.IntN(1_000_000)), proxies: map[string]*faultproxy.Proxy{}}
	r.leases = watchLeases(t, c, r.ns, r.ring)
	dir := t.TempDir()
	for i := range n {
		id := fmt.Sprintf("m%d", i+1)
		p := faultproxy.NewForTest(t, faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
		r.proxies[id] = p
		kc := filepath.Join(dir, id+".kubeconfig")
		if err := p.WriteKubeconfig(kc, env.AdminToken(), ""); err != nil {
			t.Fatal(err)
		}
		r.members = append(r.members, startMemberProcWith(t, kc, r.ns, r.ring, id, dir))
	}
	return r
}

// run waits for the ring to settle, starts the writers, injects the fault,
// waits for the ring to settle again, stops the writers, waits until every
// object's last version is reconciled, and checks the ledgers.
func (r *faultRing) run(t *testing.T, inject func()) {
	t.Helper()
	r.waitSettled(t, "before the fault")
	ctx, stopWriters := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				name := fmt.Sprintf("cm-%05d", rng.IntN(faultObjects))
				patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, rng.Int())
				_, _ = r.c.Resource(cmGVR).Namespace(r.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	time.Sleep(2 * time.Second)
	faultAt := time.Now()
	inject()
	t.Logf("fault on %s from %s for %v", r.members[0].id, faultAt.Format("15:04:05.000"), time.Since(faultAt).Round(time.Millisecond))
	r.waitSettled(t, "after the fault")
	time.Sleep(time.Second)
	stopWriters()
	wg.Wait()

	// Every object's last version reconciled (by any member).
	l, err := r.c.Resource(cmGVR).Namespace(r.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]string{}
	for _, o := range l.Items {
		final[r.ns+"/"+o.GetName()] = o.GetResourceVersion()
	}
	var missed []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := map[string]bool{}
		for _, e := range readLedgers(t, r.members, nil).entries {
			if !e.aborted && final[e.key] == e.rv {
				done[e.key] = true
			}
		}
		missed = missed[:0]
		for k := range final {
			if !done[k] {
				missed = append(missed, k)
			}
		}
		if len(missed) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	sort.Strings(missed)

	recorded := r.leases.snapshot() // before the ledgers are read: see snapshot
	v := judge(t, readLedgers(t, r.members, nil), recorded, memberRenewDeadline)
	v.missed = len(missed)
	t.Logf("LEDGER %s: %s", t.Name(), v)
	if len(missed) > 0 {
		t.Errorf("%d of %d objects' last versions were never reconciled (first: %v)", len(missed), len(final), missed[:min(5, len(missed))])
	}
	if v.overlapPairs > 0 || v.afterDeadline > 0 || v.stale > 0 || v.unknownRenew > 0 {
		t.Errorf("the ledgers break the guarantee: %s", v)
	}
}

// waitSettled waits until every member's Lease is renewed and their held
// ranges are disjoint and cover the whole space.
func (r *faultRing) waitSettled(t *testing.T, when string) {
	t.Helper()
	eventually(t, 90*time.Second, "the ring to settle "+when, func() (bool, string) {
		l, err := r.c.Resource(leaseGVR).Namespace(r.ns).List(t.Context(), metav1.ListOptions{LabelSelector: shard.RingLabel + "=" + r.ring})
		if err != nil {
			return false, err.Error()
		}
		if len(l.Items) != len(r.members) {
			return false, fmt.Sprintf("%d leases", len(l.Items))
		}
		var all []informer.HashRange
		total := 0.0
		for _, u := range l.Items {
			held, err := informer.ParseRanges(u.GetAnnotations()[shard.HeldAnnotation])
			if err != nil {
				return false, err.Error()
			}
			if len(held) == 0 {
				return false, u.GetName() + " holds nothing"
			}
			all = append(all, held...)
			total += informer.RangesSize(held)
		}
		merged, err := informer.MergeRanges(all)
		if err != nil {
			return false, err.Error()
		}
		if total != 1 || informer.RangesSize(merged) != 1 {
			return false, fmt.Sprintf("held ranges cover %.4f of the space, %.4f counted with overlaps", informer.RangesSize(merged), total)
		}
		return true, ""
	})
}

// leaseLog records, per member, the renewTime of every write of its
// Lease that the server accepted, as a watch from the test process sees
// them.
type leaseLog struct {
	mu       sync.Mutex
	renewals map[string][]int64 // identity → renewTime (Unix ns), in order
	// watchErrors counts the error events the watch ended with (it then
	// resumed from the last version it had seen).
	watchErrors int
}

func watchLeases(t *testing.T, c dynamic.Interface, ns, ring string) *leaseLog {
	t.Helper()
	ll := &leaseLog{renewals: map[string][]int64{}}
	leases := c.Resource(leaseGVR).Namespace(ns)
	opts := metav1.ListOptions{LabelSelector: shard.RingLabel + "=" + ring}
	l, err := leases.List(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		ll.record(&l.Items[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		rv := l.GetResourceVersion()
		for ctx.Err() == nil {
			o := opts
			o.ResourceVersion = rv
			w, err := leases.Watch(ctx, o)
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type == watch.Error {
					// A Status: resume from the last version seen, so
					// that no renewal goes unrecorded.
					ll.mu.Lock()
					ll.watchErrors++
					ll.mu.Unlock()
					break
				}
				rv = u.GetResourceVersion()
				if ev.Type == watch.Added || ev.Type == watch.Modified {
					ll.record(u)
				}
			}
			w.Stop()
		}
	}()
	return ll
}

func (ll *leaseLog) record(u *unstructured.Unstructured) {
	holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	renew, _, _ := unstructured.NestedString(u.Object, "spec", "renewTime")
	at, err := time.Parse(time.RFC3339Nano, renew)
	if holder == "" || err != nil {
		return
	}
	ll.mu.Lock()
	defer ll.mu.Unlock()
	ll.renewals[holder] = append(ll.renewals[holder], at.UnixNano())
}

// snapshot returns a copy of what ll has recorded so far. Take it before
// reading the ledgers the renewals are judged with: a member notes each
// write of its Lease in its ledger before sending it, so a ledger read
// after the snapshot holds every renewal in it, where one read before may
// miss a renewal recorded since.
func (ll *leaseLog) snapshot() *leaseLog {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	c := &leaseLog{renewals: map[string][]int64{}, watchErrors: ll.watchErrors}
	for id, rs := range ll.renewals {
		c.renewals[id] = slices.Clone(rs)
	}
	return c
}

// lastRenewal returns when id sent the latest write of its Lease that the
// server recorded and that was sent not after at, on the ledgers' clock:
// sent maps the renewTimes id wrote to when it sent them. unknown counts
// recorded renewTimes id never noted sending.
func (ll *leaseLog) lastRenewal(id string, at int64, sent map[int64]int64) (last int64, ok bool, unknown int) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	for _, r := range ll.renewals[id] {
		s, noted := sent[r]
		if !noted {
			unknown++
			continue
		}
		if s <= at && (!ok || s > last) {
			last, ok = s, true
		}
	}
	return last, ok, unknown
}

// verdict is what the ledgers show.
type verdict struct {
	reconciles    int
	keys          int
	overlapPairs  int // pairs of two members' reconciles of one key at overlapping times
	overlapKeys   int // keys with at least one such pair
	afterDeadline int // reconciles that acted RenewDeadline or more after the member's last renewal
	unknownRenew  int // renewals the server recorded that no member noted sending
	stale         int // reconciles of an older version than another member had already acted on
	missed        int // objects whose last version was never reconciled
}

func (v verdict) String() string {
	return fmt.Sprintf("%d reconciles of %d keys; overlapping pairs %d (on %d keys); acting past the renew deadline %d; stale versions %d; last versions missed %d; renewals no member sent %d",
		v.reconciles, v.keys, v.overlapPairs, v.overlapKeys, v.afterDeadline, v.stale, v.missed, v.unknownRenew)
}

// judge checks entries against the guarantee, logging the first examples
// of each breach.
func judge(t *testing.T, l ledgers, leases *leaseLog, renewDeadline time.Duration) verdict {
	t.Helper()
	var v verdict
	entries := l.entries
	v.reconciles = len(entries)
	byKey := map[string][]entry{}
	for _, e := range entries {
		byKey[e.key] = append(byKey[e.key], e)
	}
	v.keys = len(byKey)
	for key, es := range byKey {
		sort.Slice(es, func(i, j int) bool { return es[i].start < es[j].start })
		overlapped := false
		for j, b := range es {
			for _, a := range es[:j] {
				if a.member != b.member && b.start < a.end {
					v.overlapPairs++
					overlapped = true
					if v.overlapPairs <= 5 {
						t.Logf("%s: %s acted from %s while %s acted until %s", key, b.member, stamp(b.start), a.member, stamp(a.end))
					}
				}
			}
			// Stale: an older version than one another member finished
			// acting on before this reconcile began.
			for _, a := range es[:j] {
				if a.member != b.member && !a.aborted && a.end <= b.start && rvLess(b.rv, a.rv) {
					v.stale++
					if v.stale <= 5 {
						t.Logf("%s: %s acted on version %s at %s after %s had acted on %s", key, b.member, b.rv, stamp(b.start), a.member, a.rv)
					}
					break
				}
			}
		}
		if overlapped {
			v.overlapKeys++
		}
	}
	if leases != nil {
		leases.mu.Lock()
		if leases.watchErrors > 0 {
			t.Logf("the Lease watch ended with an error %d times and resumed from its last version", leases.watchErrors)
		}
		leases.mu.Unlock()
		for id := range leases.renewals {
			if _, _, unknown := leases.lastRenewal(id, 0, l.renewals[id]); unknown > 0 {
				v.unknownRenew += unknown
				t.Logf("the server recorded %d renewals of %s's Lease that %s did not note sending", unknown, id, id)
			}
		}
		for _, e := range entries {
			for _, at := range []int64{e.start, e.end} {
				last, ok, _ := leases.lastRenewal(e.member, at, l.renewals[e.member])
				if !ok || time.Duration(at-last) >= renewDeadline {
					v.afterDeadline++
					switch {
					case v.afterDeadline > 5:
					case !ok:
						t.Logf("%s acted on %s at %s, before it sent any renewal of its Lease that the server recorded", e.member, e.key, stamp(at))
					default:
						t.Logf("%s acted on %s at %s, %v after it sent the last renewal the server recorded", e.member, e.key, stamp(at), time.Duration(at-last))
					}
					break
				}
			}
		}
	}
	return v
}

// rvLess compares two resourceVersions of one object. They are opaque to
// clients in general; kube-apiserver on etcd gives integers that grow, and
// this test relies on it.
func rvLess(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}
