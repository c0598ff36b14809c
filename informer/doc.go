// Package informer keeps local caches of Kubernetes resources equal to the
// server — through disconnects, server restarts and etcd compactions — and
// tells handlers what changed. It is what controllers embed.
//
// # Pieces
//
//   - A reflector lists then watches one resource (optionally one
//     namespace, label and field selector). It is an explicit state machine
//     (listing, streaming, watching, backing off); the recovery rules are the
//     transitions of one step function, documented on its state type.
//   - A Store holds the objects keyed "namespace/name", with indexes: by
//     namespace (built in), by label (LabelIndex), by owner UID
//     (OwnerUIDIndex), by a gjson path (GJSONIndex) or any IndexFunc. Indexes
//     may be added after the informer started. A Lister reads it.
//   - An Informer runs a reflector into a store and delivers events to
//     handlers registered with AddEventHandler.
//   - A Factory hands out informers shared by resource and options, over
//     any dynamic.Interface; it runs them, waits for them and releases them
//     one by one.
//   - A ResourceSet keeps one informer per resource for "every resource" that
//     matches a filter, following CRDs as they come and go (a custom
//     resource goes when its CRD does, not when discovery briefly lacks
//     it, as it does while a restarted server comes back).
//   - Follow is a reflector without a cache: it lists and watches one
//     resource from a Source and hands each list and each change to
//     FollowFuncs, with the same recovery rules, until a func says done —
//     for code that waits for a condition or prints changes as they come,
//     as kdyn's wait, rollout status, get --watch and events --watch do.
//   - Package workqueue (top level: it needs nothing of informer) is the
//     rate-limited work queue of the controller that consumes the events.
//
// # How the cache stays right
//
// The first list asks for 500 objects a page at resourceVersion "0" — served
// by the server's watch cache, which may answer it whole, as client-go's
// reflector also asks; a relist after a 410 is a consistent list, paged — or,
// against servers that support it (kube-apiserver 1.32+), a streaming list: a watch with
// sendInitialEvents=true and resourceVersionMatch=NotOlderThan, complete when
// the bookmark annotated k8s.io/initial-events-end arrives. When the server
// refuses those parameters or the bookmark does not come within
// Options.InitialEventsTimeout of silence, the informer falls back to
// list+watch and logs it once. Initial events are asked for only when the
// cache is (re)built, never when a watch merely resumes.
//
// When a watch ends — the server's timeout (5–10 minutes, chosen at random
// per watch), a dropped connection, a stream silent past Options.IdleTimeout
// (HTTP/2 pings also notice a dead connection) — the informer watches again
// from the last resourceVersion it saw, from an event or a bookmark, so
// nothing is missed and nothing is listed again. When the server answers
// 410 Gone (that resourceVersion was compacted away), it relists: objects
// are compared by resourceVersion, unchanged ones keep their cached
// instance (a relist does not double memory), changed ones are updates,
// and objects that vanished while the informer was away are delivered as
// deletes with Deleted.FinalStateUnknown set and the last known object.
// Failures back off from about 0.8 s, doubling to 30 s, with jitter, reset
// after a healthy period; a 429 waits as long as its Retry-After says. An
// event that does not decode, and a watch that ends within a second
// without an event (a proxy closing every watch), count as failures too,
// so neither loops against the server.
// Forbidden and not-found answers are reported (Options.OnWatchError,
// LastError) and make WaitForSync return an error instead of hanging.
//
// # Handlers and ordering
//
// Each handler registration has its own unbounded buffer and goroutine, so
// a slow handler delays only itself, never the watch or other handlers.
// One handler sees the events of the informer one at a time, in the order
// the cache changed. OnAdd's isInInitialList is true for objects of the
// first list; a handler added after the informer has started first receives
// the cache as it stands as OnAdd(obj, true), then every later change.
// Registration.HasSynced reports when that initial delivery is complete;
// Remove unregisters. With a ResyncPeriod every object is redelivered as
// OnUpdate(obj, obj) at that interval.
//
// # Sharing and read-only objects
//
// Reads are zero-copy: the Store, Listers and handlers hand out the cached
// objects themselves, shared with every other reader. Never modify them:
// DeepCopy first. Options.DetectMutations (for tests) keeps a copy of every
// object and reports one that was changed in place (CheckMutations).
//
// Transforms run before objects enter the cache. Informers from a Factory
// strip metadata.managedFields by default (InformerOptions.KeepManagedFields
// opts out): it is 20–40% of object bytes and controllers almost never read
// it. In compact mode (InformerOptions.Compact) objects are kept as JSON
// bytes and decoded on every read (RawJSON reads them without decoding):
// far less memory for controllers that cache many large objects, at the
// cost of a decode per read. The bytes are the object's text as the server
// sent it, with managedFields cut out (and, for list items the server sends
// without them, apiVersion and kind put first); with a Transform, the
// transformed object is encoded instead. Handlers still get decoded
// objects, as in the default mode. Metadata-only informers
// (Factory.ForResourceMetadata) cache *metav1.PartialObjectMetadata; in
// compact mode they keep each one as its protobuf encoding and decode it
// on every read.
//
// # Go types
//
// kdyn names no typed API, but a program that has Go types with
// Kubernetes' generated protobuf code (k8s.io/api's, for instance) can
// cache them as such: ForResourceProto hands out an Informer[*corev1.Pod]
// whose objects are decoded from the server's protobuf straight into the
// type (managedFields cut out undecoded), with no map or conversion in
// between; in compact mode it keeps each object's protobuf encoding
// (smaller than JSON, and no base64 for bytes) and each read decodes a
// copy of the reader's own. Custom resources are not served as protobuf:
// cache them unstructured.
//
// # Sources
//
// An informer reads a Source: List pages and Watch streams of one resource.
// NewFactory, NewResourceSource and NewMetadataSource build theirs on a
// dynamic.Interface. Over kdyn's own client (dynamic.NewForConfig) they
// take its fast paths: a page's items are decoded and cached while the page
// is still arriving; each object is decoded once, straight into maps, with
// managedFields skipped undecoded; metadata-only informers get protobuf
// PartialObjectMetadata (JSON from servers that cannot); objects a relist
// finds unchanged (same key and resourceVersion) are recognized from their
// raw bytes and never decoded, so a relist of a mostly unchanged resource
// costs little beyond reading it; and each watch is decoded in the
// reflector's own goroutine, with no hand-off per event. Large transfers
// (lists, the initial events of a streaming list) go over the connection
// and encoding that cost both ends least; the informer then watches on over
// the client's shared connection. Over any other dynamic.Interface
// (dynamic/fake, a decorated client) they call its List and Watch, and drop
// managedFields (or cut objects down to their metadata) after decoding:
// the same events, at a higher cost. Informer.New takes a Source of your
// own too; its watches are read from their channel.
//
// # Lifecycle
//
// Long-running pieces have one shape: Run(ctx) error, which returns once
// ctx is done and every goroutine it started has exited. Informer.Run runs
// one informer; Factory.Run runs every informer the factory hands out,
// before and while it runs; ResourceSet.Run keeps a set in step with
// discovery (run its factory too); controller.Controller.Run runs the
// workers of a work queue. Run them in goroutines of your own (an errgroup.Group is handy) and cancel
// the context to stop. Factory.Release stops one informer (for example
// when its CRD was deleted). All types are safe for concurrent use.
//
//	f := informer.NewFactory(client, informer.FactoryOptions{})
//	cms := f.ForResource(configMapsGVR, informer.InformerOptions{})
//	var g errgroup.Group
//	g.Go(func() error { return f.Run(ctx) })
//	if err := f.WaitForSync(ctx); err != nil { ... }
//	...
//	cancel()
//	g.Wait() // every informer has stopped
package informer
