// Package kubectlsuite runs Kubernetes' own kubectl command-line tests
// (test/cmd in k8s.io/kubernetes, the functions hack/make-rules/test-cmd.sh
// runs) against kdyn and against kubectl built from k8s.io/kubectl, one
// function at a time, each tool on a control plane of its own, and
// reports both results per function.
//
// The scripts are read from the module cache at test time (PrepareRoot
// copies them to a writable directory); kdyn keeps none of them. What the
// scripts need from the rest of Kubernetes' hack/ tree (logging, a few
// kube::util helpers) and runTests' prelude (kube_flags, the field names)
// is kdyn's own port, shim.sh. Each function runs in a fresh bash with
// errexit, a home of its own holding the suite's kubeconfig (context
// "test", user "test-admin" with the token "admin-token", cluster "local"
// without TLS verification), and the tool on PATH as kubectl.
//
// The control plane is kdyn's test control plane (integration/testenv:
// kube-apiserver, etcd and kube-controller-manager, as test-cmd.sh runs
// them, no scheduler and no kubelet), with the suite's token, its
// admission plugins, and a Node "127.0.0.1" as test-cmd.sh creates.
//
// TestKubectlSuite fails when a function kdyn passes in testdata/results.txt
// fails now, and when docs/kubectl-suite.md gives no reason (a bullet
// under ReasonsHeading) for a function kdyn fails and kubectl passes.
package kubectlsuite
