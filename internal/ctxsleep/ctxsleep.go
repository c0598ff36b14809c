package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx is done, and returns ctx.Err() in the
// latter case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
