// Package wait holds "kdyn wait": wait until every object meets the --for
// conditions (create, delete, ready, condition=NAME[=VALUE],
// jsonpath=PATH[=VALUE]). ready is the readiness package's Current.
//
// Each type and namespace is one group of objects, waited for in its own
// goroutine with cli.Follow (informer.Follow): one list, then a watch
// from the list's resourceVersion, so nothing is polled. A watch the
// server closes is resumed where it stopped, a 410 is answered by listing
// again, and other errors are retried with a backoff; a first list that
// fails, and 403, 401, 400 and 404, end the wait, and one group's failure
// ends them all. --timeout bounds the whole
// wait; when it runs out, each object still waited for is reported (with
// --for=ready, with its status and why) and the command exits 1, or 7
// with --exit-codes (the error wraps cli.ErrTimeout).
package wait
