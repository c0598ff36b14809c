//go:build linux

package leaderelection_test

import "syscall"

// childAttr has the kernel kill a candidate when the test binary dies.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
