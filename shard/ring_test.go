package shard

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdyn/kdyn/informer"
)

// owner returns who owns hash h, failing on none or two.
func owner(t *testing.T, a map[string][]informer.HashRange, h uint64) string {
	t.Helper()
	who := ""
	for id, rs := range a {
		for _, r := range rs {
			if h >= r.From && h <= r.To {
				if who != "" {
					t.Fatalf("%#x owned by %s and %s", h, who, id)
				}
				who = id
			}
		}
	}
	if who == "" {
		t.Fatalf("%#x owned by nobody", h)
	}
	return who
}

func members(ids ...string) []Node {
	out := make([]Node, len(ids))
	for i, id := range ids {
		out[i] = Node{Identity: id}
	}
	return out
}

// The ranges cover the whole space exactly once, and every member computes
// the same assignment whatever the order of the member list.
func TestAssignCoversTheSpaceOnce(t *testing.T) {
	a, err := Assign(members("gc-0", "gc-1", "gc-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, rs := range a {
		total += informer.RangesSize(rs)
	}
	if math.Abs(total-1) > 1e-12 {
		t.Fatalf("ranges cover %v of the space", total)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		owner(t, a, rng.Uint64())
	}
	for _, h := range []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1} {
		owner(t, a, h)
	}
	b, _ := Assign(members("gc-2", "gc-0", "gc-1"), 0)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("the order of members changed the assignment:\n%s", diff)
	}
}

// Every member holds its fair share to within a slice per member; weights
// scale shares.
func TestAssignBalances(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5} {
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprintf("controller-7d9f8-%c%d", 'a'+i, i))
		}
		a, _ := Assign(members(ids...), 0)
		for id, rs := range a {
			if share := informer.RangesSize(rs) * float64(n); math.Abs(share-1) > float64(n*n)/Partitions {
				t.Errorf("%d members: %s has %.3f of its fair share", n, id, share)
			}
		}
	}
	a, _ := Assign([]Node{{Identity: "big", Weight: 3}, {Identity: "small", Weight: 1}}, 0)
	if share := informer.RangesSize(a["big"]); share < 0.65 || share > 0.85 {
		t.Errorf("weight 3 of 4 got %.3f of the space", share)
	}
}

// A member joining takes about its share, and little else moves.
func TestAssignMovesLittle(t *testing.T) {
	before, _ := Assign(members("a", "b", "c"), 0)
	after, _ := Assign(members("a", "b", "c", "d"), 0)
	rng := rand.New(rand.NewPCG(3, 4))
	moved := 0
	for range 20000 {
		h := rng.Uint64()
		if owner(t, before, h) != owner(t, after, h) {
			moved++
		}
	}
	if frac := float64(moved) / 20000; frac < 0.2 || frac > 0.35 {
		t.Errorf("%.2f of the space moved as a fourth member joined, want a little over a quarter", frac)
	}
	for id, rs := range after {
		if len(rs) > Partitions/2 {
			t.Errorf("%s has %d ranges", id, len(rs))
		}
	}
}

func TestAssignRefusesBadMembers(t *testing.T) {
	for name, ms := range map[string][]Node{
		"no identity":     {{Identity: ""}},
		"twice":           {{Identity: "a"}, {Identity: "a"}},
		"negative weight": {{Identity: "a", Weight: -1}},
	} {
		if _, err := Assign(ms, 0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if a, err := Assign(nil, 0); err != nil || len(a) != 0 {
		t.Errorf("no members: %v, %v", a, err)
	}
}
