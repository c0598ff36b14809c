// Package leaderelection_test proves package leaderelection against a
// real kube-apiserver v1.37.2: candidates run as separate processes (this
// test binary, started again in candidate mode) so a leader can be killed
// with SIGKILL, as a crashed pod would be; every candidate reports when it
// started and stopped leading, and the tests check from those reports that
// two candidates never led at once, that a killed leader is replaced
// within LeaseDuration + RetryPeriod, and — with the fault proxy between a
// leader and the server — that a leader whose renewals fail stops before
// its lease can be taken.
package leaderelection_test

import (
	"os"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

func TestMain(m *testing.M) {
	if id := os.Getenv(envCandidate); id != "" {
		os.Exit(candidateMain(id))
	}
	os.Exit(testenv.Main(m, testenv.Options{}))
}
