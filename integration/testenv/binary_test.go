package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo answers "go env GOVERSION" with $FAKE_GOVERSION, only when run in
// the control-plane module outside any workspace (as the build runs), and
// "go build ... -o OUT ." by writing OUT and logging the build.
const fakeGo = `#!/bin/sh
if [ "$1 $2" = "env GOVERSION" ]; then
	if [ "$PWD" != "$FAKE_MODDIR" ] || [ "$GOWORK" != off ]; then
		echo "run in $PWD with GOWORK=$GOWORK" >&2
		exit 1
	fi
	if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 1; fi
	echo "$FAKE_GOVERSION"
	exit 0
fi
if [ "$1" = build ]; then
	while [ "$#" -gt 0 ]; do
		if [ "$1" = -o ]; then echo "fake control plane by $FAKE_GOVERSION" >"$2"; fi
		shift
	done
	echo "$FAKE_GOVERSION" >>"$FAKE_LOG"
	exit 0
fi
echo "unexpected: go $*" >&2
exit 2
`

// setFakeGo puts the fake go alone on PATH and returns the module directory
// and the log of its builds.
func setFakeGo(t *testing.T, version string) (modDir, log string) {
	t.Helper()
	modDir, err := controlPlaneDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(bin, "builds.log")
	t.Setenv("PATH", bin)
	t.Setenv("FAKE_MODDIR", modDir)
	t.Setenv("FAKE_LOG", log)
	t.Setenv("FAKE_GOVERSION", version)
	t.Setenv("FAKE_FAIL", "")
	return modDir, log
}

func TestSourceHashIncludesGoVersion(t *testing.T) {
	modDir, err := controlPlaneDir()
	if err != nil {
		t.Fatal(err)
	}
	hash := func(v string) string {
		h, err := sourceHash(modDir, v)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if a, b := hash("go1.26.10"), hash("go1.26.10"); a != b {
		t.Errorf("the same sources and release hash differently: %s, %s", a, b)
	}
	if a, b := hash("go1.26.8"), hash("go1.26.10"); a == b {
		t.Errorf("go1.26.8 and go1.26.10 share the cache key %s", a)
	}
}

// toolchainVersion asks the go command that will build, where and as it
// builds, and reports its failure with what it said.
func TestToolchainVersion(t *testing.T) {
	if real, err := exec.LookPath("go"); err == nil {
		modDir, err := controlPlaneDir()
		if err != nil {
			t.Fatal(err)
		}
		v, err := toolchainVersion(t.Context(), real, modDir)
		if err != nil || !strings.HasPrefix(v, "go1.") {
			t.Errorf("the real go command: %q, %v; want a release such as go1.26.10", v, err)
		}
	}
	modDir, _ := setFakeGo(t, "go1.99.1")
	goTool := filepath.Join(os.Getenv("PATH"), "go")
	if v, err := toolchainVersion(t.Context(), goTool, modDir); err != nil || v != "go1.99.1" {
		t.Errorf("toolchainVersion = %q, %v; want go1.99.1", v, err)
	}
	t.Setenv("FAKE_FAIL", "go: downloading go1.99.1: no network")
	if v, err := toolchainVersion(t.Context(), goTool, modDir); err == nil || !strings.Contains(err.Error(), "no network") {
		t.Errorf("toolchainVersion = %q, %v; want the go command's error", v, err)
	}
}

// A new Go release builds a new control plane; the same release finds the
// one it built.
func TestNewToolchainRebuilds(t *testing.T) {
	t.Setenv(EnvCache, t.TempDir())
	_, log := setFakeGo(t, "go1.26.8")
	build := func() string {
		t.Helper()
		p, err := ensureBinary(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := build()
	if again := build(); again != old {
		t.Errorf("the same release built again: %s, then %s", old, again)
	}
	t.Setenv("FAKE_GOVERSION", "go1.26.10")
	fixed := build()
	if fixed == old {
		t.Fatalf("go1.26.10 reused the binary that go1.26.8 built: %s", old)
	}
	if data, _ := os.ReadFile(fixed); string(data) != "fake control plane by go1.26.10\n" {
		t.Errorf("%s holds %q", fixed, data)
	}
	data, _ := os.ReadFile(log)
	if got, want := string(data), "go1.26.8\ngo1.26.10\n"; got != want {
		t.Errorf("builds by %q, want %q", got, want)
	}
}
