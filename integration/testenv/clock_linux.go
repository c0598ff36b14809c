package testenv

import (
	"syscall"
	"unsafe"
)

// MonoNow reads CLOCK_MONOTONIC in nanoseconds. Every process on the
// machine shares it, nothing steps it (the wall clock may jump, as when a
// suspended virtual machine resumes and its time is set right), and it is
// the clock Go measures durations and deadlines with: times taken in
// different processes of a test compare directly, and by the clock the
// code under test used.
func MonoNow() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		panic(errno)
	}
	return ts.Nano()
}

// MonoClockName says which clock MonoNow reads, for logs.
const MonoClockName = "CLOCK_MONOTONIC"
