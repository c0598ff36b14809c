package shard

import (
	"context"

	"github.com/kdyn/kdyn/informer"
)

// Drainer waits until no work on objects outside the shard runs any more:
// a controller.Controller with Options.Owns is one.
type Drainer interface {
	Drain(ctx context.Context) error
}

// Process returns the Options.Process of a member whose work is the
// informers of s and the controllers drains: it sets s's ranges — the
// informers drop the objects that left (deletes marked ShardMove) and list
// those that entered, and the controllers' Owns stops accepting the keys
// that left — and then waits until every controller has drained the work
// on them.
func Process(s *informer.Shard, drains ...Drainer) func(ctx context.Context, ranges []informer.HashRange) error {
	return func(ctx context.Context, ranges []informer.HashRange) error {
		if err := s.Set(ranges...); err != nil {
			return err
		}
		for _, d := range drains {
			if err := d.Drain(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// NeedLeaderElection reports false: every member of a ring runs, whether
// or not a controller.Manager elects a leader.
func (m *Member) NeedLeaderElection() bool { return false }
