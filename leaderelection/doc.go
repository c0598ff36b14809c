// Package leaderelection elects one leader among the replicas of a
// program, on a coordination.k8s.io/v1 Lease, through kdyn's dynamic
// client. It follows client-go's tools/leaderelection with its LeaseLock —
// the same Lease fields, written the same way, the same defaults and the
// same expiry rule — so kdyn and client-go candidates can share one Lease
// and still elect exactly one leader between them. It imports neither
// client-go nor the typed API packages.
//
// # Lifecycle
//
// New checks a Config and returns an Elector; it makes no request. Run
// stands for election: it tries to acquire the Lease (creating it when
// absent) every RetryPeriod until it succeeds or its context is done. Once
// it leads, it calls Callbacks.OnStartedLeading on a goroutine of its own
// and renews the Lease every RetryPeriod. The term ends when Run's context
// is done or when leadership is lost; Run then cancels OnStartedLeading's
// context, waits for OnStartedLeading to return, releases the Lease if
// ReleaseOnCancel is set (only then, so the work the Lease guards has
// stopped before anyone else can take it), calls OnStoppedLeading and
// returns. Run returns only when every goroutine it started has exited.
// One call of Run is one term at most: after a loss, the caller exits
// (what most controllers do) or calls Run again to stand again.
//
//	e, err := leaderelection.New(client, leaderelection.Config{
//		Namespace: "kube-system", Name: "my-controller", Identity: podName,
//		ReleaseOnCancel: true,
//		Callbacks: leaderelection.Callbacks{
//			OnStartedLeading: func(ctx context.Context) { runControllers(ctx) }, // until ctx is done
//		},
//	})
//	if err != nil {
//		return err
//	}
//	hc := e.HealthCheck(20 * time.Second)
//	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
//		if err := hc.Check(r); err != nil {
//			http.Error(w, err.Error(), http.StatusInternalServerError)
//		}
//	})
//	if err := e.Run(ctx); errors.Is(err, leaderelection.ErrLeadershipLost) {
//		os.Exit(1) // let the Deployment restart us as a candidate
//	}
//
// # Concurrency
//
// An Elector is safe for concurrent use: IsLeader, GetLeader and
// HealthCheck's Check may be called from any goroutine while Run runs. Run
// itself runs once at a time (a second concurrent call returns an error).
// Callbacks run on the Elector's goroutines, one OnNewLeader call at a
// time; none runs after Run has returned.
//
// # The Lease
//
// The Lease's spec holds holderIdentity, leaseDurationSeconds
// (LeaseDuration in whole seconds), acquireTime and renewTime (MicroTimes:
// RFC 3339 in UTC with six fractional digits, exactly as client-go writes
// them) and leaseTransitions, which grows by one each time a candidate
// takes the Lease from another holder or from nobody. Every write but the
// creation is an update carrying the resourceVersion last read or written,
// so of two candidates writing at once one gets a Conflict (of two
// creating it, an AlreadyExists) and does not acquire the
// Lease in that round. A release writes an empty holderIdentity and
// leaseDurationSeconds 1, as client-go does, but only if a fresh read
// still names this candidate. Other spec fields, labels and annotations
// are left as they are.
//
// # Why a lost leader stops before anyone else starts
//
// A candidate never compares the times written in the Lease with its own
// clock. It notes, on its own monotonic clock, when it first saw the
// Lease's record change, and considers the Lease expired
// leaseDurationSeconds after that; so another candidate can take over no
// sooner than LeaseDuration after the leader's last successful renewal
// reached the server — and that is after the renewal request was sent.
//
// The leader counts its renew deadline from the moment it sent its last
// successful renewal (not from the answer), and a timer of its own
// cancels OnStartedLeading's context the moment RenewDeadline has passed
// since then, even while a renewal request hangs. Since RenewDeadline <
// LeaseDuration, the leader has stopped — its context is cancelled —
// LeaseDuration − RenewDeadline (5 s by default) before any other
// candidate can acquire the Lease. A leader that reads the Lease and finds
// it held by someone else stops at once. The argument needs only that the
// candidates' clocks run at about the same rate, not that they agree; and
// it bounds when the context is cancelled, not when the work stops: the
// work OnStartedLeading guards must stop promptly when its context is
// done. HealthCheck reports the case where it does not.
//
// client-go's own leaders count RenewDeadline from RetryPeriod after their
// last successful renewal, and its candidates compare records at
// one-second precision, so a client-go candidate may see a renewal up to a
// second late. When client-go candidates share the Lease, keep
// LeaseDuration − RenewDeadline above RetryPeriod plus a second or two;
// the defaults (15 s, 10 s, 2 s) do.
//
// # Fencing the work
//
// The cancelled context bounds when the work is told to stop, not when it
// stops: a leader paused (SIGSTOP, a long GC, a stalled VM) past its
// deadline can, once it resumes, run one more unit of work before its
// goroutines see the cancellation. IsLeader closes that: it reports true
// only while a term is live and its renew deadline has not passed, by the
// clock at the moment of the call. Check it right before each write the
// Lease guards:
//
//	if !e.IsLeader() {
//		return nil // not leading any more: the next leader does it
//	}
//	_, err := client.Resource(gvr).Namespace(ns).Update(ctx, desired, metav1.UpdateOptions{})
//
// The one gap no lease closes is a process frozen between that check and
// its write for longer than LeaseDuration − RenewDeadline: the write may
// land after another leader has acted. Close it with the write's own
// precondition — the resourceVersion of the object the decision was made
// from (desired above is a copy of the object as read) — so a late write
// fails with a Conflict instead of overwriting newer data.
// controller.Manager.IsLeader is the same check for a Manager that elects.
//
// # Clients and timeouts
//
// Give the Elector a dynamic client of its own, built from the same
// rest.Config as the controller's (dynamic.NewForConfig on
// rest.CopyConfig(cfg)): its requests then never wait behind the
// controller's client-side rate limit or share its connection. Each
// request to the Lease is bounded by Config.RequestTimeout, retries
// included (RenewDeadline/4 or RetryPeriod, whichever is longer, by
// default), so one request that hangs on a dead connection ends in time
// for the next attempt rather than using up the term.
//
// # Timing
//
// A candidate that does not lead tries again after a random wait between
// RetryPeriod/JitterFactor and RetryPeriod, and also at the moment the
// Lease another holds expires in its view. (client-go waits between
// RetryPeriod and (1+JitterFactor)×RetryPeriod; the shorter wait bounds a
// takeover after a leader dies to about LeaseDuration + RetryPeriod after
// its last renewal.) A leader renews RetryPeriod after each renewal,
// first with one update using the resourceVersion it wrote last, and reads
// the Lease only when that fails.
//
// # Differences from client-go
//
// OnStoppedLeading is called only after a term, not by a candidate that
// never led. Run waits for OnStartedLeading to return before it releases
// the Lease and returns. A release never overwrites a Lease another
// candidate has taken. A leader that finds the Lease held by someone else
// stops at once rather than at its renew deadline. LeaseDuration must be
// whole seconds, since that is what the Lease records. There is no
// coordinated leader election (LeaseCandidate, spec.strategy), no event
// recording and no resource locks other than Leases.
//
// # Errors
//
// New returns an error wrapping ErrInvalidConfig that names every bad
// field. Run returns nil when its context ended the election, and an
// error wrapping ErrLeadershipLost when leadership was lost; that error
// names the Lease and wraps the last failed renewal's error, a server
// error being an *apierrors.StatusError, so apierrors.IsConflict,
// IsForbidden and the like work on it. Errors of single attempts are
// logged (Config.Logger) and retried, never returned: a candidate that
// may not read or write Leases keeps trying, and says why in its log.
//
// # Metrics and health
//
// Config.Metrics is told when the candidate starts and stops leading
// (package metrics exports it as leader_election_master_status).
// HealthCheck returns a check for a liveness endpoint, like client-go's
// HealthzAdaptor.
package leaderelection
