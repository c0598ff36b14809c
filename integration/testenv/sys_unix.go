//go:build unix

package testenv

import (
	"errors"
	"os"
	"syscall"
)

func tryLock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// signalGroup sends sig to the child's process group (the child leads its own
// group, see sysProcAttr).
func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func terminate(p *os.Process) error { return signalGroup(p, syscall.SIGTERM) }
func kill(p *os.Process) error      { return signalGroup(p, syscall.SIGKILL) }
