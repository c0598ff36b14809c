//go:build unix

package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeGo answers the go env queries that scripts/toolchain.sh and
// scripts/testflags.sh make, as the FAKE_* variables say (GOFLAGS as the go
// command reads it: the environment's when set, else the go env -w one), and
// records every other call with the variables that choose the toolchain and
// the test flags.
const fakeGo = `#!/usr/bin/env bash
case "$1 ${2:-}" in
"env GOVERSION") echo "$FAKE_LOCAL_GOVERSION"; exit 0 ;;
"env CGO_ENABLED") echo "${CGO_ENABLED:-$FAKE_CGO_ENABLED}"; exit 0 ;;
"env CC") echo "${CC:-$FAKE_CC}"; exit 0 ;;
"env GOFLAGS") if [[ -n "${GOFLAGS:-}" ]]; then echo "$GOFLAGS"; else echo "${FAKE_GOENV_GOFLAGS:-}"; fi; exit 0 ;;
esac
printf 'GOTOOLCHAIN=%s\tGOFLAGS=%s\targs=%s\n' "${GOTOOLCHAIN-<unset>}" "${GOFLAGS-<unset>}" "$*" >>"$FAKE_STATE/go.log"
`

type fakeGoEnv struct {
	localVersion string // what GOTOOLCHAIN=local go env GOVERSION says
	cgo          string // go env CGO_ENABLED
	cc           string // go env CC: "ok" for a compiler that works, else a name that is not found
	goenvFlags   string // GOFLAGS set with go env -w
}

// setupFakeGo writes the fake go (and a C compiler that works) into a new
// directory and returns the environment that puts them first in PATH.
func setupFakeGo(t *testing.T, f fakeGoEnv) (env []string, state string) {
	t.Helper()
	root := t.TempDir()
	bin, state := filepath.Join(root, "bin"), filepath.Join(root, "state")
	for _, d := range []string{bin, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExec(t, filepath.Join(bin, "go"), fakeGo)
	writeExec(t, filepath.Join(bin, "fakecc"), "#!/bin/sh\nexit 0\n")
	cc := f.cc
	if cc == "ok" {
		cc = "fakecc"
	}
	return []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + root,
		"TMPDIR=" + root,
		"FAKE_STATE=" + state,
		"FAKE_LOCAL_GOVERSION=" + f.localVersion,
		"FAKE_CGO_ENABLED=" + f.cgo,
		"FAKE_CC=" + cc,
		"FAKE_GOENV_GOFLAGS=" + f.goenvFlags,
	}, state
}

// scripts/toolchain.sh never lowers the pinned toolchain, whatever the
// environment's GOTOOLCHAIN asks for, and keeps a newer one.
func TestToolchainNeverOlderThanPinned(t *testing.T) {
	script, err := filepath.Abs("toolchain.sh")
	if err != nil {
		t.Fatal(err)
	}
	const pinned = "go1.26.10"
	for _, tc := range []struct {
		env   string // GOTOOLCHAIN; "-" for unset
		local string // the local go's version
		want  string
	}{
		{"-", "go1.26.8", pinned},
		{"", "go1.26.8", pinned},
		{"auto", "go1.26.8", pinned},
		{"local", "go1.26.8", pinned},
		{"path", "go1.26.8", pinned},
		{"local", "go1.26.10", "local"},
		{"local", "go1.27.1", "local"},
		{"local", "devel go1.27-abcdef", pinned}, // unknown: not trusted
		{"go1.26.8", "", pinned},
		{"go1.26.9", "", pinned},
		{"go1.26.8+auto", "", pinned},
		{"go1.26.9+path", "", pinned},
		{"go1.26", "", pinned}, // the language version: 1.26.0
		{"go1.26rc2", "", pinned},
		{"go1.25.99", "", pinned},
		{"banana", "", pinned},
		{"go1.26.10", "", "go1.26.10"},
		{"go1.26.10+auto", "", "go1.26.10+auto"},
		{"go1.26.11", "", "go1.26.11"},
		{"go1.27rc1", "", "go1.27rc1"},
		{"go1.27", "", "go1.27"},
		{"go1.27.0+path", "", "go1.27.0+path"},
		{"go2.0.0", "", "go2.0.0"},
	} {
		env, _ := setupFakeGo(t, fakeGoEnv{localVersion: tc.local})
		if tc.env != "-" {
			env = append(env, "GOTOOLCHAIN="+tc.env)
		}
		cmd := exec.Command(script)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOTOOLCHAIN=%s: %v\n%s", tc.env, err, stderr.String())
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("GOTOOLCHAIN=%s (local %s): chose %q, want %q", tc.env, tc.local, got, tc.want)
		}
		if want := "building with GOTOOLCHAIN=" + tc.want + " ("; !strings.Contains(stderr.String(), want) {
			t.Errorf("GOTOOLCHAIN=%s: stderr %q does not say %q", tc.env, stderr.String(), want)
		}
	}
}

// make test, run with a fake go in hostile environments: it builds with the
// pinned toolchain whatever GOTOOLCHAIN says (unless newer), never passes
// -short on to the tests (GOFLAGS from the environment or from go env -w),
// runs without -race only with a NOTICE, and runs bench/cli's tests.
func TestMakeTestGuards(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make:", err)
	}
	for _, tc := range []struct {
		name string
		fake fakeGoEnv
		env  []string
		args []string // make's command line, after "test"

		toolchain string // every go call's GOTOOLCHAIN
		goflags   string // every go call's GOFLAGS
		race      bool
		notices   []string
	}{
		{
			name:      "clean",
			fake:      fakeGoEnv{cgo: "1", cc: "ok"},
			toolchain: "go1.26.10", goflags: "", race: true,
		},
		{
			name:      "local older, GOFLAGS=-short, no cgo",
			fake:      fakeGoEnv{localVersion: "go1.26.8", cgo: "0", cc: "gcc"},
			env:       []string{"GOTOOLCHAIN=local", "GOFLAGS=-short -mod=mod"},
			toolchain: "go1.26.10", goflags: "-mod=mod -short=false",
			notices: []string{
				"NOTICE: make test: removed -short from GOFLAGS",
				"NOTICE: make test: running WITHOUT the race detector: cgo is disabled (go env CGO_ENABLED=0)",
				"NOTICE: make test ran WITHOUT the race detector",
			},
		},
		{
			name:      "older release, -short=true by go env -w, no C compiler",
			fake:      fakeGoEnv{cgo: "1", cc: "no-such-cc", goenvFlags: "-buildvcs=false -short=true"},
			env:       []string{"GOTOOLCHAIN=go1.26.8+auto"},
			toolchain: "go1.26.10", goflags: "-buildvcs=false -short=false",
			notices: []string{
				"NOTICE: make test: removed -short=true from GOFLAGS",
				"NOTICE: make test: running WITHOUT the race detector: the C compiler 'no-such-cc' (go env CC) does not work here",
				"NOTICE: make test ran WITHOUT the race detector",
			},
		},
		{
			name:      "newer local kept, -short=false kept",
			fake:      fakeGoEnv{localVersion: "go1.27.1", cgo: "1", cc: "ok"},
			env:       []string{"GOTOOLCHAIN=local", "GOFLAGS=-short=false"},
			toolchain: "local", goflags: "-short=false", race: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, state := setupFakeGo(t, tc.fake)
			cmd := exec.CommandContext(t.Context(), mk, append([]string{"test"}, tc.args...)...)
			cmd.Dir = ".."
			cmd.Env = append(env, tc.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make test: %v\n%s", err, out)
			}
			calls := readLines(t, filepath.Join(state, "go.log"))
			var sawTest, sawBenchCLI bool
			for _, c := range calls {
				want := "GOTOOLCHAIN=" + tc.toolchain + "\tGOFLAGS=" + tc.goflags + "\t"
				if !strings.HasPrefix(c, want) {
					t.Errorf("go called with %q, want the prefix %q", c, want)
				}
				_, args, _ := strings.Cut(c, "args=")
				fields := strings.Fields(args)
				if fields[0] == "test" {
					if slices.Contains(fields, "./...") {
						sawTest = true
						if got := slices.Contains(fields, "-race"); got != tc.race {
							t.Errorf("go %s: -race %v, want %v", args, got, tc.race)
						}
					}
					if slices.Contains(fields, "./cli/") {
						sawBenchCLI = true
					}
				}
			}
			if !sawTest || !sawBenchCLI {
				t.Errorf("make test ran go test ./... %v, bench's ./cli/ %v; want both:\n%s", sawTest, sawBenchCLI, strings.Join(calls, "\n"))
			}
			for _, n := range tc.notices {
				if !strings.Contains(string(out), n) {
					t.Errorf("output does not say %q:\n%s", n, out)
				}
			}
			if len(tc.notices) == 0 && strings.Contains(string(out), "NOTICE") {
				t.Errorf("a NOTICE in a clean environment:\n%s", out)
			}
			if want := "building with GOTOOLCHAIN=" + tc.toolchain + " ("; !strings.Contains(string(out), want) {
				t.Errorf("output does not say %q:\n%s", want, out)
			}
		})
	}
}
