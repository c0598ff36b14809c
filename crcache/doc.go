// Package crcache is a controller-runtime cache (sigs.k8s.io/controller-runtime
// v0.25, cache.Cache) on kdyn's informers, which an existing operator takes
// by changing one line of its manager's options, and nothing in its
// reconcilers:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// What it costs and saves, measured against controller-runtime's own cache
// (docs/benchmarks.md, "An operator on controller-runtime's cache and on
// crcache", 2026-12-05): over 100,000 objects the live heap of a typed
// operator is 0.42× controller-runtime's default cache (0.50× its cache
// with TransformStripManagedFields) with Options.Compact, and 0.63× (0.74×)
// with crcache.New's decoded store; each reconcile costs 0.69× and 0.81×
// of the CPU, and the caches sync in 0.4× of the time.
//
// It lives in a Go module of its own (github.com/kdyn/kdyn/crcache) so that
// kdyn's library packages stay free of client-go and controller-runtime.
//
// # What it keeps
//
// One store per kind (group, version, kind), whichever form a caller reads
// it in: the scheme's Go type, *unstructured.Unstructured or
// *metav1.PartialObjectMetadata. controller-runtime's own cache keeps a
// store for each form, so a typed Get beside a metadata-only watch of the
// same kind caches the kind twice; here the reads and the informers of all
// three forms share one list and watch. A kind first asked for as metadata
// only is cached as metadata only (kdyn's metadata informer, protobuf on
// the wire); the first typed or Unstructured request turns its stores into
// stores of whole objects: each registered handler then gets the new
// store's objects as adds (in the form it asked for) and stays on the old
// store until it has had them, so no change is missed — some may be seen
// twice, which level-based reconcilers do not mind.
//
// Stores hold the kinds kube-apiserver serves as protobuf (the scheme's
// types from k8s.io/api, the CRD and APIService APIs) as those Go types,
// decoded from the server's protobuf straight into the type by its
// generated code (kdyn's informer.ForResourceProto), and every other kind
// (custom resources) as kdyn's unstructured objects. managedFields are
// left out undecoded (Options.KeepManagedFields keeps them). With
// Options.Compact a store keeps each object encoded instead — protobuf for
// the Go types, the server's JSON text for the others — and decodes it on
// every read. Informers use streaming lists where the server has them,
// resume watches from the last resourceVersion, and can cache one shard of
// a kind's hash range (Options.Shard).
//
// # Reads
//
// Get and List give the caller its own object, as controller-runtime
// does: a typed object is a DeepCopy of the stored one (in a compact
// store, a fresh decode), or with UnsafeDisableDeepCopy the stored object
// itself, which must not be modified. Objects of a kind stored as a Go
// type and read as Unstructured are converted on each read (runtime's
// unstructured converter); objects stored unstructured and read typed are
// converted the other way. An Unstructured read of an unstructured store
// is a DeepCopy, or the stored object with UnsafeDisableDeepCopy. A
// PartialObjectMetadata is built from the stored metadata. Handlers and
// index functions get the stored object itself when it is in their form.
// Label selectors filter in memory; field
// selectors must be exact matches of fields indexed with IndexField (as in
// controller-runtime). Reads wait for the kind's informer to sync and
// return controller-runtime's errors: ErrCacheNotStarted before Start, a
// Timeout error when the context ends first, ErrResourceNotCached with
// ReaderFailOnMissingInformer, NotFound (group and kind, as
// controller-runtime names it).
//
// # Options
//
// cache.Options are applied with controller-runtime's defaulting rules:
// DefaultNamespaces (a "" entry covers the namespaces not named),
// DefaultLabelSelector, DefaultFieldSelector, DefaultTransform,
// DefaultUnsafeDisableDeepCopy, SyncPeriod, ByObject (Namespaces, Label,
// Field, Transform, UnsafeDisableDeepCopy, SyncPeriod), Scheme, Mapper,
// HTTPClient and ReaderFailOnMissingInformer. A transform gets each object
// in the form controller-runtime would give it: the scheme's type when the
// scheme knows the kind, else Unstructured; PartialObjectMetadata for
// metadata-only stores. Requests go through the manager's HTTPClient (its
// authentication and TLS), at client-go's default rate limit unless the
// rest.Config sets QPS and Burst.
//
// # Differences from controller-runtime's cache
//
//   - managedFields are not cached unless Options.KeepManagedFields.
//   - UnsafeDisableDeepCopy returns the cached object only where one is
//     kept in the form asked for: not for an Unstructured read of a kind
//     stored as a Go type (converted on each read), nor for any read of a
//     compact store (decoded on each read). Either way the caller gets an
//     object of its own, which it may change.
//   - Options.NewInformer is refused (New returns an error): the informers
//     are kdyn's.
//   - RemoveInformer removes the kind's store, whatever form it was asked
//     for in (they are one).
//   - A handler's own resync period (AddEventHandlerWithResyncPeriod) is
//     not used: resyncs follow the cache's SyncPeriod.
//   - EnableWatchBookmarks is not used: kdyn's informers always ask for
//     bookmarks.
//
// docs/crcache.md has the table of controller-runtime's own cache tests
// run against this cache (TestControllerRuntimeCacheSuite) and the
// benchmark against controller-runtime's cache.
package crcache
