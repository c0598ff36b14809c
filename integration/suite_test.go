package integration_test

import (
	"testing"

	"github.com/kdyn/kdyn/dynamic/dynamictest"
	"github.com/kdyn/kdyn/integration/testenv"
)

// TestSharedSuiteOnRealServer runs the behaviour suite that dynamic/fake
// also passes, against the real kube-apiserver: the fake behaves like it.
func TestSharedSuiteOnRealServer(t *testing.T) {
	env := testenv.Shared(t)
	c := adminClient(t, env)
	dynamictest.Run(t, dynamictest.Env{Client: c, Namespace: newNamespace(t, c)})
}
