// Package edit holds the commands that change existing objects in place:
// edit (the object in $KUBE_EDITOR, sent back with an update carrying the
// resourceVersion it was read at), patch (strategic merge, JSON merge,
// JSON patch or apply; without --type, strategic for built-in resources
// and merge for custom ones, told apart by one GET of the CRD), and label
// and annotate (a JSON merge patch of the keys that change), and apply
// edit-last-applied (the last-applied-configuration annotations in the
// editor, each changed one written back with a JSON merge patch of the
// annotation alone).
//
// Each object costs a GET and a write (patch of a custom resource may add
// the CRD lookup once per type). Writes go through the factory's write
// client: --field-manager and --dry-run=server are set by the library's
// decorators. With --dry-run=client patch, label and annotate send no
// write: they print the object read, changed as kubectl changes it locally
// (patch: a JSON or merge patch, or a strategic merge patch without lists
// or $ directives, which means the same; see patchLocally). With several
// objects, one that fails is reported and
// the others still change; the command then exits with the last failure's
// code (cli.ObjErrors).
package edit
