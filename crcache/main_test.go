package crcache_test

import (
	"os"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// TestMain runs one control plane for the package's tests.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
