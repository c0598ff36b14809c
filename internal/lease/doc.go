// Package lease is kdyn's one codec of coordination.k8s.io/v1 Leases, for
// leader election (package leaderelection) and ring membership (package
// shard): the spec fields as client-go's LeaseLock writes them, the timing
// defaults and rules both follow, and expiry judged by observed change.
//
// # The record
//
// Record holds holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime and leaseTransitions. Read is tolerant as client-go is (absent
// or null fields are zero; integers may arrive as int64, float64 or
// json.Number); Write sets exactly those fields, MicroTimes as RFC 3339 in
// UTC with six fractional digits, and leaves every other field alone.
//
// # Expiry by observed change
//
// A Lease is never judged by the times written in it, which another
// machine's clock wrote. An Observation notes, on this process's own
// monotonic clock, when it first saw the record change; the Lease expires
// LeaseDurationSeconds after that. Callers pass the time a read returned,
// never when it was sent, so a slow read cannot make a live holder look
// expired.
//
// # Timing
//
// Timing carries LeaseDuration, RenewDeadline, RetryPeriod and
// RequestTimeout, with client-go's defaults (15 s, 10 s, 2 s) and the
// rules both packages enforce: a whole number of seconds of LeaseDuration,
// RenewDeadline below it and above RetryPeriod×JitterFactor, and a
// RequestTimeout (RenewDeadline/4 or RetryPeriod, whichever is longer, by
// default) no longer than RenewDeadline.
package lease
