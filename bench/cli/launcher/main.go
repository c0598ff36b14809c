//go:build unix

// Command launcher runs one program and writes what it measured to a file:
//
//	launcher RESULT-FILE PROGRAM [ARG...]
//
// RESULT-FILE gets "WALL_NS CPU_NS MAXRSS_BYTES EXIT_CODE": the wall time
// from starting PROGRAM to its exit, its user+system CPU and its peak RSS
// (ru_maxrss of wait4). Stdin, stdout and stderr are passed through, and
// the exit code is PROGRAM's.
//
// It exists because ru_maxrss of a child is at least the RSS of the process
// that started it: Go starts children with CLONE_VM|CLONE_VFORK, and Linux
// folds the old address space's high-water RSS into the child's maxrss at
// exec. Measured directly from the benchmark harness (tens of MB), every
// command would seem to need at least the harness's memory; measured from
// this launcher, the floor is the launcher's own couple of MB.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: launcher RESULT-FILE PROGRAM [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "launcher:", err)
			os.Exit(127)
		}
		code = ee.ExitCode()
	}
	ps := cmd.ProcessState
	var rss int64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) * 1024 // KiB on Linux
	}
	line := fmt.Sprintf("%d %d %d %d\n", wall.Nanoseconds(), (ps.UserTime() + ps.SystemTime()).Nanoseconds(), rss, code)
	if err := os.WriteFile(os.Args[1], []byte(line), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(127)
	}
	os.Exit(code)
}
