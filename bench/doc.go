// Package bench holds kdyn's benchmarks against the incumbents — client-go
// for the library, kubectl for the CLI — measured side by side in one run
// on the same real control plane. Run them with `make bench` from the
// repository root.
//
// Two library scenarios are not part of `make bench` (libbench's "all") nor
// of `make test`, and run only when named; each starts a control plane of
// its own with the ShardedListAndWatch feature gate on:
//
//   - `go run ./cmd/libbench -scenario shard`: 40,000 ConfigMaps, one
//     unsharded controller against four sharded ring members (package
//     shard), each in its own process — heap, bytes received, CPU,
//     reconcile throughput, and the time to full coverage after a member is
//     killed (about 2 minutes on 2 cores);
//   - `go run ./cmd/libbench -scenario scale`: a metadata-only ResourceSet
//     (default and compact) and client-go's metadatainformer over 10k, 50k
//     and 250k objects (ConfigMaps, Secrets and two CRDs) — heap per object
//     against the raw metadata, sync time against the server's send time,
//     relist peak, growth; each sync timed twice, the second time after
//     the relist in the reverse order — then 250k in four shards (about 8
//     minutes on 2 cores, 3 of them seeding; -scale-sizes picks the sizes).
//
// `go run ./cmd/libbench -scenario crcache` also runs only when named, on a
// control plane of its own without the gate: the operator of
// crcache/examples/secretsync on controller-runtime's cache (as it comes
// and with TransformStripManagedFields) and on crcache (default and
// compact) over 10k and 100k objects — sync time and CPU, steady RSS and
// live heap, the initial list's peak, CPU per reconcile (about 13 minutes
// on 2 cores; -scale-sizes picks the sizes).
//
// See docs/benchmarks.md for the figures and how they were taken.
package bench
