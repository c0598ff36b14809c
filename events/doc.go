// Package events records Kubernetes Events — events.k8s.io/v1, written as
// unstructured objects through any dynamic.Interface — about any object, as
// client-go's tools/events does for typed objects, with the protections
// controllers rely on so that a burst of events cannot hurt the server.
//
// # Usage
//
//	rec, err := events.New(client, events.Options{ReportingController: "example.com/gc"})
//	if err != nil { ... }
//	var g errgroup.Group
//	g.Go(func() error { return rec.Run(ctx) })
//	...
//	rec.Eventf(obj, nil, events.Normal, "Deleted", "Delete", "orphan of %s", owner)
//	...
//	cancel()
//	g.Wait() // queued events and series counts are written
//
// An event is about an [Object]: *unstructured.Unstructured, a
// *metav1.PartialObjectMetadata, a [Reference], or any metav1.Object with
// its kind through [ReferenceFor]. It has a type ([Normal] or [Warning]), a
// reason (why, in CamelCase) and an action (what was done), a note for
// people, and optionally a related object. Its regarding and related fields
// are references (apiVersion, kind, namespace, name, uid,
// resourceVersion); eventTime is when Eventf was called; reportingController
// and reportingInstance come from [Options].
//
// # What is written
//
// An Event is named as client-go names it: the regarding object's name, a
// dot, and the time in hexadecimal nanoseconds ("web.18a2b3c4d5e6f708"), or
// a random UUID when that would not be a valid name. It lives in the
// regarding object's namespace, or in "default" for a cluster-scoped
// object. The first occurrence creates the Event.
//
// Identical occurrences — same type, reason, action, note, regarding and
// related (their resourceVersions included, as in client-go) — within Options.SeriesWindow (6 minutes) of the previous one
// become one Event with a series: series.count and series.lastObservedTime.
// The series is patched (a strategic merge patch of the series alone, as
// client-go sends) at most once per Options.SeriesUpdateInterval (30 s), with
// the count it has then, and once more with the final count if the server
// is behind when the window passes. A series whose Event has expired on the
// server (404 on the patch) is created again, series included. Unlike
// client-go, whose series key leaves out the note (later notes are folded
// into the first one's Event), the note is part of the key; and where
// client-go refreshes a series every 30 minutes after its second
// occurrence, this recorder keeps the server's count at most 30 s behind.
//
// # Protections
//
//   - A spam filter: a token bucket per object and event type, as
//     client-go's — 25 events at once, then one per 5 minutes — over the
//     4096 objects seen last. Filtered occurrences are dropped before they
//     are queued, so a hot loop on one object neither fills the queue for
//     the others nor counts in its series: a series counts the occurrences
//     the filter let through, as in client-go's tools/record.
//   - A bounded queue (Options.QueueSize, 1000): Eventf never blocks; it
//     drops the occurrence when the queue is full.
//   - Retries: conflicts, 429s, server errors and transport failures are
//     retried, up to Options.MaxAttempts (5) attempts with backoff from
//     250 ms doubling to 5 s (longer when the server says Retry-After); then
//     the write is given up with a warning in the log. Other errors (a
//     refused or invalid Event, a namespace that does not exist) are not
//     retried.
//
// Every drop is counted in [Recorder.Stats] and reported to
// [Options].Metrics with its reason: [DropQueueFull], [DropSpamFilter],
// [DropWriteFailed], [DropInvalid] or [DropShutdown]. Eventf returns no
// error, like client-go's: an invalid event (an object without a kind, a
// type other than Normal or Warning, an empty or too long reason or action)
// is logged and dropped; a note longer than the server's 1024 bytes is cut.
//
// # Lifecycle
//
// [New] checks the options and starts nothing. [Recorder.Run] is the one
// goroutine that writes, in order; it returns once ctx is done and the
// flush has ended: the events still queued and every series count the
// server does not have yet are written, within Options.FlushTimeout (5 s),
// and Eventf drops whatever comes later. Events recorded before Run starts
// wait in the queue. A Recorder is safe for concurrent use and cannot be
// restarted. Writes are sequential, so a slow or unreachable server fills
// the queue rather than the process.
//
// # Server support
//
// The recorder writes only events.k8s.io/v1, which every supported
// kube-apiserver serves (v1.19 and later, v1.37 included). client-go's
// fallback to core/v1 Events for servers without it is not implemented.
// The recorder needs create and patch on events.k8s.io events in the
// namespaces it writes to.
package events
