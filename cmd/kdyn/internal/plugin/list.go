package plugin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewCommand returns "kdyn plugin", with its subcommand list.
func NewCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin SUBCOMMAND",
		Short: "Provides utilities for interacting with plugins",
		Long: `Work with plugins: executables named kubectl-NAME on PATH, which kdyn runs as
kubectl does ("kdyn NAME ARGS...") when NAME is no command of its own.
Plugins written for kubectl run unchanged; $KUBECTL_PATH tells them where
kdyn is.`,
		Example: `  # The plugins on PATH, by path
  kdyn plugin list

  # By file name only
  kdyn plugin list --name-only`,
	}
	cmd.AddCommand(newListCommand(f))
	return cli.GroupCommand(cmd)
}

func newListCommand(f *cli.Factory) *cobra.Command {
	var nameOnly bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List all visible plugin executables on a user's PATH",
		Long: `Print every plugin on PATH: each file whose name starts with "kubectl-", in
the order of PATH's directories, then by name (--name-only prints the
names without their directories).

A plugin that is not executable, that an earlier one of the same name on
PATH hides, or whose name is a command of kdyn (which always wins) is
listed with a warning on standard error, and the command then fails, as
it does when there is no plugin at all.`,
		Example: `  # The plugins on PATH, by path
  kdyn plugin list

  # By file name only
  kdyn plugin list --name-only`,
		// As kubectl's, list takes no arguments and ignores any.
		RunE: func(cmd *cobra.Command, _ []string) error {
			return list(cmd.Root(), f.Streams, filepath.SplitList(os.Getenv("PATH")), nameOnly)
		},
	}
	cmd.Flags().BoolVar(&nameOnly, "name-only", false, "If true, display only the binary name of each plugin, rather than its full path")
	return cmd
}

// list prints the plugins in dirs (PATH's directories) on streams.Out, and
// its warnings and errors on streams.ErrOut in kubectl's words; warnings,
// errors, or no plugin at all make it fail (exit code 1).
func list(root *cobra.Command, streams cli.IOStreams, dirs []string, nameOnly bool) error {
	plugins, failures := find(dirs, streams.ErrOut)
	if len(plugins) > 0 {
		fmt.Fprint(streams.Out, "The following compatible plugins are available:\n\n")
	} else {
		failures = append(failures, "error: unable to find any kubectl plugins in your PATH")
	}
	seen := map[string]string{}
	warnings := 0
	for _, path := range plugins {
		if nameOnly {
			fmt.Fprintln(streams.Out, filepath.Base(path))
		} else {
			fmt.Fprintln(streams.Out, path)
		}
		for _, w := range check(root, path, seen) {
			fmt.Fprintf(streams.ErrOut, "  - %s\n", w)
			warnings++
		}
	}
	switch {
	case warnings == 1:
		failures = append(failures, "error: one plugin warning was found")
	case warnings > 1:
		failures = append(failures, fmt.Sprintf("error: %d plugin warnings were found", warnings))
	}
	if len(failures) == 0 {
		return nil
	}
	fmt.Fprint(streams.ErrOut, strings.Join(failures, "\n")+"\n")
	return &cli.ExitError{Code: cli.ExitGeneric, Silent: true}
}

// find returns the paths of the files named Prefix+something in dirs (each
// directory once, in order; the files by name), and the errors (as printed)
// reading a directory other than a missing or unreadable one, which it
// notes on warn and skips.
func find(dirs []string, warn io.Writer) (plugins, failures []string) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if strings.TrimSpace(dir) == "" {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				fmt.Fprintf(warn, "Unable to read directory %q from your PATH: %v. Skipping...\n", dir, err)
			} else {
				failures = append(failures, fmt.Sprintf("error: unable to read directory %q in your PATH: %v", dir, err))
			}
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasPrefix(e.Name(), Prefix) {
				plugins = append(plugins, filepath.Join(dir, e.Name()))
			}
		}
	}
	return plugins, failures
}

// check returns the warnings about the plugin at path: not executable,
// hidden by one of the same name seen before (seen maps file names to the
// first path), or named as a command of root.
func check(root *cobra.Command, path string, seen map[string]string) []string {
	var warnings []string
	name := filepath.Base(path)
	switch exe, err := executable(path); {
	case err != nil:
		warnings = append(warnings, fmt.Sprintf("error: unable to identify %s as an executable file: %v", path, err))
	case !exe:
		warnings = append(warnings, fmt.Sprintf("warning: %s identified as a kubectl plugin, but it is not executable", path))
	}
	if first, ok := seen[name]; ok {
		warnings = append(warnings, fmt.Sprintf("warning: %s is overshadowed by a similarly named plugin: %s", path, first))
	} else {
		seen[name] = path
	}
	// The name's words after the prefix are the command line a plugin
	// would take the place of.
	words := strings.Split(name, "-")
	if len(words) > 1 {
		words = words[1:]
	}
	if cmd, _, err := root.Find(words); err == nil {
		warnings = append(warnings, fmt.Sprintf("warning: %s overwrites existing command: %q", name, cmd.CommandPath()))
	}
	return warnings
}

// executable reports whether path is a file that can run: on Windows by
// its extension, elsewhere by any execute permission bit.
func executable(path string) (bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if runtime.GOOS == "windows" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".bat", ".cmd", ".com", ".exe", ".ps1":
			return true, nil
		}
		return false, nil
	}
	return !info.Mode().IsDir() && info.Mode()&0o111 != 0, nil
}
