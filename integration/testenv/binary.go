package testenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Environment variables read by Binary.
const (
	// EnvBinary names a prebuilt control-plane binary to use instead of
	// building one. It overrides everything else.
	EnvBinary = "KDYN_CONTROLPLANE_BIN"
	// EnvCache names the directory under which built binaries are cached
	// (<dir>/<hash>/controlplane). The default is
	// os.UserCacheDir()/kdyn/controlplane.
	EnvCache = "KDYN_CONTROLPLANE_CACHE"
)

// mainModule is the module path of the repository root.
const mainModule = "github.com/kdyn/kdyn"

// buildLDFlags stamp the apiserver's version. They are part of the cache key.
const buildLDFlags = "-X k8s.io/component-base/version.gitVersion=v1.37.2" +
	" -X k8s.io/component-base/version.gitMajor=1" +
	" -X k8s.io/component-base/version.gitMinor=37"

// keyFiles are the files of integration/controlplane whose content decides
// the cache key.
var keyFiles = []string{"go.mod", "go.sum", "main.go", "kwok.go"}

var binaryMemo struct {
	sync.Mutex
	path string
}

// Binary returns the path of the control-plane binary (integration/controlplane),
// building it on first use.
//
// $KDYN_CONTROLPLANE_BIN, when set, is returned as is (it must exist).
// Otherwise the binary is cached at <cache>/<hash>/controlplane, where
// <cache> is $KDYN_CONTROLPLANE_CACHE or os.UserCacheDir()/kdyn/controlplane
// and <hash> is the SHA-256 of the control-plane module's go.mod, go.sum,
// main.go and kwok.go, the build's -ldflags, and the Go release that builds it: `go env
// GOVERSION` of the go command found in PATH, run where it builds, so that
// it follows GOTOOLCHAIN and the module's go line (without a go command,
// the release that built the running program). A new toolchain, with its
// standard-library fixes, therefore builds a new binary. A missing binary
// is built with that go command, under an exclusive file lock, so
// concurrent test processes build it once; a cold build takes several
// minutes. The build's output is part of the error when it fails.
func Binary(ctx context.Context) (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("testenv: $%s: %w", EnvBinary, err)
		}
		return p, nil
	}
	binaryMemo.Lock()
	defer binaryMemo.Unlock()
	if binaryMemo.path != "" {
		if _, err := os.Stat(binaryMemo.path); err == nil {
			return binaryMemo.path, nil
		}
	}
	p, err := ensureBinary(ctx)
	if err != nil {
		return "", fmt.Errorf("testenv: control-plane binary: %w", err)
	}
	binaryMemo.path = p
	return p, nil
}

func ensureBinary(ctx context.Context) (string, error) {
	modDir, err := controlPlaneDir()
	if err != nil {
		return "", err
	}
	goTool, lookErr := exec.LookPath("go")
	goVersion := runtime.Version() // finds a binary that this release built; building needs goTool
	if lookErr == nil {
		if goVersion, err = toolchainVersion(ctx, goTool, modDir); err != nil {
			return "", err
		}
	}
	hash, err := sourceHash(modDir, goVersion)
	if err != nil {
		return "", err
	}
	root := os.Getenv(EnvCache)
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = filepath.Join(os.TempDir(), "kdyn-cache")
		}
		root = filepath.Join(base, "kdyn", "controlplane")
	}
	dir := filepath.Join(root, hash)
	bin := filepath.Join(dir, "controlplane")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "lock"), func() {
		fmt.Fprintln(os.Stderr, "testenv: waiting for another process to build the control plane…")
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) { // built by someone else while we waited
		return bin, nil
	}

	tmp, err := os.CreateTemp(dir, "controlplane-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // no-op after the rename

	if lookErr != nil {
		return "", fmt.Errorf("building %s needs the go command: %w (or set $%s)", modDir, lookErr, EnvBinary)
	}
	fmt.Fprintf(os.Stderr, "testenv: building the control plane with %s (first time, several minutes)…\n", goVersion)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "build", "-ldflags", buildLDFlags, "-o", tmp.Name(), ".")
	cmd.Dir = modDir
	cmd.Env = buildEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build in %s: %w\n%s", modDir, err, lastBytes(out.Bytes(), 16<<10))
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "testenv: built the control plane in %s: %s\n", time.Since(start).Round(time.Second), bin)
	return bin, nil
}

// controlPlaneDir finds integration/controlplane: next to this source file
// when the build kept absolute paths, else by walking up from the working
// directory to the main module's go.mod.
func controlPlaneDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		d := filepath.Join(filepath.Dir(file), "..", "controlplane")
		if _, err := os.Stat(filepath.Join(d, "main.go")); err == nil {
			return filepath.Clean(d), nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if modulePath(filepath.Join(d, "go.mod")) == mainModule {
			cp := filepath.Join(d, "integration", "controlplane")
			if _, err := os.Stat(filepath.Join(cp, "main.go")); err != nil {
				return "", err
			}
			return cp, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("cannot find integration/controlplane: no go.mod of %s above %s", mainModule, wd)
		}
		d = parent
	}
}

// modulePath returns the module line of a go.mod file, or "".
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// buildEnv is the environment of the go commands that build the control
// plane: the module builds on its own, outside any workspace.
func buildEnv() []string { return append(os.Environ(), "GOWORK=off") }

// toolchainVersion returns the Go release that goTool builds modDir with
// (go env GOVERSION there, with the build's environment), such as
// "go1.26.10".
func toolchainVersion(ctx context.Context, goTool, modDir string) (string, error) {
	cmd := exec.CommandContext(ctx, goTool, "env", "GOVERSION")
	cmd.Dir = modDir
	cmd.Env = buildEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	v := strings.TrimSpace(string(out))
	if err == nil && v == "" {
		err = errors.New("empty answer")
	}
	if err != nil {
		return "", fmt.Errorf("%s env GOVERSION in %s: %w\n%s", goTool, modDir, err, lastBytes(stderr.Bytes(), 4<<10))
	}
	return v, nil
}

// sourceHash is the cache key of the binary built from modDir by goVersion.
func sourceHash(modDir, goVersion string) (string, error) {
	h := sha256.New()
	for _, name := range keyFiles {
		data, err := os.ReadFile(filepath.Join(modDir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	fmt.Fprintf(h, "ldflags %s\n", buildLDFlags)
	fmt.Fprintf(h, "go %s\n", goVersion)
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && fi.Size() > 0
}

// lockFile takes an exclusive lock on path, polling so that ctx can cancel
// the wait. waiting is called once if the lock is busy.
func lockFile(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	announced := false
	for {
		err := tryLock(f)
		if err == nil {
			return func() { f.Close() }, nil // closing the descriptor releases the lock
		}
		if !errors.Is(err, errLocked) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !announced && waiting != nil {
			waiting()
			announced = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

var errLocked = errors.New("locked by another process")

func lastBytes(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append([]byte("…"), b[len(b)-n:]...)
}
