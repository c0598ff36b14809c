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
package events
