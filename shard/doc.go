// Package shard divides a resource's objects among the members of a ring,
// so that a controller scales past one replica on the API server's own
// sharded list and watch (KEP-5866, feature gate ShardedListAndWatch), with
// membership kept in Leases: the distributed system the cluster already
// runs, not a coordinator of its own.
//
// # The assignment
//
// Assign divides the 64-bit FNV-1a hash space the server places objects in
// (by UID, or by namespace to keep owners and dependents together) by
// consistent hashing with bounded loads: each member gets virtual nodes on
// a ring, the space is cut into Partitions slices, and each slice goes to
// the next member whose fair share is not yet full. Every member computes
// it from the same member list and gets the same answer, so the members
// agree without a leader; a member joining or leaving moves little more
// than its own share.
//
// # Lifecycle and wiring
//
// New checks Options and returns a Member; it makes no request. Run joins
// the ring and keeps the member in it until its context is done, then
// stops all work and deletes the member's Lease. The member owns
// Options.Shard: it sets the Shard's ranges as they change (the informers
// given the Shard cache those objects) and fences it with its renew
// deadline (informer.Shard.Fence). A controller built on the Shard checks
// Shard.Holds in its controller.Options.Owns (a worker drops a key it does
// not hold) and right before every write of a reconcile (see Fencing);
// Options.Drainers (the controllers) are drained when ranges leave.
//
// Give the Member a dynamic client of its own, built from the same
// rest.Config as the controller's: its requests then never wait behind the
// data path's client-side rate limit or share its connection, and every
// one of them is bounded by RequestTimeout (retries included), so a
// membership round fails fast instead of hanging in the retries of a
// request while the deadline runs out. The controller's client carries
// lists, watches and reconcile writes; the Member's carries the ring's
// Leases only.
//
// Processing and Target report the member's state; Member is safe for
// concurrent use.
//
// # Membership
//
// A Member holds a Lease of its own, Ring-Identity in the ring's
// namespace, labelled RingLabel=Ring. Every RetryPeriod it renews it and
// lists the ring's Leases (a consistent read). It dates a change of a
// peer's Lease by its own clock at the moment the read that showed the
// change returned, never earlier; a peer whose Lease has not changed for
// its LeaseDuration since has left, and its ranges are free. Its Lease is
// not trusted before. A round whose read fails still renews the member's
// own Lease, with what it already holds.
//
// # The hand-over protocol
//
// Each member has two sets of ranges: held (published in its Lease's
// HeldAnnotation) and processing — active (the Shard's ranges: work may
// start on them) and draining (ranges it let go of whose work may still be
// running). A member keeps processing ⊆ held at every moment, with these
// rules:
//
//  1. Release: ranges it processes but the assignment no longer gives it
//     leave active at once (no new work starts on them; controllers drop
//     their keys) and are drained by a loop of its own: the Drainers wait
//     until none of their work runs, for at most the time left before the
//     renew deadline as it stood when the drain began; work still running
//     then has its context cancelled and is reported, and the drain is
//     tried again. Only after a drain succeeds are the ranges removed from
//     held, at the next write of the Lease. A drain never delays a
//     renewal.
//  2. Claim: ranges the assignment gives it that no other live member
//     holds are added to held and written; only after that write does it
//     read every Lease again.
//  3. Start: of the ranges claimed in rule 2, it starts processing those
//     that no other live member holds in that second read. Where another
//     member holds some too (two members claimed at once, from different
//     views of the ring), neither starts them; the higher identity
//     withdraws its claim, and the lower one starts at a later round.
//  4. Renew deadline: the deadline is RenewDeadline after the moment the
//     member sent the last write of its Lease that the server accepted
//     (exactly the renewTime that write carries). A watchdog timer — not
//     the rounds, which may be stuck in a request — acts the moment it
//     passes: the Shard's fence closes (Holds is false from that instant,
//     by the clock, even before the watchdog's goroutine runs), every
//     range leaves active, and the drain is told at once (overrunning work
//     is cancelled). A write answered only after the deadline it would
//     extend does not extend it. The member then claims nothing; its next
//     writes publish only what may still run, and once nothing runs and a
//     write publishing no range is accepted, it claims again from scratch
//     (its informers list their new ranges, so no change is lost).
//  5. Expiry: the ranges a gone member held (rule of Membership) are free
//     once its Lease has not changed for LeaseDuration.
//
// # The guarantee, and what it assumes
//
// No two members act on one object at overlapping times, where a member
// acts on an object only while its Shard Holds it (the check a reconcile
// makes before each write). Say A and B both act on range r. Each wrote r
// into its held ranges (rule 2) before a read in which the other did not
// hold r (rule 3). The API server orders the writes and consistent reads:
// if A's claim came before B's read, B's read saw A holding r (A keeps r
// held until it has stopped working on it, rule 1) — unless A's Lease had
// expired in B's eyes: B dated A's last change no earlier than the moment
// A's last accepted write reached the server, which is after A sent it, so
// B starts on r no sooner than LeaseDuration after A sent it, while A's
// fence closed RenewDeadline after it (rule 4). Otherwise B's claim came
// before A's read, and A did not start. A member stops acting on a range
// before it lets go of it (rules 1 and 4), so no member starts on a range
// another is leaving before the leaving is done.
//
// The argument needs, and these are the assumptions:
//
//   - Clock rates, not clock agreement: times read on one machine are never
//     compared with another's. Each member measures with its process's
//     monotonic clock, and the members' clocks must advance at rates close
//     enough that RenewDeadline on the fastest is shorter than
//     LeaseDuration on the slowest (the defaults, 10 s and 15 s, tolerate
//     a rate difference of up to 50%). A member paused by SIGSTOP, a long
//     GC or a stalled VM CPU is fine: the monotonic clock runs on, so its
//     deadline is past when it resumes. A machine whose monotonic clock
//     stops — a suspended VM or host (Linux's CLOCK_MONOTONIC does not
//     count suspend) — breaks the assumption.
//   - The API server's writes of Leases are ordered and its reads of them
//     consistent (etcd), and nobody but the member writes or deletes its
//     Lease.
//   - Fencing by the caller: a reconcile checks Shard.Holds right before
//     each write, and controller.Options.Owns checks it too.
//
// # Fencing, and the one gap no lease closes
//
// Holds is true only while this member's Lease is fresh, so a write made
// right after it comes at the latest LeaseDuration − RenewDeadline (5 s by
// default) before any other member can start on the object. What no lease
// protocol can close is a process frozen between its check and its write
// for longer than that: the write lands late, perhaps after another member
// has acted. The write's own precondition closes it: send the
// resourceVersion of the object the decision was made from (an Update of
// the object as read, a Delete with Preconditions, a Patch that sets
// metadata.resourceVersion), and a write computed from a stale read fails
// with a Conflict instead of overwriting newer data; the reconcile then
// runs again on fresh data, if this member still holds the object. Work
// that ignores its context goes on after a drain has cancelled it; the
// drain reports it, and its writes are still fenced by Holds and by their
// preconditions.
//
// A member that is stopped (Run's context ends) stops processing, then
// deletes its Lease, so the others take its ranges at their next round;
// one that dies is treated as having released its ranges once its Lease
// expires.
//
// # Choosing the key
//
// informer.ShardByUID spreads objects evenly: UIDs are random. With
// informer.ShardByNamespace an object, its owners and its dependents stay
// with one member (they share a namespace), but the spread is only as good
// as the namespaces': FNV-1a, the server's hash, barely moves the high bits
// of its result for a change in a name's last characters, so namespaces
// that differ only at their end ("team-a", "team-b", …) land next to one
// another in the space and usually with the same member (in ExampleAssign
// team-a … team-e all go to one member of three, a-team … e-team to all
// three). Namespace sharding pays
// off with many namespaces whose names differ early, or few members; a
// controller whose objects sit in a handful of similar namespaces should
// shard by UID.
//
// # Errors
//
// New returns an error naming every bad option. Run returns an error only
// when the member cannot join: the server refuses to create its Lease, or
// the Lease under its name is malformed or cannot be written (a Conflict
// is retried); a Lease a previous incarnation left is waited on until it
// expires. Failed requests of later rounds are logged (Options.Logger) and
// retried at the next round, and the deadline, not an error, decides when
// the member stops working.
package shard
