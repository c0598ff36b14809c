// Package generation orders cache writes with invalidations.
//
// A cache filled by a slow load (discovery documents, a REST mapper's
// index) must not keep what a load fetched when an invalidation came while
// that load was in flight: the invalidation would be undone. A Counter
// counts invalidations; a load reads the generation before it starts and
// writes the cache only if the generation is still the same when it ends
// (IfCurrent). Keying singleflight calls by generation (Key) keeps callers
// after an invalidation from joining a load begun before it.
package generation
