//go:build linux || darwin || freebsd

package kubeconfig

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal, by asking for its terminal
// attributes as the C library's isatty does. (golang.org/x/term would do
// the same; it is not a dependency of this module.)
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = sc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGetTermios, uintptr(unsafe.Pointer(&t)))
		ok = errno == 0
	})
	return ok
}
