// Package wire is kdyn's private layer for the bytes on the wire: how watch
// streams and list bodies are framed and decoded, and how the requests that
// carry many objects are sent. The public packages call it; none of it is
// part of their contract, so it may change with every measurement.
//
// # Who uses what
//
//   - rest decodes its watches with NewMapWatch, honours WithBulk when it
//     picks a connection, and reads protobuf Status errors with
//     UnwrapProtobuf.
//   - dynamic's resource clients hand their Endpoint to informers
//     (Provider), and its metadata client decodes with DecodeMetadata,
//     DecodeMetadataList and NewMetadataWatch.
//   - informer lists and watches through an Endpoint when its client is
//     kdyn's own, and reads every kdyn watch as an EventReader.
//
// # Watches
//
// A watch stream is split into frames by a framer that tracks nesting and
// strings across reads, so a frame is handed over as soon as its last byte
// arrives and a large frame arriving in small pieces is not rescanned. A
// map-mode watch then decodes each frame once, straight into the maps of an
// *unstructured.Unstructured (rather than decoding the frame, then the
// object's bytes again); with OmitManagedFields, metadata.managedFields is
// checked for syntax but not decoded, which saves much of the decoding of
// each event for callers that drop it anyway; with Text, the object's text
// is cut out of the frame too, for a compact store that keeps bytes (a copy
// costs less than encoding the decoded object again). Protobuf watches
// (metadata-only) are read in place: only the object is decoded, and with
// managedFields cut from the encoded message first, they are never decoded.
//
// Every watch is an EventReader: read with NextEvent, it decodes in the
// caller's goroutine. When events come one at a time, the hand-off of each
// event from a decoding goroutine to the consumer is most of what an event
// costs, so informers read this way; ResultChan starts a goroutine that
// decodes ahead instead, which overlaps decoding with a busy consumer's
// work.
//
// # Lists
//
// ListObjects and ListMetadata read a page as it arrives and hand over each
// item as soon as it is complete, so decoding overlaps the transfer and a
// page is never held whole. In a relist, Known names the objects the cache
// holds at the same resourceVersion: their name, namespace and
// resourceVersion are read in place from the raw bytes (JSON with gjson,
// protobuf field by field) and they are neither decoded nor allocated for,
// in lists and in a streaming list's initial events alike. A relist of a
// mostly unchanged resource then costs little beyond reading it (measured:
// a relist's peak heap 1.07× the steady state, docs/benchmarks.md).
//
// # Encodings and connections
//
// Informers ask for uncompressed lists and watches (Accept-Encoding:
// identity): on the fast networks controllers run on, gzip costs the server
// (and the client inflating it) more CPU than the transfer it saves, and
// the server flushes every watch event, so each would be a deflate block of
// its own (the trade-off behind kubeconfig's disable-compression and
// kubectl's --disable-compression). A streaming list's stream then goes on
// as the watch after the initial-events-end bookmark: one request per
// resource to sync. (Compressed, a metadata streaming list's small protobuf
// events cost fewer reads, but the stream is one-shot — each later event
// would be a deflate block of its own — and a second request, a plain
// watch, follows; measured with examples/gc over 15,000 objects, the sync's
// CPU is the same either way, 240 ms, and the requests 68 against 132.)
// Watches read through a buffer that grows for bursts and shrinks when
// idle (burstReader).
//
// Lists of whole objects, and the initial events of their streaming lists,
// are bulk transfers (WithBulk): they go over HTTP/1.1 on a connection of
// their own, where Go's HTTP/2 would cost both ends a goroutine hand-off per
// frame and the client a WINDOW_UPDATE every 4 KiB (a 10,000-object sync
// takes 0.6–0.75× the time). A streaming list that came that way is
// one-shot too, so that every informer's long-lived watch shares the
// client's HTTP/2 connection. Metadata lists are not bulk: their protobuf
// items are small and few bytes in all.
//
// # Errors
//
// A frame that does not decode becomes one ERROR event carrying a
// *metav1.Status of code 500 (reason InternalError), and the stream ends;
// the end of a stream by the server or the network ends it without an
// event. Server errors come from the Opener as it got them (rest's are
// *apierrors.StatusError).
package wire
