package shard_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/integration/testenv"
)

// memberProc is a ring member running in a child process.
type memberProc struct {
	id     string
	cmd    *exec.Cmd
	ledger string
	exited chan struct{} // closed when the process has exited
	out    *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMemberProc starts the test binary as member id of ring in ns,
// talking to env directly.
func startMemberProc(t *testing.T, env *testenv.Env, ns, ring, id, dir string) *memberProc {
	t.Helper()
	return startMemberProcWith(t, env.KubeconfigPath(testenv.Admin), ns, ring, id, dir)
}

// startMemberProcWith starts the test binary as member id of ring in ns,
// with the kubeconfig file kubeconfig; its ledger is dir/id.ledger.
func startMemberProcWith(t *testing.T, kubeconfig, ns, ring, id, dir string) *memberProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &memberProc{id: id, ledger: filepath.Join(dir, id+".ledger"), exited: make(chan struct{}), out: &lockedBuffer{}}
	p.cmd = exec.Command(exe)
	p.cmd.Env = append(os.Environ(), memberEnv+"=1", "KUBECONFIG="+kubeconfig,
		"SHARD_NS="+ns, "SHARD_RING="+ring, "SHARD_ID="+id, "SHARD_LEDGER="+p.ledger)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // in case a test left it stopped
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("member %s did not stop within 20 s of SIGTERM", id)
		}
		if t.Failed() {
			out := p.out.String()
			if len(out) > 20000 {
				out = "…" + out[len(out)-20000:]
			}
			t.Logf("member %s output:\n%s", id, out)
		}
	})
	return p
}

// entry is one reconcile from a ledger: when the member acted on the key
// under its fence, from start to end (an aborted reconcile acted at its
// start only).
type entry struct {
	member     string
	key, rv    string
	start, end int64
	aborted    bool
}

// ledgers is what the members' ledgers hold. Their times are on
// CLOCK_MONOTONIC (testenv.MonoNow).
type ledgers struct {
	entries []entry
	// renewals maps, per member, each write of its Lease it sent — by the
	// renewTime the write carried (Unix ns) — to the moment it was sent.
	renewals map[string]map[int64]int64
}

// readLedgers reads every member's ledger. A reconcile of a killed member
// (killed: member → CLOCK_MONOTONIC time) that has no end ran until its
// kill; one still running in a live member has acted at its start so far.
func readLedgers(t *testing.T, ms []*memberProc, killed map[string]int64) ledgers {
	t.Helper()
	l := ledgers{renewals: map[string]map[int64]int64{}}
	for _, m := range ms {
		f, err := os.Open(m.ledger)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		renewals := map[int64]int64{}
		l.renewals[m.id] = renewals
		open := map[string]entry{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var what, key, rv string
			var at int64
			if _, err := fmt.Sscanf(sc.Text(), "%s %s %s %d", &what, &key, &rv, &at); err != nil {
				continue // a line cut by a kill
			}
			switch what {
			case "renew":
				// a retried write is noted again: the first note is the send
				if renewTime, err := strconv.ParseInt(key, 10, 64); err == nil {
					if _, seen := renewals[renewTime]; !seen {
						renewals[renewTime] = at
					}
				}
			case "start":
				open[key] = entry{member: m.id, key: key, rv: rv, start: at}
			case "end", "abort":
				e, ok := open[key]
				if !ok {
					continue
				}
				delete(open, key)
				if e.aborted = what == "abort"; e.aborted {
					e.end = e.start
				} else {
					e.end = at
				}
				l.entries = append(l.entries, e)
			}
		}
		f.Close()
		for _, e := range open {
			e.end = e.start
			if at, ok := killed[m.id]; ok {
				e.end = at
			}
			l.entries = append(l.entries, e)
		}
	}
	return l
}

// TestMembershipChanges runs three members in processes while writers
// change objects; a fourth joins and one is killed with SIGKILL (no
// goodbye). After LeaseDuration and a sync, every change is processed
// again, and the reconcile ledgers show no key processed by two members at
// overlapping times.
func TestMembershipChanges(t *testing.T) {
	env := testenv.Shared(t)
	c := client(t, env)
	ns := newNamespace(t, c, "shard-ring")
	const n = 1000
	createConfigMaps(t, c, ns, n)
	dir := t.TempDir()
	leases := watchLeases(t, c, ns, "ledger")
	var ms []*memberProc
	for _, id := range []string{"m1", "m2", "m3"} {
		ms = append(ms, startMemberProc(t, env, ns, "ledger", id, dir))
	}

	// Writers change objects all along.
	ctx, stopWriters := context.WithCancel(context.Background())
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for ctx.Err() == nil {
				name := fmt.Sprintf("cm-%05d", rng.IntN(n))
				patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, rng.Int())
				if _, err := c.Resource(cmGVR).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err == nil {
					writes.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	time.Sleep(4 * time.Second)
	ms = append(ms, startMemberProc(t, env, ns, "ledger", "m4", dir))
	time.Sleep(4 * time.Second)
	killed := ms[1]
	_ = killed.cmd.Process.Signal(syscall.SIGKILL)
	<-killed.exited
	killedAt := time.Now()
	kills := map[string]int64{killed.id: testenv.MonoNow()}
	time.Sleep(6 * time.Second) // past LeaseDuration (3 s) after the kill
	stopWriters()
	wg.Wait()
	t.Logf("%d writes; %s killed", writes.Load(), killed.id)

	// Coverage: every object's last version is reconciled by a live
	// member.
	var final map[string]string
	eventually(t, 90*time.Second, "every object's last version reconciled", func() (bool, string) {
		l, err := c.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		final = map[string]string{}
		for _, o := range l.Items {
			final[ns+"/"+o.GetName()] = o.GetResourceVersion()
		}
		done := map[string]bool{}
		for _, e := range readLedgers(t, ms, kills).entries {
			if final[e.key] == e.rv && e.member != killed.id && !e.aborted {
				done[e.key] = true
			}
		}
		if len(done) != len(final) {
			return false, fmt.Sprintf("%d of %d objects have their last version reconciled", len(done), len(final))
		}
		return true, ""
	})
	t.Logf("coverage complete %v after the kill", time.Since(killedAt).Round(time.Millisecond))

	// Safety: no key processed by two members at overlapping times, none
	// past its renew deadline, none on a stale version.
	recorded := leases.snapshot() // before the ledgers are read: see snapshot
	v := judge(t, readLedgers(t, ms, kills), recorded, memberRenewDeadline)
	t.Logf("LEDGER %s: %s", t.Name(), v)
	if v.overlapPairs > 0 || v.afterDeadline > 0 || v.stale > 0 || v.unknownRenew > 0 {
		t.Fatalf("the ledgers break the guarantee: %s", v)
	}
}

// stamp formats a ledger time (CLOCK_MONOTONIC, ns) for the logs.
func stamp(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64) + " s on " + testenv.MonoClockName
}
