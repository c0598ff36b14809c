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
// # Membership
//
// A Member holds a Lease of its own, Ring-Identity in the ring's
// namespace, labelled RingLabel=Ring. Every RetryPeriod it renews it and
// lists the ring's Leases (a consistent read). A member whose Lease has
// not changed for its LeaseDuration, by the observer's own clock (as
// leader election judges a leader's Lease), has left; its Lease is not
// trusted before.
//
// # The hand-over protocol
//
// Each member has two sets of ranges: held (published in its Lease's
// HeldAnnotation) and processing (given to Options.Process, which makes the
// informers cache those objects and the controllers reconcile their keys).
// A member keeps processing ⊆ held at every moment, with these rules:
//
//  1. Release: ranges it processes but the assignment no longer gives it
//     are first stopped — Process returns only once no work on them runs —
//     and only then removed from held, in the next write of its Lease.
//  2. Claim: ranges the assignment gives it that no other live member
//     holds are added to held and written; only after that write does it
//     read every Lease again.
//  3. Start: of the ranges claimed in rule 2, it starts processing those
//     that no other live member holds in that second read. Where another
//     member holds some too (two members claimed at once, from different
//     views of the ring), neither starts them; the higher identity
//     withdraws its claim, and the lower one starts at a later round.
//  4. Renew deadline: a member that has not renewed its Lease for
//     RenewDeadline (less than LeaseDuration) stops processing everything;
//     it publishes no range at its next successful write and claims
//     again.
//  5. Expiry: the ranges a gone member held (rule of Membership) are free
//     once its Lease has not changed for LeaseDuration.
//
// Why two members never process one object at once: say A and B both
// process range r. Each wrote r into its held ranges (rule 2) before a
// read in which the other did not hold r (rule 3). The API server orders
// the writes and consistent reads: if A's write came before B's read, B's
// read saw A holding r — unless A's Lease had expired in B's eyes, but A
// stops processing after RenewDeadline without a renewal, before LeaseDuration
// has passed since its last write (rule 4) — so B did not start; otherwise
// B's write came before A's read, and A did not start. And a member stops
// processing a range before it lets go of it (rule 1), so no member starts
// on a range another is leaving before the leaving is done. The argument
// assumes clocks that run at the same rate, as leader election does.
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
package shard
