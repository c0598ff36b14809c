// Package clitest holds what the tests of kdyn's command packages share:
// an API server that answers discovery from the captured documents of a
// real kube-apiserver (APIServer), a kubeconfig for it, Run to run the
// whole command line in process with its output captured, golden files
// refreshed with -update, small fixtures (a discovery snapshot, objects,
// resources) and Concurrency, which counts the requests a test server
// answers at once. Only tests import it.
//
// Run takes the entry point as an argument (root.Main) rather than
// importing it, so that a family's own tests may use the package too;
// tests that do call root.Main are external tests (package get_test).
//
//	srv := clitest.APIServer(t, clitest.EmptyLists)
//	r := clitest.Run(root.Main, "--kubeconfig", clitest.WriteKubeconfig(t, srv.URL), "get", "cm")
package clitest
