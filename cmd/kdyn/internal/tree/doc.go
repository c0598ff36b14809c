// Package tree holds "kdyn tree": the objects an object owns, following
// ownerReferences down (or, with --up, its owners up), as a tree with each
// object's age and a Ready-like status.
//
// Dependents are found by listing the metadata of every listable type,
// one request per type and page, at most --parallel (8) at once; a status
// costs one GET per object whose type has a status subresource, also
// bounded. Types that cannot be listed are named on stderr at the end
// (their dependents may be missing) and are no failure; --up costs one GET
// per owner.
package tree
