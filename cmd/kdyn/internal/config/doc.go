// Package config holds "kdyn config": view (the merged kubeconfig,
// credentials redacted unless --raw; yaml, json or jsonpath),
// get-contexts, get-clusters, get-users, current-context, use-context,
// and the edits kubectl has (set-cluster, set-credentials, set-context,
// set, unset, delete-cluster, delete-context, delete-user,
// rename-context), made through kubeconfig.Editor. The files are found
// as kubectl finds them (--kubeconfig, else $KUBECONFIG, else
// ~/.kube/config); no server is asked. A missing
// context is an error naming it.
package config
