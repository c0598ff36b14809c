package ctxsleep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kdyn/kdyn/internal/ctxsleep"
)

func TestSleep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		d       time.Duration
		want    error
		atLeast time.Duration // the sleep lasts at least this long
	}{
		{"the duration passes", context.WithCancel, 30 * time.Millisecond, nil, 30 * time.Millisecond},
		{"cancelled before", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx, cancel
		}, time.Hour, context.Canceled, 0},
		{"deadline during", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 20*time.Millisecond)
		}, time.Hour, context.DeadlineExceeded, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The clock starts before the context: a deadline's 20 ms run
			// from its creation, so a start taken after it could see the
			// sleep end a little under 20 ms later (CI saw 19.6 ms).
			start := time.Now()
			ctx, cancel := tc.ctx(t.Context())
			defer cancel()
			err := ctxsleep.Sleep(ctx, tc.d)
			took := time.Since(start)
			if err != tc.want && !errors.Is(err, tc.want) {
				t.Errorf("Sleep = %v, want %v", err, tc.want)
			}
			// An hour-long sleep that ends with its context returns at once,
			// not after the hour (a generous bound for a loaded machine).
			if took < tc.atLeast || took > tc.atLeast+5*time.Second {
				t.Errorf("Sleep took %v, want at least %v and not much more", took, tc.atLeast)
			}
		})
	}
}
