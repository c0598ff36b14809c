//go:build unix

package plugin

import (
	"syscall"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// execute replaces the process with path, args and env, as kubectl runs
// its plugins on Unix: the plugin has kdyn's process id, standard streams
// and signals, and its exit code is the command's.
func execute(path string, args, env []string, _ cli.IOStreams) (int, error) {
	// execve's first argument is the program's name: the path, as kubectl
	// passes it.
	err := syscall.Exec(path, append([]string{path}, args...), env)
	return 1, err
}
