package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// buildTimeout bounds building the binary from Main, New and Shared.
const buildTimeout = 30 * time.Minute

var shared struct {
	mu     sync.Mutex
	inMain bool
	opts   Options
	env    *Env
	err    error // a failed build or start, reported to every Shared caller
}

// Main runs a package's tests against one control plane shared by the
// package, and returns the exit code for os.Exit:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
//
// Outside -short mode, Main builds the binary before the tests run (so a
// cold build does not count against -timeout); the control plane starts
// when a test first calls Shared and stops when the tests are done. When
// a test failed, the directory (with controlplane.log) of a temporary Env
// is kept and named on stderr. A test that panics kills the test binary
// without running this cleanup; the control plane then dies with it (Linux
// Pdeathsig).
//
// In -short mode nothing is built or started and Shared skips.
func Main(m *testing.M, opts Options) (code int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	shared.mu.Lock()
	shared.inMain, shared.opts = true, opts
	if !testing.Short() && opts.Binary == "" {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		shared.opts.Binary, shared.err = Binary(ctx)
		cancel()
	}
	shared.mu.Unlock()

	defer func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if shared.env == nil {
			return
		}
		failed := code != 0
		if err := shared.env.stop(failed); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
		if failed {
			fmt.Fprintf(os.Stderr, "testenv: tests failed; control-plane directory kept: %s (log: %s)\n",
				shared.env.Dir(), shared.env.LogPath())
		}
		shared.env = nil
	}()
	return m.Run() // the deferred stop may still change the code
}

// Shared returns the package's control plane, started on first use with
// the Options given to Main. The package's TestMain must call Main.
//
// In -short mode Shared skips the test. Otherwise a control plane that
// cannot be built or started, or that has died, fails the test: it never
// skips silently. Tests share its state; a test that restarts, compacts or
// stops it, or needs other flags, should use New instead.
func Shared(t testing.TB) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: integration test skipped in -short mode")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		t.Fatal("testenv.Shared: the package's TestMain must call testenv.Main")
	}
	if shared.err != nil {
		t.Fatalf("%v", shared.err)
	}
	if shared.env == nil {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		env, err := Start(ctx, shared.opts)
		cancel()
		if err != nil {
			shared.err = err
			t.Fatalf("%v", err)
		}
		shared.env = env
	}
	if err := shared.env.Err(); err != nil {
		t.Fatalf("testenv: shared control plane: %v", err)
	}
	return shared.env
}

// New starts a control plane for one test and stops it in t.Cleanup,
// keeping its directory if the test failed. It skips in -short mode and
// fails the test if the control plane cannot be built or started.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: integration test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	env, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		failed := t.Failed()
		if err := env.stop(failed); err != nil {
			t.Error(err)
		}
		if failed && env.ownDir {
			t.Logf("testenv: control-plane directory kept: %s", env.Dir())
		}
	})
	return env
}
