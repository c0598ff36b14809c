// Package integration_test proves kdyn's library against a real
// kube-apiserver v1.37.2 with etcd, started by the tests (see testenv).
package integration_test

import (
	"os"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m, testenv.Options{})
	removeKdynBinary()
	os.Exit(code)
}
