// Package delete holds "kdyn delete": objects named on the command line,
// selected by -l, --field-selector or --all (listed page by page), or
// those of manifest files (in file order, CRDs and Namespaces last).
//
// Each object is one DELETE (a GET with --dry-run=client), sent by Send with the propagation policy of
// --cascade and the grace period of --grace-period, --now and --force.
// Send reads the UID of what it deleted from the answer, which the dynamic
// client's Delete does not return, so that the wait that follows (--wait,
// by default; at most --timeout, one hour for 0) tells the object from a
// new one of the same name. The wait watches each object until it is gone;
// when it runs out, the error names what still holds the object (its
// finalizers, its deletion timestamp), as a note on stderr does after 5 s
// of waiting. Failures are reported per object and the others still go; the
// command then exits 1 (see cli.ExitCode).
package delete
