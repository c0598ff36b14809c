//go:build !linux

package leaderelection_test

import (
	"syscall"
	"time"
)

// monoNow falls back to the wall clock, the one clock processes share
// everywhere.
func monoNow() int64 { return time.Now().UnixNano() }

const clockName = "the wall clock"

func childAttr() *syscall.SysProcAttr { return nil }
