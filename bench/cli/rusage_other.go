//go:build !linux

package cli

import "os"

// maxRSS is unknown off Linux (ru_maxrss units differ).
func maxRSS(*os.ProcessState) int64 { return 0 }
