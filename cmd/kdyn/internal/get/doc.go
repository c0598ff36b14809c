// Package get holds "kdyn get": one or many objects of any resource type,
// printed as the server's Table (kubectl's default) or as objects (name,
// json, yaml, jsonl, jsonpath, gjson, custom-columns).
//
// # Requests
//
// A list is read page by page (--chunk-size, 500). With an object output
// the next page is requested as soon as the current one has arrived, so
// the server works on page N+1 while page N is printed, and each item is
// printed straight from the page's JSON, without decoding it into maps, so
// memory stays flat on huge lists. A named object is one GET. get all-resources first probes
// every listable type with a list of one item, at most --parallel (8) at
// once, and prints only the types that have objects; the types that could
// not be listed are named on stderr at the end, and are no failure.
//
// # Watching
//
// -w lists, then watches every type from the list's resourceVersion, with
// informer.Follow. Unlike kubectl's, a watch does not end when the server
// closes the stream: it resumes from the last resourceVersion seen, and
// after a 410 it lists again and prints only what changed (each object
// version once; objects deleted meanwhile as DELETED). Other failures are
// named on stderr and retried with a backoff. It ends when the command is
// interrupted, at once when the first list fails, and on 400, 401, 403 or
// 404 (one type's failure ends the watch of every type).
//
// # Errors
//
// An object or type that fails is reported on stderr and the others are
// still printed; the command then exits 1 (see cli.ExitCode). A type that
// the server no longer serves although the disk-cached discovery lists it
// (a CRD deleted a moment ago) makes discovery ask again, and is reported
// as an unknown resource type with suggestions.
package get
