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
//   - A Factory hands out informers shared by resource and options, starts
//     them, waits for them and releases them one by one.
//   - A ResourceSet keeps one informer per resource for "every resource" that
//     matches a filter, following CRDs as they come and go.
//   - Package informer/workqueue is a rate-limited work queue for the
//     controller that consumes the events.
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
// sent it in the list or watch event, with managedFields cut out (and, for
// list items the server sends without them, apiVersion and kind put
// first), so caching costs a copy rather than a second encoding; with a
// Transform, the transformed object is encoded instead. Handlers still get
// decoded objects, as in the default mode. Metadata-only informers
// (Factory.ForResourceMetadata) cache *metav1.PartialObjectMetadata, asked
// of the server in protobuf (apimachinery's own codec for these meta types;
// JSON when a server cannot).
//
// Lists and watches ask for uncompressed responses: on the fast networks
// controllers run on, gzip costs the server (and the client inflating it)
// more CPU than the transfer it saves, and a watch's per-event flushes make
// it worse (the trade-off behind kubeconfig's disable-compression and
// kubectl's --disable-compression). One exception: a metadata-only
// informer's streaming list lets the server compress it (v1.37 servers
// compress the initial events in blocks, one per flush), since its small
// protobuf events compress well and cheaply, and fewer bytes cost both ends
// fewer writes and reads; at its initial-events-end bookmark the informer
// ends that stream and watches on, uncompressed, from the bookmark's
// resourceVersion (one more watch request per sync).
//
// Lists of whole objects, and the streaming list's initial events, are bulk
// requests (rest.Request.Bulk): they come over HTTP/1.1, on a connection of
// their own, where Go's HTTP/2 would cost both ends a goroutine hand-off per
// frame and the client a WINDOW_UPDATE every 4 KiB (a 10,000-object sync
// takes 0.6–0.75× the time). At the initial-events-end bookmark the
// informer ends such a stream and watches on, from the bookmark's
// resourceVersion, over the client's shared HTTP/2 connection, so that
// every informer's long-lived watch shares one connection.
//
// The watches of kdyn's sources are read in the reflector's own goroutine
// (rest.EventReader): each event is decoded by the goroutine that applies
// it to the cache, with no hand-off between goroutines on the way; a small
// watchdog goroutine per watch enforces the idle deadline and stops the
// watch when Run's context ends, which ends a waiting read. Other
// watch.Interface implementations, from Sources of your own, are read from
// their channel.
//
// Lists stream: a page's items (JSON, or the protobuf items of a
// metadata-only list) are decoded and enter the cache while the page is
// still arriving, so decoding overlaps the transfer and a page is never
// held whole. Relists are cheap in memory: list+watch relists of whole
// objects and streaming-list events (JSON or protobuf) for objects the
// cache already holds at the same
// resourceVersion are recognized from their raw bytes — name, namespace
// and resourceVersion read in place — and neither decoded nor allocated
// for, so a relist of a mostly unchanged resource costs little beyond
// reading it (measured: peak heap 1.1× the steady state, see
// docs/benchmarks.md).
//
// # Lifecycle
//
// Informer.Run returns when every goroutine it started has exited.
// Factory.Start is idempotent and starts informers created later at once;
// Factory.Release stops one informer (for example when its CRD was deleted);
// Factory.Shutdown stops all and waits. All types are safe for concurrent
// use.
package informer
