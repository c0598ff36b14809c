package crcache

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

func TestNeedLeaderElection(t *testing.T) {
	var c any = &Cache{}
	r, ok := c.(manager.LeaderElectionRunnable)
	if !ok || r.NeedLeaderElection() {
		t.Fatalf("the cache must be a LeaderElectionRunnable that needs no leader election")
	}
}
