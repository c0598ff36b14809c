package shard_test

import (
	"fmt"

	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/shard"
)

// Every member computes the same assignment from the same member list:
// each gets about its weight's share of the hash space, and the ranges of
// a member become the shard selector its informers send.
func ExampleAssign() {
	members := []shard.Node{{Identity: "gc-0"}, {Identity: "gc-1"}, {Identity: "gc-2", Weight: 2}}
	ring, err := shard.Assign(members, 0)
	if err != nil {
		panic(err)
	}
	total := 0.0
	for _, m := range members {
		share := informer.RangesSize(ring[m.Identity])
		total += share
		fmt.Printf("%s: %.0f%% of the space\n", m.Identity, share*100)
	}
	fmt.Printf("together: %.0f%%\n", total*100)

	// A namespace-keyed shard per member: each namespace has one owner.
	// Names that differ only at their end hash close together (FNV-1a),
	// so they tend to share a member; names that differ early spread.
	shards := map[string]*informer.Shard{}
	for _, m := range members {
		sh, err := informer.NewShard(informer.ShardByNamespace, ring[m.Identity]...)
		if err != nil {
			panic(err)
		}
		shards[m.Identity] = sh
	}
	fmt.Println(shards["gc-0"].Selector()[:len("shardRange(object.metadata.namespace,")])
	for _, ns := range []string{"team-a", "team-b", "team-c", "team-d", "team-e", "a-team", "b-team", "c-team", "d-team", "e-team"} {
		var owners []string
		for _, m := range members {
			if shards[m.Identity].ContainsValue(ns) {
				owners = append(owners, m.Identity)
			}
		}
		fmt.Println(ns, owners)
	}
	// Output:
	// gc-0: 25% of the space
	// gc-1: 25% of the space
	// gc-2: 50% of the space
	// together: 100%
	// shardRange(object.metadata.namespace,
	// team-a [gc-2]
	// team-b [gc-2]
	// team-c [gc-2]
	// team-d [gc-2]
	// team-e [gc-2]
	// a-team [gc-2]
	// b-team [gc-1]
	// c-team [gc-1]
	// d-team [gc-0]
	// e-team [gc-0]
}
