package lib

import (
	"math"
	"strings"
	"testing"

	"github.com/kdyn/kdyn/informer"
)

func TestCoverage(t *testing.T) {
	q := informer.SplitRanges(4)
	half := informer.SplitRanges(2)
	before := map[string]memberState{
		"a": {Reconciled: 10},
		"b": {Reconciled: 20},
	}
	for _, tc := range []struct {
		name                                   string
		cur                                    map[string]memberState
		target, processing, synced, reconciled bool
	}{
		{
			name: "targets cover, processing does not yet",
			cur: map[string]memberState{
				"a": {Target: half[:1], Processing: q[:1], Selector: "r1", SyncSelector: "r1", Cached: 25, Reconciled: 10, Idle: true},
				"b": {Target: half[1:], Processing: half[1:], Selector: "r1", SyncSelector: "r1", Cached: 50, Reconciled: 20, Idle: true},
			},
			target: true,
		},
		{
			name: "processing covers, a sync is pending",
			cur: map[string]memberState{
				"a": {Target: half[:1], Processing: half[:1], Selector: "r2", SyncSelector: "r1", Cached: 25, Reconciled: 10, Idle: true},
				"b": {Target: half[1:], Processing: half[1:], Selector: "r1", SyncSelector: "r1", Cached: 50, Reconciled: 20, Idle: true},
			},
			target: true, processing: true,
		},
		{
			name: "synced, the victim's objects not all reconciled again",
			cur: map[string]memberState{
				"a": {Target: half[:1], Processing: q[:2], Selector: "r2", SyncSelector: "r2", Cached: 50, Reconciled: 30, Idle: true},
				"b": {Target: half[1:], Processing: half[1:], Selector: "r1", SyncSelector: "r1", Cached: 50, Reconciled: 20, Idle: true},
			},
			target: true, processing: true, synced: true,
		},
		{
			name: "all done",
			cur: map[string]memberState{
				"a": {Target: half[:1], Processing: q[:2], Selector: "r2", SyncSelector: "r2", Cached: 50, Reconciled: 35, Idle: true},
				"b": {Target: half[1:], Processing: half[1:], Selector: "r1", SyncSelector: "r1", Cached: 50, Reconciled: 20, Idle: true},
			},
			target: true, processing: true, synced: true, reconciled: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, processing, synced, reconciled := coverage(tc.cur, before, 100, 25)
			if target != tc.target || processing != tc.processing || synced != tc.synced || reconciled != tc.reconciled {
				t.Errorf("coverage = %v %v %v %v, want %v %v %v %v", target, processing, synced, reconciled, tc.target, tc.processing, tc.synced, tc.reconciled)
			}
		})
	}
}

func TestWholeSpaceAndOverlap(t *testing.T) {
	q := informer.SplitRanges(4)
	if !wholeSpace(q) || wholeSpace(q[1:]) || wholeSpace(nil) {
		t.Error("wholeSpace is wrong about SplitRanges(4) or a part of it")
	}
	if !wholeSpace([]informer.HashRange{{From: 0, To: math.MaxUint64}}) {
		t.Error("wholeSpace is wrong about the whole space")
	}
	if overlapping(map[string]memberState{"a": {Processing: q[:2]}, "b": {Processing: q[2:]}}) {
		t.Error("disjoint ranges reported as overlapping")
	}
	if !overlapping(map[string]memberState{"a": {Processing: q[:2]}, "b": {Processing: q[1:2]}}) {
		t.Error("overlapping ranges not reported")
	}
}

func TestTableColumns(t *testing.T) {
	var b strings.Builder
	tb := &Table{Title: "t", Cols: [2]string{"sharded member", "single member"}}
	tb.Add(Row{Metric: "heap", Unit: "MB", Kdyn: 1, ClientGo: 4, Target: "≤ 0.3×", Check: ratioAtMost(0.3)})
	tb.Add(Row{Metric: "kill", Unit: "s", Kdyn: 3, ClientGo: math.NaN(), Target: "—"})
	tb.Print(&b)
	out := b.String()
	for _, want := range []string{
		"| metric | sharded member | single member | ratio (sharded member/single member) | target | result |",
		"| heap | 1 MB | 4 MB | 0.25× | ≤ 0.3× | PASS |",
		"| kill | 3 s | n/a | — | — |  |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	(&Table{Title: "t"}).Print(&b)
	if !strings.Contains(b.String(), "| metric | kdyn | client-go | ratio (kdyn/client-go) |") {
		t.Errorf("default columns changed:\n%s", b.String())
	}
}
