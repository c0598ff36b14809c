package leaderelection_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// firstLeaderWithin bounds the first election: the processes start and
// one creates the lease.
const firstLeaderWithin = 20 * time.Second

// TestKilledLeaderIsReplaced kills the leader among two and among three
// candidates, twice each, and checks that another leads within
// LeaseDuration + RetryPeriod of the kill.
func TestKilledLeaderIsReplaced(t *testing.T) {
	env := testenv.Shared(t)
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d candidates", n), func(t *testing.T) {
			c := newCandidates(t, env)
			for range n {
				c.spawn()
			}
			leader := c.nextStart(firstLeaderWithin)
			for round := range 2 {
				killedAt := c.kill(c.proc(leader.ID))
				c.spawn() // keep n candidates
				next := c.nextStart(leaseDuration + retryPeriod + 5*time.Second)
				took := time.Duration(next.Mono - killedAt)
				t.Logf("round %d: %s killed, %s leads %v later", round+1, leader.ID, next.ID, took)
				if took > leaseDuration+retryPeriod+takeoverSlack {
					t.Errorf("takeover took %v, more than LeaseDuration + RetryPeriod (%v) + %v", took, leaseDuration+retryPeriod, takeoverSlack)
				}
				leader = next
			}
			c.stopAll()
			minGap, _ := checkNoOverlap(t, c.intervals())
			t.Logf("smallest gap between terms: %v", minGap)
		})
	}
}

// TestNeverTwoLeaders forces at least 20 transitions among three
// candidate processes — alternately killing the leader (no release) and
// stopping it with SIGTERM (release), starting a fresh candidate each time
// — and checks from every candidate's own start and stop reports that no
// two terms overlap, and from the Lease that each transition was counted.
func TestNeverTwoLeaders(t *testing.T) {
	const transitions = 20
	env := testenv.Shared(t)
	c := newCandidates(t, env)
	for range 3 {
		c.spawn()
	}
	leader := c.nextStart(firstLeaderWithin)
	var maxKillTakeover, maxReleaseTakeover time.Duration
	for i := range transitions {
		p := c.proc(leader.ID)
		var next report
		if i%2 == 0 {
			killedAt := c.kill(p)
			c.spawn()
			next = c.nextStart(leaseDuration + retryPeriod + 5*time.Second)
			took := time.Duration(next.Mono - killedAt)
			maxKillTakeover = max(maxKillTakeover, took)
			if took > leaseDuration+retryPeriod+takeoverSlack {
				t.Errorf("transition %d: takeover after a kill took %v, more than LeaseDuration + RetryPeriod (%v) + %v",
					i+1, took, leaseDuration+retryPeriod, takeoverSlack)
			}
		} else {
			termAt := testenv.MonoNow()
			c.terminate(p)
			c.spawn()
			next = c.nextStart(leaseDuration + retryPeriod + 5*time.Second)
			maxReleaseTakeover = max(maxReleaseTakeover, time.Duration(next.Mono-termAt))
		}
		if next.ID == leader.ID {
			t.Fatalf("transition %d: %s leads again after it was stopped", i+1, next.ID)
		}
		leader = next
	}
	c.stopAll()
	ivs := c.intervals()
	if len(ivs) < transitions+1 {
		t.Fatalf("%d terms, want at least %d", len(ivs), transitions+1)
	}
	minGap, maxGap := checkNoOverlap(t, ivs)
	t.Logf("%d terms (%d transitions), none overlapping on %s; gaps between terms %v … %v; takeover after a kill ≤ %v, after a release ≤ %v",
		len(ivs), len(ivs)-1, testenv.MonoClockName, minGap, maxGap, maxKillTakeover, maxReleaseTakeover)

	// The Lease counted every change of holder: each term is a new
	// candidate's (a stopped one never comes back).
	ns, name, _ := strings.Cut(c.lease, "/")
	client, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := client.Resource(leaseGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedInt64(lease.Object, "spec", "leaseTransitions")
	if want := int64(len(ivs) - 1); got != want {
		t.Errorf("leaseTransitions %d, want %d (one per new holder)", got, want)
	}
}
