package leaderelection_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	cgrest "k8s.io/client-go/rest"
	cgleaderelection "k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/go-logr/zapr"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/leaderelection"
	"github.com/kdyn/kdyn/rest"
)

// The environment of a fault-test candidate process (faultCandidateMain).
const (
	envFaultCandidate = "KDYN_LE_FAULT_CANDIDATE" // LIB:ID; set, the binary is a candidate
	envFaultHost      = "KDYN_LE_FAULT_HOST"      // the proxy's URL
	envFaultCA        = "KDYN_LE_FAULT_CA"        // a file with the proxy's CA
	envFaultToken     = "KDYN_LE_FAULT_TOKEN"
	envFaultLease     = "KDYN_LE_FAULT_LEASE"
	envFaultLedger    = "KDYN_LE_FAULT_LEDGER" // the file its acts are appended to
)

// monoNow reads CLOCK_MONOTONIC, which every process on the machine shares
// and which NTP does not step: acts of different processes compare
// directly, and it counts the time a process is stopped.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// faultCandidateMain is a candidate in a process of its own, kdyn's or
// client-go's, that stands for election until SIGTERM (again after each
// loss) and, while it leads, acts every 2 ms: it reads the clock, checks
// its fence, and, if the fence holds, appends "act TERM MONO" to its
// ledger, the act standing for a write the Lease guards. kdyn's fence is
// Elector.IsLeader (false once the renew deadline has passed); client-go's
// is its term's context plus LeaderElector.IsLeader, the best it offers.
func faultCandidateMain(spec string) int {
	lib, id, _ := strings.Cut(spec, ":")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "candidate:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ca, err := os.ReadFile(os.Getenv(envFaultCA))
	if err != nil {
		return fail(err)
	}
	ledger, err := os.OpenFile(os.Getenv(envFaultLedger), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fail(err)
	}
	defer ledger.Close()
	term := 0
	act := func(ctx context.Context, fence func() bool) {
		term++
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
			at := monoNow()
			if fence() {
				fmt.Fprintf(ledger, "act %d %d\n", term, at)
			}
		}
	}
	host, token, lease := os.Getenv(envFaultHost), os.Getenv(envFaultToken), os.Getenv(envFaultLease)
	switch lib {
	case "kdyn":
		client, err := dynamic.NewForConfig(&rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
		if err != nil {
			return fail(err)
		}
		log, err := zap.NewProduction() // JSON lines on stderr
		if err != nil {
			return fail(err)
		}
		var e *leaderelection.Elector
		e, err = leaderelection.New(client, leaderelection.Config{
			Namespace: namespace, Name: lease, Identity: id, Logger: zapr.NewLogger(log),
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { act(ctx, e.IsLeader) }},
		})
		if err != nil {
			return fail(err)
		}
		for ctx.Err() == nil {
			if err := e.Run(ctx); err != nil && !errors.Is(err, leaderelection.ErrLeadershipLost) {
				return fail(err)
			}
		}
	case "client-go":
		leases, err := coordinationv1client.NewForConfig(&cgrest.Config{Host: host, BearerToken: token, TLSClientConfig: cgrest.TLSClientConfig{CAData: ca}})
		if err != nil {
			return fail(err)
		}
		var le *cgleaderelection.LeaderElector
		le, err = cgleaderelection.NewLeaderElector(cgleaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: lease},
				Client:     leases,
				LockConfig: resourcelock.ResourceLockConfig{Identity: id},
			},
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			Name: lease,
			Callbacks: cgleaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					act(ctx, func() bool { return ctx.Err() == nil && le.IsLeader() })
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			return fail(err)
		}
		for ctx.Err() == nil {
			le.Run(ctx) // returns when a term ends; stand again
		}
	default:
		return fail(fmt.Errorf("unknown library %q", lib))
	}
	return 0
}

// faultCandidate is a candidate process behind a fault proxy of its own.
type faultCandidate struct {
	lib, id string
	cmd     *exec.Cmd
	proxy   *faultproxy.Proxy
	ledger  string
	exited  chan struct{}
	stderr  *strings.Builder
	mu      sync.Mutex
}

func (c *faultCandidate) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

type lockedWriter struct{ c *faultCandidate }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.stderr.Write(p)
}

func startFaultCandidate(t *testing.T, env *testenv.Env, dir, lease, lib, id string) *faultCandidate {
	t.Helper()
	p := faultproxy.NewForTest(t, faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
	caFile := filepath.Join(dir, id+".ca")
	if err := os.WriteFile(caFile, p.CAData(), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &faultCandidate{lib: lib, id: id, proxy: p, ledger: filepath.Join(dir, id+".ledger"), exited: make(chan struct{}), stderr: &strings.Builder{}}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(),
		envFaultCandidate+"="+lib+":"+id, envFaultHost+"="+p.URL(), envFaultCA+"="+caFile,
		envFaultToken+"="+env.AdminToken(), envFaultLease+"="+lease, envFaultLedger+"="+c.ledger)
	c.cmd.Stderr = lockedWriter{c}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(20 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			out := c.output()
			if len(out) > 8000 {
				out = "…" + out[len(out)-8000:]
			}
			t.Logf("stderr of %s:\n%s", id, out)
		}
	})
	return c
}

// act is one act from a ledger.
type act struct {
	id   string
	term int
	at   int64
}

// readActs reads every candidate's acts, in time order.
func readActs(t *testing.T, cs []*faultCandidate) []act {
	t.Helper()
	var out []act
	for _, c := range cs {
		f, err := os.Open(c.ledger)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var a act
			if _, err := fmt.Sscanf(sc.Text(), "act %d %d", &a.term, &a.at); err != nil {
				continue
			}
			a.id = c.id
			out = append(out, a)
		}
		f.Close()
	}
	slices.SortFunc(out, func(a, b act) int { return cmp.Compare(a.at, b.at) })
	return out
}

// lastAct returns the latest act of any candidate, reading only the end
// of each ledger.
func lastAct(t *testing.T, cs []*faultCandidate) (act, bool) {
	t.Helper()
	var best act
	found := false
	for _, c := range cs {
		f, err := os.Open(c.ledger)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 256)
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		off := max(st.Size()-int64(len(buf)), 0)
		n, _ := f.ReadAt(buf, off)
		f.Close()
		lines := strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n")
		var a act
		if _, err := fmt.Sscanf(lines[len(lines)-1], "act %d %d", &a.term, &a.at); err != nil {
			continue
		}
		a.id = c.id
		if !found || a.at > best.at {
			best, found = a, true
		}
	}
	return best, found
}

// actingSpan is one term of one candidate: its first and last act.
type actingSpan struct {
	id          string
	term        int
	first, last int64
}

// spans returns every term's acting span, and the number of transitions:
// changes of the acting candidate between consecutive acts.
func spans(acts []act) ([]actingSpan, int) {
	byTerm := map[[2]any]*actingSpan{}
	var out []*actingSpan
	transitions := 0
	for i, a := range acts {
		if i > 0 && acts[i-1].id != a.id {
			transitions++
		}
		k := [2]any{a.id, a.term}
		s, ok := byTerm[k]
		if !ok {
			s = &actingSpan{id: a.id, term: a.term, first: a.at}
			byTerm[k] = s
			out = append(out, s)
		}
		s.last = a.at
	}
	res := make([]actingSpan, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res, transitions
}

// TestFaultsNeverTwoLeadersActing runs two kdyn candidates and a client-go
// candidate on one Lease, each in a process of its own behind its own
// fault proxy, acting every 2 ms while its fence holds. Whoever leads is
// broken in turn — a kdyn leader alternately paused (SIGSTOP past
// LeaseDuration) and cut off (its connections dropped and refused past
// LeaseDuration), the client-go leader cut off (pausing it would show
// client-go's fence, which does not check the renew deadline, acting
// once more on resume) — until leadership has passed at least 20 times.
// No two candidates' acting spans may overlap.
func TestFaultsNeverTwoLeadersActing(t *testing.T) {
	env := testenv.Shared(t)
	dir := t.TempDir()
	lease := fmt.Sprintf("le-faults-%d", rand.IntN(1_000_000))
	cs := []*faultCandidate{
		startFaultCandidate(t, env, dir, lease, "kdyn", "kdyn-a"),
		startFaultCandidate(t, env, dir, lease, "kdyn", "kdyn-b"),
		startFaultCandidate(t, env, dir, lease, "client-go", "client-go-c"),
	}
	byID := map[string]*faultCandidate{}
	for _, c := range cs {
		byID[c.id] = c
	}
	direct, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	leases := direct.Resource(leaseGVR).Namespace(namespace)
	const want = 20
	faultFor := leaseDuration + 2*time.Second
	counts := map[string]int{}
	deadline := time.Now().Add(8 * time.Minute)
	for i := 0; ; i++ {
		if i >= want {
			// Each fault has moved leadership at least once; count them.
			if _, n := spans(readActs(t, cs)); n >= want {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d transitions after %d faults", want, i)
		}
		// The current leader, once it acts.
		var victim *faultCandidate
		var why string
		waitFor(t, 30*time.Second, "a leader that acts", func() bool {
			holder := leaseHolder(leases, lease)
			now := monoNow()
			last, ok := lastAct(t, cs)
			if !ok {
				why = "no act yet; lease holder " + holder
				return false
			}
			why = fmt.Sprintf("lease holder %q; last act by %s %v ago", holder, last.id, time.Duration(now-last.at))
			victim = byID[holder]
			return victim != nil && last.id == holder && time.Duration(now-last.at) < 200*time.Millisecond
		}, &why)
		kind := "cut"
		if victim.lib == "kdyn" && counts[victim.lib+" pause"] <= counts[victim.lib+" cut"] {
			kind = "pause"
		}
		counts[victim.lib+" "+kind]++
		switch kind {
		case "pause":
			if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		case "cut":
			victim.proxy.Down(faultFor)
		}
		faultAt := monoNow()
		var next act
		waitFor(t, faultFor+10*time.Second, "another candidate to act", func() bool {
			a, ok := lastAct(t, cs)
			next = a
			return ok && a.id != victim.id
		}, nil)
		t.Logf("fault %d: %s %s; %s acts %v later", i+1, kind, victim.id, next.id, time.Duration(next.at-faultAt).Round(time.Millisecond))
		if kind == "pause" {
			time.Sleep(faultFor - leaseDuration) // resume well past the takeover
			if err := victim.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		} else {
			time.Sleep(time.Second)
			victim.proxy.Up()
		}
		time.Sleep(retryPeriod)
	}
	for _, c := range cs {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cs {
		select {
		case <-c.exited:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s did not exit", c.id)
		}
	}
	acts := readActs(t, cs)
	ss, transitions := spans(acts)
	overlaps := 0
	for i, a := range ss {
		for _, b := range ss[i+1:] {
			if a.id != b.id && a.first <= b.last && b.first <= a.last {
				overlaps++
				if overlaps <= 5 {
					t.Errorf("two leaders acting at once: %s (term %d) acted %v…%v, %s (term %d) %v…%v",
						a.id, a.term, time.Duration(a.first), time.Duration(a.last), b.id, b.term, time.Duration(b.first), time.Duration(b.last))
				}
			}
		}
	}
	t.Logf("faults: %v; %d acts in %d terms, %d transitions, %d overlapping pairs of terms", counts, len(acts), len(ss), transitions, overlaps)
	if transitions < want {
		t.Errorf("%d transitions, want at least %d", transitions, want)
	}
}

// leaseHolder reads the Lease's holder ("" when it cannot).
func leaseHolder(leases dynamic.ResourceInterface, name string) string {
	u, err := leases.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	return holder
}

// waitFor polls cond every 20 ms until it holds, failing after limit with
// *why, when set, saying what was seen last.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, why *string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			if why != nil {
				t.Fatalf("timed out after %v waiting for %s: %s", limit, what, *why)
			}
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
