// Package auth holds "kdyn auth": can-i (a SelfSubjectAccessReview; "yes"
// exits 0, "no" exits 1, as kubectl's), can-i --list (a
// SelfSubjectRulesReview printed as kubectl's table: rules broken down to
// one verb, resource and name each, verbs merged back per resource, sorted
// as kubectl sorts them) and whoami (a SelfSubjectReview, as a table or
// with -o).
//
// Reviews are created through the dynamic client (can-i) or the REST
// client (whoami, whose -o json keeps the server's member order, which is
// kubectl's); one request each, plus discovery to resolve can-i's TYPE.
// Warnings (an unknown type or verb, a cluster-scoped resource asked about
// in a namespace) go to stderr worded as kubectl's.
package auth
