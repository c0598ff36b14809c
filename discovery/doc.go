// Package discovery asks a Kubernetes API server what it serves — groups,
// versions, resources with their verbs, scope, kinds, short names,
// categories and subresources — and caches the answer in memory and,
// optionally, on disk.
//
// # Cost of each entry point
//
// Aggregated discovery (apidiscovery.k8s.io/v2, served by every supported
// kube-apiserver) is asked first: GET /api and GET /apis with
//
//	Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json
//
// and the response's Content-Type tells which form came back.
//
//   - Cold discovery of an aggregated server: 2 requests, whatever the
//     number of groups.
//   - Cold discovery of a server that answers in the legacy form: N+2
//     requests (N = group-versions), the N sent in parallel, at most
//     Options.Parallelism (default 16) in flight.
//   - A Client that already has a snapshot in memory: 0 requests, until
//     Invalidate or Refresh.
//   - A warm start from the disk cache within its TTL (default 6 h):
//     0 requests (a legacy server is asked again only for group-versions that
//     failed last time).
//   - Past the TTL, Refresh, or after Invalidate: every document is
//     revalidated with If-None-Match; an unchanged aggregated server answers
//     two 304s.
//   - RefreshGroup on a legacy server: 1+V requests for that group only; on an
//     aggregated server, which has no per-group document, 1 conditional
//     request for the document holding the group.
//   - ServerVersion: 1 request, then cached in memory.
//   - ServerResourcesForGroupVersion: 0 requests when the group-version is in
//     the snapshot, else 1.
//   - OpenAPIV3Index: 1 request; OpenAPIV3Document: the index plus the
//     document, or the index only when the document is disk-cached under the
//     hash the index names.
//
// # Partial failure
//
// A group-version that cannot be discovered — marked "Stale" by
// aggregated discovery (an APIService whose backend is down), or failing
// with an error such as a 503 from one group — is left out of the results
// and reported in a *GroupDiscoveryFailedError returned beside them. Find it
// with errors.As (also through %w wrapping); Unwrap returns the causes, and
// Error lists the group-versions sorted. A failed version is never a
// group's preferred version. Only when /api or /apis themselves fail is the
// error total.
//
// # Caches
//
// The memory cache is safe for concurrent use; concurrent callers share one
// fetch. A load never replaces a newer snapshot: what a load begun before
// an Invalidate fetched is not cached, and a first load that ends after a
// Refresh keeps (and returns) the Refresh's snapshot. The disk cache (Options.CacheDir, conventionally
// DefaultCacheDir(host) = ~/.kube/cache/kdyn/discovery/<host>/) stores one
// file per document with its ETag: files 0600 in 0700 directories, written
// atomically (temporary file, then rename). A file that is corrupt or
// truncated is treated as a miss and overwritten, never reported as an
// error. A cache directory that is writable by others or owned by another
// user is not used (a warning is logged): no cache rather than a poisoned
// one. Documents larger than Options.MaxDocumentBytes (64 MiB) are refused.
//
// # Usage
//
//	dc, err := discovery.NewForConfig(cfg)
//	lists, err := dc.ServerPreferredResources(ctx)
//	var partial *discovery.GroupDiscoveryFailedError
//	if errors.As(err, &partial) {
//		log.Printf("some APIs are unavailable: %v", partial)
//	} else if err != nil {
//		return err
//	}
package discovery
