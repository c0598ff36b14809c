// Package cli benchmarks the kdyn command line against kubectl v0.37.2,
// side by side in one run on one real control plane
// (github.com/kdyn/kdyn/integration/testenv): both binaries are built with
// the same toolchain and flags, the same commands run alternately against
// the same seeded namespace, and each is measured from outside (wall time of
// the exec, user+system CPU and peak RSS from the child's rusage).
//
// The command bench/cmd/clibench runs it; see Run for what is measured.
//
// # Output comparisons in tests
//
// The package's tests (verbs_test.go, run by make test) build both
// binaries the same way and run them with the same arguments against a
// shared control plane, requiring the same exit code and byte-identical
// standard output (and standard error where kubectl's wording does not
// name itself): every create generator with --dry-run=client and each
// output, the client dry runs of apply, patch, label, annotate, scale and
// delete on the same live objects, real creates (server-set fields
// normalized), and auth can-i (as the admin and as a user with little
// right) and whoami.
package cli
