//go:build linux

package leaderelection_test

import (
	"syscall"
	"unsafe"
)

// monoNow reads CLOCK_MONOTONIC, which every process on the machine
// shares and which NTP does not step: timestamps from different candidate
// processes compare directly.
func monoNow() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return ts.Nano()
}

// clockName says which clock the timestamps are on, for the logs.
const clockName = "CLOCK_MONOTONIC"

// childAttr has the kernel kill a candidate when the test binary dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
