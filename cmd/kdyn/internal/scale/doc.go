// Package scale holds "kdyn scale": set the replicas of any object with a
// scale subresource (Deployments, ReplicaSets, StatefulSets,
// ReplicationControllers, custom resources whose CRD declares one), named
// (TYPE NAME, TYPE/NAME, or the objects of -f manifests) or selected (-l,
// --all).
//
// # Requests
//
// Per object, without a precondition: one merge patch of the scale
// subresource ({"spec":{"replicas":N}}), as kubectl sends. With
// --current-replicas or --resource-version: a GET of the scale, the check,
// and a PUT of the scale carrying the resourceVersion read, so the check
// holds when the write lands; a conflict repeats the three, up to five
// times. -o (other than name) and --dry-run=client add a GET of a named
// object, which is printed as kubectl prints it: as read (as listed, for
// -l; the manifest's, for -f), with spec.replicas set to the new count for
// the built-in kinds. --dry-run=server sends the writes
// with dryRun=All; --dry-run=client sends none.
//
// # Errors
//
// A failed precondition is a *PreconditionError worded as kubectl's
// ("Expected replicas to be 3, was 2"), exit code 4 (conflict) with
// --exit-codes. With several objects, each failure is reported and the
// others are still scaled.
package scale
