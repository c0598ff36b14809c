// Package config holds "kdyn config": view (the merged kubeconfig,
// credentials redacted unless --raw), get-contexts, current-context and
// use-context. The files are found as kubectl finds them (--kubeconfig,
// else $KUBECONFIG, else ~/.kube/config); no server is asked. A missing
// context is an error naming it.
package config
