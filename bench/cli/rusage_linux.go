package cli

import (
	"os"
	"syscall"
)

// maxRSS is the child's peak resident set in bytes (ru_maxrss is in KiB on
// Linux).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
