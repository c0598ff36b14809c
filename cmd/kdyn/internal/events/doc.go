// Package events holds "kdyn events", kubectl events' counterpart: the
// Events of a namespace (or of all, or of one object with --for), sorted by
// when they were last seen, as kubectl's table (LAST SEEN, TYPE, REASON,
// OBJECT, MESSAGE) or as json, yaml or jsonl, and with -w the Events that
// come after.
//
// It reads core/v1 Events, as kubectl events does: events.k8s.io/v1
// Events (those of kdyn's events package included) are the same objects
// seen through the other API. The list and the json and yaml outputs are
// kubectl's byte for byte: items keep the server's field order (the typed
// order kubectl prints), with kind and apiVersion put first and
// managedFields left out unless --show-managed-fields. A list costs one
// request per page of --chunk-size (500); --for resolves its type through
// the discovery cache.
//
// With -w, informer.Follow watches from the list's resourceVersion: a
// watch the server ends is resumed, a 410 is answered by a new list (of
// which only what was not printed is printed), other failures are named
// on stderr and retried with a backoff, and 400, 401, 403 and 404 end the
// command. Watch frames are read raw too, for the same field order.
package events
