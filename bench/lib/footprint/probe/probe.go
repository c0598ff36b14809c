// Package probe holds what the footprint probes share: reading their own
// resident memory. It is linked into both contenders of a comparison.
package probe

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// RSS is the process's resident set size after a full GC, in bytes; -1
// where /proc is not readable.
func RSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &kb); err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}
