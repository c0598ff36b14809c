//go:build !unix

package plugin

import (
	"errors"
	"os/exec"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// execute runs path with args and env as a child on streams, where a
// process cannot be replaced (Windows), and returns its exit code.
func execute(path string, args, env []string, streams cli.IOStreams) (int, error) {
	// Not exec.Command: a plugin found through a relative PATH entry runs,
	// as it does on Unix.
	cmd := &exec.Cmd{Path: path, Args: append([]string{path}, args...), Env: env}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = streams.In, streams.Out, streams.ErrOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
