// Package cli benchmarks the kdyn command line against kubectl v0.37.2,
// side by side in one run on one real control plane
// (github.com/kdyn/kdyn/integration/testenv): both binaries are built with
// the same toolchain and flags, the same commands run alternately against
// the same seeded namespace, and each is measured from outside (wall time of
// the exec, user+system CPU and peak RSS from the child's rusage).
//
// The command bench/cmd/clibench runs it; see Run for what is measured.
package cli
