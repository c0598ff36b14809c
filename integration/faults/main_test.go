// Package faults_test puts kdyn — its informer, discovery, mapper and the
// kdyn CLI — behind integration/faultproxy, in front of a real
// kube-apiserver v1.37.2, and checks that what kdyn reports still equals
// the server through cut connections, stalls, restarts, compaction, 429
// storms, 503s from one API group and malformed watch frames.
//
// Every scenario ends with the same two checks: the informer's cache
// equals a fresh list from the server, and a model built only from the
// events handed to handlers (or the lines the CLI printed) equals it too,
// with no event out of order.
package faults_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kdyn/kdyn/integration/testenv"
)

// kdynBin is the kdyn binary, built once for the package (in a temporary
// directory, so the tests write nothing into the source tree).
var kdynBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		flag.Parse()
		if !testing.Short() {
			dir, err := os.MkdirTemp("", "kdyn-faults-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			kdynBin = filepath.Join(dir, "kdyn")
			_, file, _, _ := runtime.Caller(0)
			cmd := exec.Command("go", "build", "-o", kdynBin, "./cmd/kdyn")
			cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build kdyn: %v\n%s", err, out)
				return 1
			}
		}
		return testenv.Main(m, testenv.Options{})
	}())
}
