// Package leaderelection_test proves that kdyn's leaderelection and
// client-go's tools/leaderelection (with a LeaseLock) interoperate: on one
// Lease, against a real kube-apiserver v1.37.2, a kdyn candidate and a
// client-go candidate elect exactly one leader between them, and
// leadership passes from one library to the other in both directions, by
// release and by expiry, with no two terms overlapping.
package leaderelection_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	cgrest "k8s.io/client-go/rest"
	cgleaderelection "k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/leaderelection"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(envFaultCandidate); spec != "" {
		os.Exit(faultCandidateMain(spec))
	}
	os.Exit(testenv.Main(m, testenv.Options{}))
}

// Both libraries use the same durations. client-go's leaders count their
// renew deadline from RetryPeriod after their last renewal, and its
// candidates compare records at one-second precision, so LeaseDuration −
// RenewDeadline must exceed RetryPeriod plus a second: 4 s − 2 s does.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

const namespace = "default"

var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// term is one candidate's time as leader, by its own callbacks.
type term struct {
	id         string
	start, end time.Time
}

// ledger collects every candidate's terms.
type ledger struct {
	mu      sync.Mutex
	open    map[string]time.Time
	terms   []term
	started chan string
}

func newLedger() *ledger {
	return &ledger{open: map[string]time.Time{}, started: make(chan string, 100)}
}

// lead is an OnStartedLeading that records the term.
func (l *ledger) lead(id string) func(ctx context.Context) {
	return func(ctx context.Context) {
		l.mu.Lock()
		l.open[id] = time.Now()
		l.mu.Unlock()
		l.started <- id
		<-ctx.Done()
		end := time.Now()
		l.mu.Lock()
		l.terms = append(l.terms, term{id: id, start: l.open[id], end: end})
		delete(l.open, id)
		l.mu.Unlock()
	}
}

func (l *ledger) nextStart(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case id := <-l.started:
		return id
	case <-time.After(within):
		t.Fatalf("nobody started leading within %v", within)
		return ""
	}
}

// candidate is a running kdyn or client-go candidate.
type candidate struct {
	id   string
	stop context.CancelFunc
	done chan struct{}
}

func (c *candidate) end(t *testing.T) {
	t.Helper()
	c.stop()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop", c.id)
	}
}

type rig struct {
	t     *testing.T
	env   *testenv.Env
	lease string
	led   *ledger
}

func (r *rig) run(id string, run func(ctx context.Context)) *candidate {
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{id: id, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		run(ctx)
	}()
	r.t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

// kdyn starts a kdyn candidate.
func (r *rig) kdyn(id string, release bool) *candidate {
	r.t.Helper()
	client, err := dynamic.NewForConfig(r.env.RESTConfig(testenv.Admin))
	if err != nil {
		r.t.Fatal(err)
	}
	e, err := leaderelection.New(client, leaderelection.Config{
		Namespace: namespace, Name: r.lease, Identity: id,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: release,
		Callbacks:       leaderelection.Callbacks{OnStartedLeading: r.led.lead(id)},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return r.run(id, func(ctx context.Context) {
		if err := e.Run(ctx); err != nil {
			r.t.Errorf("%s: %v", id, err)
		}
	})
}

// clientGo starts a client-go candidate with a LeaseLock.
func (r *rig) clientGo(id string, release bool) *candidate {
	r.t.Helper()
	cfg := &cgrest.Config{Host: r.env.Host(), BearerToken: r.env.AdminToken(), TLSClientConfig: cgrest.TLSClientConfig{CAData: r.env.CAData()}}
	leases, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	le, err := cgleaderelection.NewLeaderElector(cgleaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: r.lease},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: release,
		Name:            r.lease,
		Callbacks: cgleaderelection.LeaderCallbacks{
			OnStartedLeading: r.led.lead(id),
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return r.run(id, le.Run)
}

// record reads the Lease's holder and transitions.
func (r *rig) record() (holder string, transitions int64) {
	r.t.Helper()
	client, err := dynamic.NewForConfig(r.env.RESTConfig(testenv.Admin))
	if err != nil {
		r.t.Fatal(err)
	}
	u, err := client.Resource(leaseGVR).Namespace(namespace).Get(context.Background(), r.lease, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	holder, _, _ = unstructured.NestedString(u.Object, "spec", "holderIdentity")
	transitions, _, _ = unstructured.NestedInt64(u.Object, "spec", "leaseTransitions")
	return holder, transitions
}

// start starts a candidate of lib ("kdyn" or "client-go").
func (r *rig) start(lib, id string, release bool) *candidate {
	r.t.Helper()
	if lib == "kdyn" {
		return r.kdyn(id, release)
	}
	return r.clientGo(id, release)
}

// checkTerms fails the test if two recorded terms overlap, and returns the
// terms and the smallest gap between two.
func (r *rig) checkTerms() ([]term, time.Duration) {
	r.t.Helper()
	r.led.mu.Lock()
	terms := slices.Clone(r.led.terms)
	r.led.mu.Unlock()
	slices.SortFunc(terms, func(a, b term) int { return a.start.Compare(b.start) })
	minGap := time.Duration(1<<63 - 1)
	for i := 1; i < len(terms); i++ {
		gap := terms[i].start.Sub(terms[i-1].end)
		if gap <= 0 {
			r.t.Errorf("two leaders at once: %s led until %v and %s from %v (overlap %v)",
				terms[i-1].id, terms[i-1].end.Format(time.StampMicro), terms[i].id, terms[i].start.Format(time.StampMicro), -gap)
		}
		minGap = min(minGap, gap)
	}
	return terms, minGap
}

// TestOneLeaderFromARace starts a kdyn and a client-go candidate at once
// on a Lease that does not exist yet: one creates it and leads, the other
// finds it held and waits, renewal after renewal.
func TestOneLeaderFromARace(t *testing.T) {
	env := testenv.Shared(t)
	for round := range 2 {
		r := &rig{t: t, env: env, lease: fmt.Sprintf("interop-race-%d", rand.IntN(1_000_000)), led: newLedger()}
		var k, g *candidate
		if round%2 == 0 { // each library gets a head start once
			k, g = r.kdyn("kdyn", true), r.clientGo("client-go", true)
		} else {
			g, k = r.clientGo("client-go", true), r.kdyn("kdyn", true)
		}
		leader := r.led.nextStart(t, 10*time.Second)
		time.Sleep(leaseDuration + 2*retryPeriod) // past the first lease: renewals keep it
		select {
		case other := <-r.led.started:
			t.Fatalf("round %d: %s and %s both lead", round+1, leader, other)
		default:
		}
		if holder, transitions := r.record(); holder != leader || transitions != 0 {
			t.Errorf("round %d: lease holder %q, transitions %d; want %q, 0", round+1, holder, transitions, leader)
		}
		t.Logf("round %d: %s leads", round+1, leader)
		k.end(t)
		g.end(t)
		r.checkTerms()
	}
}

// TestLeadershipPassesBetweenKdynAndClientGo hands leadership back and
// forth between the libraries, by release and by expiry (a leader that
// stops without releasing, as a killed one would), and checks that the
// intended candidate takes over, that the Lease counts each transition,
// and that no two terms overlap.
func TestLeadershipPassesBetweenKdynAndClientGo(t *testing.T) {
	env := testenv.Shared(t)
	r := &rig{t: t, env: env, lease: fmt.Sprintf("interop-%d", rand.IntN(1_000_000)), led: newLedger()}
	// Each candidate leads in turn; its release setting decides how it
	// hands over to the next.
	seq := []struct {
		lib     string
		release bool
	}{
		{"kdyn", true},       // kdyn → client-go, by release
		{"client-go", true},  // client-go → kdyn, by release
		{"kdyn", false},      // kdyn → client-go, by expiry
		{"client-go", false}, // client-go → kdyn, by expiry
		{"kdyn", true},       // kdyn → client-go, by release
		{"client-go", true},  // client-go → kdyn, by release
		{"kdyn", true},
	}
	within := leaseDuration + 2*retryPeriod + 3*time.Second
	cur := r.start(seq[0].lib, seq[0].lib+"-0", seq[0].release)
	if id := r.led.nextStart(t, within); id != cur.id {
		t.Fatalf("%s leads, want %s", id, cur.id)
	}
	var handovers []string
	for i := 1; i < len(seq); i++ {
		next := r.start(seq[i].lib, fmt.Sprintf("%s-%d", seq[i].lib, i), seq[i].release)
		time.Sleep(3 * retryPeriod) // next sees the lease held and renewed
		_, before := r.record()
		how := map[bool]string{true: "release", false: "expiry"}[seq[i-1].release]
		stoppedAt := time.Now()
		cur.end(t)
		id := r.led.nextStart(t, within)
		took := time.Since(stoppedAt)
		holder, after := r.record()
		if id != next.id || holder != next.id {
			t.Errorf("%s stopped: %s leads (lease: %q), want %s", cur.id, id, holder, next.id)
		}
		if after != before+1 {
			t.Errorf("%s → %s: leaseTransitions %d → %d, want +1", cur.id, next.id, before, after)
		}
		if seq[i-1].release && took > 2*retryPeriod+time.Second {
			t.Errorf("%s → %s by release took %v", cur.id, next.id, took)
		}
		handovers = append(handovers, fmt.Sprintf("%s → %s by %s in %v", cur.id, id, how, took.Round(time.Millisecond)))
		cur = next
	}
	cur.end(t)
	terms, minGap := r.checkTerms()
	if len(terms) != len(seq) {
		t.Errorf("%d terms, want %d", len(terms), len(seq))
	}
	for _, h := range handovers {
		t.Log(h)
	}
	t.Logf("%d terms, none overlapping; smallest gap between terms %v", len(terms), minGap)
}
