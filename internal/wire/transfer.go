package wire

import "context"

// bulkKey marks a context whose requests are bulk transfers.
type bulkKey struct{}

// WithBulk marks the requests sent with the returned context as bulk
// transfers: answers of many objects, such as a list of thousands or the
// initial events of a streaming list. kdyn's rest.Client sends them over
// HTTP/1.1, on a connection that carries one alone, when it has a
// transport for that (NewForConfig without Config.Transport), and like any
// other request otherwise.
//
// Why: Go's HTTP/2 costs a bulk transfer far more than HTTP/1.1 does, at
// both ends. The server hands every flush to its connection's writer
// goroutine and frames it; the client hands every frame from its reader
// goroutine to the body and writes a WINDOW_UPDATE for every 4 KiB it
// reads. Measured on a v1.37 server, a streaming list of 10,000 ConfigMaps
// sent over HTTP/1.1 was synced in 0.6× the time (docs/benchmarks.md).
// Each bulk request costs a connection, kept for reuse by the next one
// when its body was read to the end; so watches that stay open belong on
// the shared HTTP/2 connection, and a streaming list that came over
// HTTP/1.1 is ended after its initial events (Stream.OneShot).
func WithBulk(ctx context.Context) context.Context {
	return context.WithValue(ctx, bulkKey{}, true)
}

// IsBulk reports whether ctx marks a bulk transfer (WithBulk).
func IsBulk(ctx context.Context) bool {
	b, _ := ctx.Value(bulkKey{}).(bool)
	return b
}
