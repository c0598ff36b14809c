//go:build !linux && !darwin && !freebsd

package kubeconfig

import "os"

// isTerminal reports whether f is a character device. That is true of a
// terminal, and also of /dev/null, so on these systems a plugin may be told
// it can interact when it cannot.
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
