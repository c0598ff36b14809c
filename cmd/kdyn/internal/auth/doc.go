// Package auth holds "kdyn auth": can-i (a SelfSubjectAccessReview; "yes"
// exits 0, "no" exits 1, as kubectl's), can-i --list (a
// SelfSubjectRulesReview printed as kubectl's table: rules broken down to
// one verb, resource and name each, verbs merged back per resource, sorted
// as kubectl sorts them), whoami (a SelfSubjectReview, as a table or
// with -o) and reconcile.
//
// Reviews are created through the dynamic client (can-i) or the REST
// client (whoami, whose -o json keeps the server's member order, which is
// kubectl's); one request each, plus discovery to resolve can-i's TYPE.
// Warnings (an unknown type or verb, a cluster-scoped resource asked about
// in a namespace) go to stderr worded as kubectl's.
//
// # reconcile
//
// auth reconcile -f brings the rbac.authorization.k8s.io/v1 Roles,
// ClusterRoles, RoleBindings and ClusterRoleBindings of manifests into the
// cluster the way Kubernetes' rbac reconciliation (which kubectl uses)
// does: a missing object is created (a namespaced one's namespace first,
// as far as the user may), a stored role gains the rules it does not
// already allow (rules compared broken down to one verb, group, resource
// and name each, wildcards and "*/subresource" honoured) and the
// aggregation selectors it lacks, a stored binding the subjects it lacks,
// both the manifest's labels and annotations; --remove-extra-permissions
// and --remove-extra-subjects make them exactly the manifest's. A binding
// whose roleRef differs is deleted (with its UID as precondition) and
// created again; an object annotated
// rbac.authorization.kubernetes.io/autoupdate=false is not written. An
// update that meets a conflict starts over, three times at most.
//
// The objects are decoded into this package's copies of rbac/v1's types
// (rbac.go), so they print as kubectl's typed objects do: unknown fields
// dropped, members in the Go structs' order. Each object is printed on
// standard output ("KIND/NAME reconciled", with " (dry run)" under
// --dry-run=client, or with -o) and what had to change on standard error,
// in kubectl's lines (rules and subjects as Go's %+v of the rbac/v1
// structs). Other kinds are skipped; v1beta1 and v1alpha1 RBAC objects
// stop the run with kubectl's error.
package auth
