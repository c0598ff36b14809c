//go:build darwin || freebsd

package kubeconfig

import "syscall"

const ioctlGetTermios = syscall.TIOCGETA
