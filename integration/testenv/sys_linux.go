package testenv

import "syscall"

// sysProcAttr puts the control plane in its own process group (so a terminal's
// Ctrl-C reaches only the test binary, which then stops it) and has the
// kernel kill it when the test binary dies, even by SIGKILL or a panic.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
