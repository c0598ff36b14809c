//go:build !linux

package testenv

import "time"

// MonoNow falls back to the wall clock, the one clock processes share
// everywhere.
func MonoNow() int64 { return time.Now().UnixNano() }

// MonoClockName says which clock MonoNow reads, for logs.
const MonoClockName = "the wall clock"
