package informer

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// The selector is KEP-5866's syntax: 16-digit hex bounds, an exclusive end,
// the end of the space as 0x10000000000000000, ranges joined with ||.
func TestShardSelector(t *testing.T) {
	s, err := NewShard(ShardByUID, HashRange{0x8000000000000000, math.MaxUint64}, HashRange{0, 0x3fffffffffffffff})
	if err != nil {
		t.Fatal(err)
	}
	want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || " +
		"shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
	if got := s.Selector(); got != want {
		t.Fatalf("selector\n%s\nwant\n%s", got, want)
	}
	ns, _ := NewShard(ShardByNamespace)
	if ns.Selector() != "" {
		t.Fatalf("a shard without ranges has selector %q", ns.Selector())
	}
	if _, err := NewShard("object.metadata.name"); err == nil {
		t.Fatal("an unknown key was accepted")
	}
	if err := s.Set(HashRange{5, 4}); err == nil {
		t.Fatal("a range that ends before it starts was accepted")
	}
}

// Overlapping and adjacent ranges merge; SplitRanges covers the space.
func TestShardRanges(t *testing.T) {
	s, _ := NewShard(ShardByUID, HashRange{10, 20}, HashRange{21, 30}, HashRange{25, 40}, HashRange{100, 200}, HashRange{math.MaxUint64 - 1, math.MaxUint64}, HashRange{math.MaxUint64, math.MaxUint64})
	want := []HashRange{{10, 40}, {100, 200}, {math.MaxUint64 - 1, math.MaxUint64}}
	if diff := cmp.Diff(want, s.Ranges()); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	for _, n := range []int{1, 2, 3, 4, 7} {
		parts := SplitRanges(n)
		all, _ := NewShard(ShardByUID, parts...)
		if diff := cmp.Diff([]HashRange{{0, math.MaxUint64}}, all.Ranges()); diff != "" {
			t.Errorf("SplitRanges(%d) does not cover the space exactly: %v", n, parts)
		}
	}
}

// Contains agrees with apimachinery's sharding package — the code the API
// server filters with — on thousands of UIDs and namespaces, at every
// boundary of a 4-way and a 3-way split.
func TestShardContainsMatchesTheServersSelector(t *testing.T) {
	for _, key := range []ShardKey{ShardByUID, ShardByNamespace} {
		for _, n := range []int{3, 4} {
			for i, r := range SplitRanges(n) {
				s, _ := NewShard(key, r)
				reqs := []sharding.ShardRangeRequirement{{Key: string(key), Start: fmt.Sprintf("0x%016x", r.From), End: endHex(r.To)}}
				want := sharding.NewSelector(reqs...)
				for j := range 3000 {
					u := &unstructured.Unstructured{}
					u.SetUID(types.UID(fmt.Sprintf("%08x-1111-2222-3333-%012x", j, j*7919)))
					u.SetNamespace(fmt.Sprintf("team-%d", j))
					ok, err := want.Matches(u)
					if err != nil {
						t.Fatal(err)
					}
					if got := s.Contains(u); got != ok {
						t.Fatalf("%s, shard %d of %d, uid %s ns %s: Contains = %v, the server's selector says %v", key, i, n, u.GetUID(), u.GetNamespace(), got, ok)
					}
				}
			}
		}
	}
	if got, want := fmt.Sprintf("%016x", Hash("abc")), sharding.HashField("abc"); got != want {
		t.Fatalf("Hash = %s, sharding.HashField = %s", got, want)
	}
}

func endHex(to uint64) string {
	if to == math.MaxUint64 {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", to+1)
}

// An informer with a Shard sends its selector, caches only the objects in
// its ranges (a server that ignores the selector sends them all), and on
// a change of ranges delivers the objects that left as deletes marked
// ShardMove, then syncs again with the new selector and adds those that
// entered.
func TestShardedInformerFollowsItsRanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		objs := make([]*unstructured.Unstructured, 0, 40)
		var in, out []string
		half := SplitRanges(2)
		first, _ := NewShard(ShardByUID, half[0])
		for i := range 40 {
			o := cm(fmt.Sprintf("o%02d", i), "5")
			o.SetUID(types.UID(fmt.Sprintf("%08x-4b1e-4c2d-9e3f-%012x", i*2654435761, i*40503)))
			objs = append(objs, o)
			if first.Contains(o) {
				in = append(in, o.GetName())
			} else {
				out = append(out, o.GetName())
			}
		}
		if len(in) == 0 || len(out) == 0 {
			t.Fatalf("test objects all on one side: %d in, %d out", len(in), len(out))
		}
		src := newScriptedSource()
		src.addList("10", "", nil, objs...) // the server ignores the selector
		src.addList("10", "", nil, objs[0]) // the probe: no shardInfo echo
		src.addList("10", "", nil, objs[0]) // the probe for a single hash value: an object all the same
		src.addWatch(nil)
		src.addList("20", "", nil, objs...)
		src.addWatch(nil)
		rec := newRecorder()
		opts := listWatch
		opts.Shard = first
		inf := startInformer(t, src, opts, nil)
		if _, err := inf.AddEventHandler(rec); err != nil {
			t.Fatal(err)
		}
		src.waitCall(t, "list")
		src.waitCall(t, "list")
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		waitUntil(t, inf.HasSynced)
		src.mu.Lock()
		probe, needle := src.listCalls[1], src.listCalls[2]
		src.mu.Unlock()
		if probe.Limit != 1 || probe.ResourceVersion != "" || probe.ShardSelector != first.Selector() {
			t.Fatalf("probe list: limit %d, resourceVersion %q, selector %q; want one object, consistent, with the shard's selector", probe.Limit, probe.ResourceVersion, probe.ShardSelector)
		}
		if want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')"; needle.Limit != 1 || needle.ShardSelector != want {
			t.Fatalf("second probe: limit %d, selector %q; want one object for the single hash value 0", needle.Limit, needle.ShardSelector)
		}
		if got := inf.Store().Len(); got != len(in) {
			t.Fatalf("cached %d objects, want the %d in the shard", got, len(in))
		}
		if o := src.lastWatch(); o.ShardSelector != first.Selector() {
			t.Fatalf("watch selector %q, want %q", o.ShardSelector, first.Selector())
		}
		if sharded, known := inf.ServerSharded(); sharded || !known {
			t.Fatalf("ServerSharded = %v, %v; the scripted server never echoes", sharded, known)
		}
		var wantEvents []string
		for _, n := range in {
			wantEvents = append(wantEvents, "add "+n+"@5 initial=true")
		}
		rec.expect(t, wantEvents...)

		// Move to the other half.
		if err := first.Set(half[1]); err != nil {
			t.Fatal(err)
		}
		src.waitCall(t, "list")
		src.waitCall(t, "watch")
		var moved, added []string
		for _, n := range in {
			moved = append(moved, "delete "+n+"@5 unknown=false move=true")
		}
		for _, n := range out {
			added = append(added, "add "+n+"@5 initial=false")
		}
		rec.expectSet(t, moved...) // first every object that left
		rec.expect(t, added...)    // then, from the relist, those that entered
		if got := inf.Store().Len(); got != len(out) {
			t.Fatalf("cached %d objects after the move, want %d", got, len(out))
		}
		src.mu.Lock()
		relist := src.listCalls[3]
		src.mu.Unlock()
		if !strings.Contains(relist.ShardSelector, "0x8000000000000000', '0x10000000000000000'") {
			t.Fatalf("relist selector %q", relist.ShardSelector)
		}
	})
}

var _ metav1.Object = (*unstructured.Unstructured)(nil)

// An informer whose shard has no range is synced and empty and asks the
// server nothing (an empty selector would ask for every object) until its
// ranges are set.
func TestEmptyShardAsksNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh, _ := NewShard(ShardByUID)
		src := newScriptedSource()
		o := cm("a", "5")
		o.SetUID("4b1e4c2d-9e3f-1111-2222-333344445555")
		src.addList("10", "", nil, o)
		src.addWatch(nil)
		opts := listWatch
		opts.Shard = sh
		inf := startInformer(t, src, opts, nil)
		waitUntil(t, inf.HasSynced)
		src.mu.Lock()
		lists := len(src.listCalls)
		src.mu.Unlock()
		if lists != 0 || inf.Store().Len() != 0 {
			t.Fatalf("an empty shard made %d lists and cached %d objects", lists, inf.Store().Len())
		}
		if err := sh.Set(HashRange{From: 0, To: math.MaxUint64}); err != nil {
			t.Fatal(err)
		}
		src.waitCall(t, "list")
		waitUntil(t, func() bool { _, ok := inf.Store().Get("ns/a"); return ok })
	})
}

// Without a shardInfo echo (a v1.37 server's lists of custom resources),
// the informer tells a server that applies the selector from one that
// ignores it by what it sends: a list for a single hash value that brings
// nothing, or a shard's empty list beside a resource that has objects.
// When the resource has no object, it cannot tell, and asks again before
// the next watch.
func TestShardProbeWithoutEcho(t *testing.T) {
	sh, _ := NewShard(ShardByUID, SplitRanges(2)[0])
	var in *unstructured.Unstructured
	for i := range 40 {
		o := cm(fmt.Sprintf("o%02d", i), "5")
		o.SetUID(types.UID(fmt.Sprintf("%08x-4b1e-4c2d-9e3f-%012x", i*2654435761, i*40503)))
		if sh.Contains(o) {
			in = o
			break
		}
	}
	for _, tc := range []struct {
		name           string
		lists          [][]*unstructured.Unstructured // the sync, then the probes
		sharded, known bool
	}{
		{"an object, none for a single hash", [][]*unstructured.Unstructured{{in}, {in}, {}}, true, true},
		{"an object for a single hash too", [][]*unstructured.Unstructured{{in}, {in}, {in}}, false, true},
		{"the shard empty, the resource not", [][]*unstructured.Unstructured{{}, {}, {in}}, true, true},
		{"no object at all", [][]*unstructured.Unstructured{{}, {}, {}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newScriptedSource()
				for _, l := range tc.lists {
					src.addList("10", "", nil, l...)
				}
				src.addWatch(nil)
				opts := listWatch
				opts.Shard = sh
				inf := startInformer(t, src, opts, nil)
				for range tc.lists {
					src.waitCall(t, "list")
				}
				src.waitCall(t, "watch")
				waitUntil(t, inf.HasSynced)
				if sharded, known := inf.ServerSharded(); sharded != tc.sharded || known != tc.known {
					t.Fatalf("ServerSharded = %v, %v; want %v, %v", sharded, known, tc.sharded, tc.known)
				}
				src.mu.Lock()
				defer src.mu.Unlock()
				if got := len(src.listCalls); got != len(tc.lists) {
					t.Fatalf("%d lists, want %d", got, len(tc.lists))
				}
				want := "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001')" // one hash value
				if len(tc.lists[1]) == 0 {
					want = "" // the whole resource
				}
				if sel := src.listCalls[2].ShardSelector; sel != want {
					t.Fatalf("the second probe asked for %q, want %q", sel, want)
				}
			})
		})
	}
}
