package plugin

import (
	"errors"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// Prefix starts the file name of every plugin: kubectl's, so that its
// plugins work unchanged.
const Prefix = "kubectl-"

// Match is the plugin a command line runs.
type Match struct {
	Path string   // the executable, as found on PATH
	Args []string // the arguments after the words that named it
}

// Lookup returns the path of the executable Prefix+name on PATH. An
// executable found through a relative PATH entry counts, as it does for
// kubectl.
func Lookup(name string) (string, bool) {
	path, err := exec.LookPath(Prefix + name)
	if (err != nil && !errors.Is(err, exec.ErrDot)) || path == "" {
		return "", false
	}
	return path, true
}

// Resolve returns the plugin that args (kdyn's command line without the
// program name, after kuberc's aliases) run, or nil when kdyn runs args
// itself: when they name a command of root, or name no plugin. Flags
// placed before a plugin's name are a *cli.UsageError.
func Resolve(root *cobra.Command, args []string) (*Match, error) {
	if len(args) == 0 {
		return nil, nil
	}
	found, rest, err := root.Find(args)
	if err != nil {
		switch firstWord(args) {
		case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return nil, nil
		}
		if strings.HasPrefix(args[0], "-") {
			if _, n := longest(leadingWords(wordsAfterFlags(root, args)), 1); n > 0 {
				return nil, &cli.UsageError{Msg: "flags cannot be placed before plugin name: " + args[0]}
			}
			return nil, nil
		}
		return match(args, 1), nil
	}
	// A command that exists may still lack the subcommand asked for:
	// "create foo" runs kubectl-create-foo when create has no foo.
	if found.Name() != "create" || len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return nil, nil
	}
	for _, sub := range found.Commands() {
		if sub.Name() == rest[0] {
			return nil, nil
		}
	}
	return match(args, len(args)-len(rest)+1), nil
}

// match returns the plugin that the longest run of args' leading words
// names, trying no fewer than least words (but always all of them).
func match(args []string, least int) *Match {
	path, n := longest(leadingWords(args), least)
	if n == 0 {
		return nil
	}
	return &Match{Path: path, Args: args[n:]}
}

// longest looks words up as a plugin's name, all of them first, then
// fewer, down to least words, and returns the path found and how many words
// it took (0 when none was found).
func longest(words []string, least int) (string, int) {
	names := make([]string, len(words))
	for i, w := range words {
		names[i] = strings.ReplaceAll(w, "-", "_")
	}
	for n := len(names); n > 0; n-- {
		if path, ok := Lookup(strings.Join(names[:n], "-")); ok {
			return path, n
		}
		if n-1 < least {
			break
		}
	}
	return "", 0
}

// leadingWords returns the arguments before the first one that starts
// with a dash.
func leadingWords(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			return args[:i]
		}
	}
	return args
}

// firstWord returns the first argument that does not start with a dash.
func firstWord(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// wordsAfterFlags returns args without the flags they start with and
// those flags' values, which it tells as cobra does when it looks for the
// command: a value follows a flag given without "=" unless the flag (one
// of root's) takes none; "--" ends the command line's words.
func wordsAfterFlags(root *cobra.Command, args []string) []string {
	lookup := func(name string, short bool) *pflag.Flag {
		for _, fs := range []*pflag.FlagSet{root.PersistentFlags(), root.Flags()} {
			if short {
				if f := fs.ShorthandLookup(name); f != nil {
					return f
				}
			} else if f := fs.Lookup(name); f != nil {
				return f
			}
		}
		return nil
	}
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		i++
		var f *pflag.Flag
		switch {
		case a == "--":
			return nil
		case strings.Contains(a, "="):
			continue
		case strings.HasPrefix(a, "--"):
			f = lookup(a[2:], false)
		case len(a) == 2:
			f = lookup(a[1:], true)
		default:
			continue // -n5, or shorthands run together
		}
		if f == nil || f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	if i > len(args) {
		return nil
	}
	return args[i:]
}

// Environ returns env for a plugin: KUBECTL_PATH set to self (the
// executable the plugin can run kdyn as), whatever env had.
func Environ(env []string, self string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "KUBECTL_PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "KUBECTL_PATH="+self)
}

// Run runs the plugin with env. On Unix the plugin replaces kdyn's
// process, with kdyn's standard streams, so Run returns only when it could
// not start it; elsewhere it runs as a child on streams and Run returns
// its exit code.
func (m *Match) Run(env []string, streams cli.IOStreams) (int, error) {
	return execute(m.Path, m.Args, env, streams)
}
