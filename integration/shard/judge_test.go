package shard_test

import (
	"testing"
	"time"
)

// TestJudge checks the ledger judge itself on made-up ledgers: it must
// flag each kind of breach, and date renewals by when they were sent, so a
// wall clock that jumps between a renewal and the work after it (as when a
// suspended virtual machine resumes and its time is set right) neither
// hides a late reconcile nor invents one.
func TestJudge(t *testing.T) {
	const (
		s        = int64(time.Second)
		ms       = int64(time.Millisecond)
		deadline = 2 * time.Second
	)
	// m1 sent renewals at monotonic 100 s and 100.3 s; its wall clock read
	// 5000 s then, and jumped 15 s forward just after the second one.
	wall := func(mono int64) int64 { return mono + 4900*s }
	leases := &leaseLog{renewals: map[string][]int64{"m1": {wall(100 * s), wall(100*s + 300*ms)}}}
	sent := map[string]map[int64]int64{"m1": {wall(100 * s): 100 * s, wall(100*s + 300*ms): 100*s + 300*ms}}
	// after the jump, m1's next renewal carries a wall time 15 s ahead
	leases.renewals["m1"] = append(leases.renewals["m1"], wall(100*s+600*ms)+15*s)
	sent["m1"][wall(100*s+600*ms)+15*s] = 100*s + 600*ms
	// m2 renewed once, at 100.5 s, before the jump
	leases.renewals["m2"] = []int64{wall(100*s + 500*ms)}
	sent["m2"] = map[int64]int64{wall(100*s + 500*ms): 100*s + 500*ms}

	for _, c := range []struct {
		name    string
		entries []entry
		extra   []int64 // renewals the server recorded that m1 did not note
		want    verdict
	}{
		{"on time, between the jump and the next renewal", []entry{{member: "m1", key: "a", rv: "1", start: 100*s + 450*ms, end: 100*s + 470*ms}},
			nil, verdict{}},
		{"on time, after the next renewal", []entry{{member: "m1", key: "a", rv: "1", start: 100*s + 700*ms, end: 100*s + 720*ms}},
			nil, verdict{}},
		{"late by a millisecond", []entry{{member: "m1", key: "a", rv: "1", start: 102*s + 601*ms, end: 102*s + 621*ms}},
			nil, verdict{afterDeadline: 1}},
		{"before any renewal", []entry{{member: "m1", key: "a", rv: "1", start: 99 * s, end: 99*s + 20*ms}},
			nil, verdict{afterDeadline: 1}},
		{"overlapping members", []entry{
			{member: "m1", key: "a", rv: "1", start: 100*s + 700*ms, end: 100*s + 720*ms},
			{member: "m2", key: "a", rv: "1", start: 100*s + 710*ms, end: 100*s + 730*ms},
		}, nil, verdict{overlapPairs: 1, overlapKeys: 1}},
		{"a stale version", []entry{
			{member: "m1", key: "a", rv: "7", start: 100*s + 700*ms, end: 100*s + 720*ms},
			{member: "m2", key: "a", rv: "6", start: 100*s + 800*ms, end: 100*s + 820*ms},
		}, nil, verdict{stale: 1}},
		{"a renewal nobody sent", []entry{{member: "m1", key: "a", rv: "1", start: 100*s + 700*ms, end: 100*s + 720*ms}},
			[]int64{wall(101 * s)}, verdict{unknownRenew: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ll := &leaseLog{renewals: map[string][]int64{
				"m1": append(append([]int64(nil), leases.renewals["m1"]...), c.extra...),
				"m2": leases.renewals["m2"],
			}}
			got := judge(t, ledgers{entries: c.entries, renewals: sent}, ll, deadline)
			got.reconciles, got.keys = 0, 0
			if got != c.want {
				t.Errorf("judge: %s\nwant: %s", got, c.want)
			}
		})
	}
}
