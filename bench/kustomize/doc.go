// Package kustomize checks that "kdyn kustomize DIR" prints what
// "kubectl kustomize DIR" prints, byte for byte, for kdyn's kustomize
// fixtures (cmd/kdyn/internal/kustomize/testdata: a base and an overlay
// with ConfigMap and Secret generators and their hash suffixes, a merge
// into a generated ConfigMap, a name prefix, strategic-merge and JSON 6902
// patches, an image tag, labels into selectors, a CRD and an object of
// it). Both binaries are built as bench/cli builds them; no server is
// needed. The test is the package; it runs in make test.
package kustomize
