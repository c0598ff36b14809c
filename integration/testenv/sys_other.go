//go:build !unix

package testenv

import (
	"os"
	"syscall"
)

func tryLock(*os.File) error { return nil }

func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process) error { return p.Signal(os.Interrupt) }
func kill(p *os.Process) error      { return p.Kill() }
