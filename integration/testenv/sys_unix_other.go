//go:build unix && !linux

package testenv

import "syscall"

// sysProcAttr puts the control plane in its own process group. Without
// Linux's Pdeathsig, a control plane can outlive a test binary that dies
// without running Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
