// Package shard divides a resource's objects among the members of a ring,
// so that a controller scales past one replica on the API server's own
// sharded list and watch (KEP-5866).
//
// Assign is the division: consistent hashing with bounded loads over the
// 64-bit FNV-1a hash space the server places objects in. Every member
// computes it from the same member list and gets the same answer, so the
// members agree without a leader.
package shard
