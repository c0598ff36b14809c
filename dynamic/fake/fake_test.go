package fake_test

import (
	"testing"

	"github.com/kdyn/kdyn/dynamic/dynamictest"
	"github.com/kdyn/kdyn/dynamic/fake"
)

// TestSuite runs the behaviour suite that a real kube-apiserver passes too.
// The fake needs no Namespace object for "test" to hold ConfigMaps.
func TestSuite(t *testing.T) {
	dynamictest.Run(t, dynamictest.Env{Client: fake.NewClient(), Namespace: "test"})
}

// TestSuiteTwice shows the suite can run twice against one client, as it
// may against one server.
func TestSuiteTwice(t *testing.T) {
	c := fake.NewClient()
	dynamictest.Run(t, dynamictest.Env{Client: c, Namespace: "test"})
	dynamictest.Run(t, dynamictest.Env{Client: c, Namespace: "test"})
}
