// Package ctxsleep waits for a duration or until a context ends, whichever
// comes first. It is the one pause that kdyn's retries (rest), its CLI's
// polls and backoffs share, so that none of them sleeps through a
// cancellation.
//
// Sleep is safe for concurrent use; it holds a timer only while it waits
// and stops it on return. Its error is ctx.Err() when the context ended
// first (context.Canceled or context.DeadlineExceeded, testable with
// errors.Is), else nil.
//
//	if err := ctxsleep.Sleep(ctx, backoff); err != nil {
//		return err // cancelled: give up now rather than after backoff
//	}
package ctxsleep
