// Package restmapper turns discovery into a meta.RESTMapper — GVK ⇄ GVR,
// scope, short names, categories and kubectl-style resource arguments —
// that notices CRDs installed after the program started.
//
// # Contract
//
// *Mapper implements apimachinery's meta.RESTMapper,
// meta.ResettableRESTMapper, meta.RESTMapperWithContext and
// meta.ResettableRESTMapperWithContext, so it plugs into any code that takes
// a RESTMapper (controller-runtime, apply libraries). It is safe for
// concurrent use. Misses are *meta.NoKindMatchError /
// *meta.NoResourceMatchError (meta.IsNoMatchError is true, also through
// wrapping); names that cannot be ranked are *meta.AmbiguousResourceError.
//
// # Lazy and self-healing
//
// Nothing is fetched until the first lookup (2 requests against an
// aggregated server, none with a warm disk cache). A lookup that misses
// refreshes discovery once — revalidating with ETags, so an unchanged
// server answers 304 — and tries again before returning a no-match error.
// Concurrent misses share one refresh. A lookup that still misses is
// remembered for Options.NegativeCacheTTL (default 5 s), during which the
// same lookup answers at once, so a loop asking for a kind that truly does
// not exist does not hammer the server. So a CRD created after the mapper
// was built resolves on the first lookup, with no Reset; a new version of a
// known group is found the same way. Resources that disappear (a deleted
// CRD) stop resolving once discovery has been refreshed: by Refresh, Reset,
// a miss, or — with Options.MaxAge — a background refresh started by a
// lookup on an index older than MaxAge.
//
// Hits cost a map lookup: RESTMapping for a known kind takes tens of
// nanoseconds and allocates nothing (the returned *meta.RESTMapping is
// shared and must not be modified).
//
// # Priority
//
// As kubectl's: the preferred version of every group first (the core group
// first, then the groups in discovery order), then every group's other
// versions in the same order. A name is matched as a plural or singular
// resource name first, then as a short name, then as a kind (any case); the
// best class wins, and within it the highest priority. So "events" is the
// core group's, and "hpa" is autoscaling/v2. A short name claimed by several
// groups resolves to the first and reports each other one through
// Options.Warn in client-go's words ("short name "wd" could also match
// lower priority resource gadgets.other.io").
//
// # Resource arguments
//
// ResolveTypes and ResolveArgs parse the arguments of kubectl-style
// commands, shared by the kdyn CLI and libraries: plural, singular, short
// name, kind in any case, resource.group, resource.version.group,
// kind.version.group, a unique group prefix ("hpa.autoscal"), TYPE/NAME,
// comma lists ("pods,svc"), and categories ("all", and any category a CRD
// declares), which expand to every resource in them. A name that matches
// nothing is a *NotFoundError with the closest names as suggestions.
//
// # Resource sets
//
// Resources returns every resource (at its preferred version) that passes
// a filter, e.g. SupportsVerbs("list", "watch", "delete") for a
// garbage-collector-style controller, and ResourceInfo what discovery said
// about one resource (verbs, scope, subresources, short names, categories).
package restmapper
