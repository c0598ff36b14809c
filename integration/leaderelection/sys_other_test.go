//go:build !linux

package leaderelection_test

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
