// Package apply holds the commands that send manifests to the server:
// apply (client-side apply by default, as kubectl: its
// last-applied-configuration annotation and a three-way patch — strategic
// merge for kinds whose OpenAPI v3 PATCH takes it, read once per group
// version and run, JSON merge for the others; retried on Conflict, and
// with --force deleted and created when the server refuses it;
// server-side apply with --server-side), create, replace (PUT, or with
// --force delete and create) and diff (the same apply in dry-run mode,
// compared with the live object as YAML, Secrets masked; shown as a unified diff, or by the
// program KUBECTL_EXTERNAL_DIFF names, run once on a LIVE- and a MERGED-
// directory as kubectl does).
//
// All four read -f through cli.ManifestRun: Namespaces and CRDs first, an
// object of a CRD written in the same run waiting (up to --timeout) for it
// to be Established, each failure reported with its file and document and
// the other documents still sent (unless --fail-fast). Every document is
// read before any is sent: one that cannot be read stops the command
// before anything is written (kubectl sends the documents before it).
// Writes go through
// the factory's write client, so --field-manager, --dry-run=server and
// --validate (fieldValidation) are set by the library's decorators;
// --dry-run=client sends no write. apply sends up to --concurrency objects
// at once (cli.EachConcurrent), without the client-side rate limit.
//
// apply --prune --applyset and diff --prune implement KEP-3659's ApplySets
// as kubectl v0.37.2 does (applyset.go: the parent, its id, labels and
// annotations and the tooling rule; prune.go: which members are pruned;
// applyset_run.go: the steps of one apply and the summary of a failure).
// An ApplySet adds a GET of the parent, one apply of the parent before the
// objects and one after pruning, a list per recorded kind and namespace,
// and a DELETE per pruned member; a custom resource parent adds one list
// of CRDs. --prune without --applyset is kubectl's older pruning
// (legacyprune.go): a list per allowlisted kind and namespace applied to,
// filtered by -l and the last-applied annotation, through the same lists
// and deletions.
// Requests per object: one for apply and create; two for client-side apply
// (a GET, then a create or a patch) and for diff (a GET and the dry-run
// apply); one for replace, two when the manifest has no resourceVersion (a
// GET for the live one first). A CRD of the run adds a GET every 200 ms
// while it is not yet Established.
//
// replace --force and apply --force delete and wait as delete does (its
// WaitDeleted, a watch of the object); they are the one place where a
// family uses another (package delete).
package apply
