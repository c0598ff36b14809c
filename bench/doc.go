// Package bench holds kdyn's benchmarks against the incumbents — client-go
// for the library, kubectl for the CLI — measured side by side in one run
// on the same real control plane. Run them with `make bench` from the
// repository root.
package bench
