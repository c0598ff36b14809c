//go:build unix

package plugin

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// execHelper, set in a child test process's environment, makes
// TestRunReplacesProcess resolve and run the plugin its arguments (after
// "--") name, in place of the process.
const execHelper = "KDYN_PLUGIN_EXEC_HELPER"

// TestRunReplacesProcess: the plugin runs in place of the process that
// resolved it (the same process id), with its arguments and environment,
// and its exit code is the process's.
func TestRunReplacesProcess(t *testing.T) {
	if bad := os.Getenv(execHelper); bad != "" && bad != "1" {
		// run a file that is no program: Run must return execve's error
		_, err := (&Match{Path: bad}).Run(os.Environ(), cli.IOStreams{})
		if errors.Is(err, syscall.ENOEXEC) {
			os.Exit(102)
		}
		os.Exit(103)
	}
	if os.Getenv(execHelper) != "" {
		args := os.Args[slices.Index(os.Args, "--")+1:]
		m, err := Resolve(testRoot(), args)
		if err != nil || m == nil {
			os.Exit(100)
		}
		_, err = m.Run(Environ(os.Environ(), "/path/to/kdyn"), cli.IOStreams{})
		os.Stderr.WriteString(err.Error())
		os.Exit(101)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "kubectl-foo-bar")
	sh := "#!/bin/sh\necho \"pid=$$ 0=$0 args=$*\"\necho \"KUBECTL_PATH=$KUBECTL_PATH CUSTOM=$CUSTOM\"\nexit 7\n"
	if err := os.WriteFile(path, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunReplacesProcess$", "--", "foo", "bar", "x", "--y=z")
	cmd.Env = append(os.Environ(), execHelper+"=1", "PATH="+dir, "CUSTOM=abc", "KUBECTL_PATH=/not/this")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("run: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
	pid := exit.ProcessState.Pid()
	want := "pid=" + strconv.Itoa(pid) + " 0=" + path + " args=x --y=z\nKUBECTL_PATH=/path/to/kdyn CUSTOM=abc\n"
	if out.String() != want {
		t.Errorf("plugin printed %q, want %q", out.String(), want)
	}

	// A plugin that cannot start: Run returns execve's error.
	bad := filepath.Join(dir, "kubectl-bad")
	if err := os.WriteFile(bad, []byte{0, 1, 2, 3}, 0o755); err != nil {
		t.Fatal(err)
	}
	// (in a child process too: were the exec to succeed, it would replace
	// the test binary)
	cmd = exec.Command(os.Args[0], "-test.run=^TestRunReplacesProcess$")
	cmd.Env = append(os.Environ(), execHelper+"="+bad)
	err = cmd.Run()
	if !errors.As(err, &exit) || exit.ExitCode() != 102 {
		t.Errorf("Run(not a program) in a child: %v, want exit 102 (ENOEXEC returned)", err)
	}
}
