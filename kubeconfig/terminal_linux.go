package kubeconfig

import "syscall"

const ioctlGetTermios = syscall.TCGETS
