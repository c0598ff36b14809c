// Package kustomize holds "kdyn kustomize DIR": build a kustomization and
// print its objects, byte for byte as "kubectl kustomize DIR" prints them
// (the same sigs.k8s.io/kustomize/api version, v0.21.1, and the same
// options: kustomize's legacy order unless the kustomization sets
// sortOptions, files only from the kustomization's tree unless
// --load-restrictor=LoadRestrictionsNone, Helm charts only with
// --enable-helm). It sends no request to a server.
//
// The build itself is cli.Kustomize, which the -k flag of apply, create,
// replace, delete and diff also runs. kubectl's alpha plugin and
// container-function flags (--enable-alpha-plugins, --network, --mount,
// --env, --as-current-user) and its deprecated --reorder and
// --enable-managedby-label are not offered.
package kustomize
