package root

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/plugin"
)

// runPlugin runs the kubectl plugin that args name when they name no
// command of root (see package plugin), and reports whether it did; the
// int is then kdyn's exit code. On Unix a plugin that starts replaces
// kdyn's process: runPlugin returns only when it could not start one, or
// when args place flags before a plugin's name, with kubectl's
// "Error: ..." on standard error.
func runPlugin(root *cobra.Command, args []string, streams cli.IOStreams) (int, bool) {
	p, err := plugin.Resolve(root, args)
	if err == nil && p == nil {
		return 0, false
	}
	code := 0
	if err == nil {
		var self string
		if self, err = selfPath(); err == nil {
			code, err = p.Run(plugin.Environ(os.Environ(), self), streams)
		}
	}
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
		return cli.ExitCode(err, exitCodesAsked(args)), true
	}
	return code, true
}

// selfPath is the executable plugins are told to run kdyn as
// ($KUBECTL_PATH): kdyn's, or, when kdyn runs as kubectl, the link (or
// copy) named kubectl it was run through, so that a plugin calling it
// back gets kubectl's words too — but only when that path is kdyn itself,
// never another file that happens to be called kubectl.
func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil || !InvokedAsKubectl() {
		return self, err
	}
	name := os.Args[0]
	if !strings.ContainsRune(name, filepath.Separator) && !strings.ContainsRune(name, '/') {
		found, err := exec.LookPath(name)
		if err != nil {
			return self, nil
		}
		name = found
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return self, nil
	}
	if a, err := os.Stat(abs); err == nil {
		if b, err := os.Stat(self); err == nil && os.SameFile(a, b) {
			return abs, nil
		}
	}
	return self, nil
}
