package shard

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/internal/lease"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// world is members of one ring on a fake server, driven round by round
// on a clock the test moves, with the drains done in step.
type world struct {
	t       *testing.T
	client  dynamic.Interface
	clock   *testClock
	members map[string]*Member
	dead    map[string]bool
}

func newWorld(t *testing.T) *world {
	return &world{t: t, client: fake.NewClient(), clock: &testClock{now: time.Unix(1_700_000_000, 0)}, members: map[string]*Member{}, dead: map[string]bool{}}
}

func newTestShard(t *testing.T) *informer.Shard {
	t.Helper()
	sh, err := informer.NewShard(informer.ShardByUID)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func (w *world) join(id string) *Member {
	w.t.Helper()
	m, err := New(w.client, Options{Namespace: "kube-system", Ring: "gc", Identity: id, LeaseDuration: 15 * time.Second, Shard: newTestShard(w.t)})
	if err != nil {
		w.t.Fatal(err)
	}
	m.now = w.clock.Now
	if err := m.join(context.Background()); err != nil {
		w.t.Fatal(err)
	}
	w.members[id] = m
	return m
}

// checkDisjoint fails if two live members may process one hash at once.
func (w *world) checkDisjoint() {
	w.t.Helper()
	for a, ma := range w.members {
		for b, mb := range w.members {
			if a < b && !w.dead[a] && !w.dead[b] {
				if both := informer.IntersectRanges(ma.Processing(), mb.Processing()); len(both) > 0 {
					w.t.Fatalf("%s and %s both process %v", a, b, both)
				}
			}
		}
	}
}

// rounds runs a round of every member in ids, each followed by the drain
// its drain loop would make, n times.
func (w *world) rounds(n int, ids ...string) {
	w.t.Helper()
	for range n {
		for _, id := range ids {
			m := w.members[id]
			m.round(context.Background())
			m.mu.Lock()
			leaving := m.draining
			m.mu.Unlock()
			if err := m.drain(context.Background()); err != nil {
				w.t.Fatal(err)
			}
			m.mu.Lock()
			m.draining = informer.SubtractRanges(m.draining, leaving)
			m.mu.Unlock()
			w.checkDisjoint()
			w.clock.Step(time.Second)
		}
	}
}

func (w *world) share(id string) float64 { return informer.RangesSize(w.members[id].Processing()) }

func (w *world) covered() float64 {
	var total float64
	for id := range w.members {
		total += w.share(id)
	}
	return total
}

// One member takes everything; a second one joining gets half once the
// first has let it go; the shares cover the space exactly.
func TestMembersHandOver(t *testing.T) {
	w := newWorld(t)
	w.join("a")
	w.rounds(1, "a")
	if got := w.share("a"); got != 1 {
		t.Fatalf("a alone processes %.3f of the space", got)
	}
	w.join("b")
	w.rounds(3, "b", "a")
	if a, b := w.share("a"), w.share("b"); math.Abs(a-0.5) > 0.02 || math.Abs(b-0.5) > 0.02 || math.Abs(a+b-1) > 1e-9 {
		t.Fatalf("shares a %.3f, b %.3f", a, b)
	}
	w.join("c")
	w.rounds(3, "a", "c", "b")
	if got := w.covered(); math.Abs(got-1) > 1e-9 {
		t.Fatalf("three members cover %.3f of the space", got)
	}
	for _, id := range []string{"a", "b", "c"} {
		if s := w.share(id); math.Abs(s-1.0/3) > 0.02 {
			t.Errorf("%s has %.3f", id, s)
		}
	}
}

// A member that stops (no goodbye) keeps its ranges until its Lease has
// not changed for LeaseDuration; then the others take them.
func TestDeadMemberExpires(t *testing.T) {
	w := newWorld(t)
	w.join("a")
	w.join("b")
	w.rounds(3, "a", "b")
	bShare := w.share("b")
	// a dies: no more rounds. Within LeaseDuration b takes nothing of it.
	for range 7 {
		w.rounds(1, "b")
	}
	if got := w.share("b"); got != bShare {
		t.Fatalf("b took a's ranges after %v: %.3f → %.3f", 7*time.Second, bShare, got)
	}
	w.dead["a"] = true
	for range 10 {
		w.rounds(1, "b")
	}
	if got := w.share("b"); got != 1 {
		t.Fatalf("b processes %.3f after a's lease expired", got)
	}
}

// A claim that another member made at the same time (different views of
// the ring) is not started by either; the higher identity withdraws.
func TestContestedClaim(t *testing.T) {
	w := newWorld(t)
	a := w.join("a")
	w.rounds(1, "a")
	// b writes a claim on everything by hand, as a member with a stale
	// view would, before a's next round.
	b := w.join("b")
	b.held = []informer.HashRange{{From: 0, To: math.MaxUint64}}
	if err := b.write(context.Background()); err != nil {
		t.Fatal(err)
	}
	// a still processes everything (it claimed first); b, seeing a's
	// claim, must not start, and withdraws its contested claim.
	w.rounds(1, "b")
	if got := w.share("b"); got != 0 {
		t.Fatalf("b started on a contested range: %.3f", got)
	}
	l, err := w.client.Resource(lease.GVR).Namespace("kube-system").Get(context.Background(), "gc-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if held := l.GetAnnotations()[HeldAnnotation]; held == "0-ffffffffffffffff" {
		t.Fatalf("b kept its contested claim: %s", held)
	}
	w.rounds(3, "a", "b")
	if got := informer.RangesSize(a.Processing()) + informer.RangesSize(b.Processing()); math.Abs(got-1) > 1e-9 {
		t.Fatalf("coverage %.3f", got)
	}
}

// Options are checked.
func TestNewRefusesBadOptions(t *testing.T) {
	sh := newTestShard(t)
	for name, o := range map[string]Options{
		"no ring":            {Namespace: "n", Identity: "a", Shard: sh},
		"no shard":           {Namespace: "n", Ring: "r", Identity: "a"},
		"deadline ≥ lease":   {Namespace: "n", Ring: "r", Identity: "a", Shard: sh, LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second},
		"fractional lease":   {Namespace: "n", Ring: "r", Identity: "a", Shard: sh, LeaseDuration: 15500 * time.Millisecond},
		"timeout > deadline": {Namespace: "n", Ring: "r", Identity: "a", Shard: sh, RequestTimeout: 11 * time.Second},
		"negative weight":    {Namespace: "n", Ring: "r", Identity: "a", Shard: sh, Weight: -1},
	} {
		if _, err := New(fake.NewClient(), o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
