package root

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/config"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/kuberc"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/serverinfo"
)

// Main runs kdyn with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		// A short-lived command that streams large lists: collect less
		// often (memory stays small; see the CLI benchmarks).
		debug.SetGCPercent(400)
	}
	streams := cli.IOStreams{In: stdin, Out: stdout, ErrOut: stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// The first signal cancels ctx (commands clean up: run --rm deletes
	// its pod); a second one ends kdyn at once, as signals do by default.
	go func() {
		<-ctx.Done()
		stop()
	}()
	root, flags := NewRootCommand(streams)
	if InvokedAsKubectl() {
		root.Use = "kubectl"
	}
	args, err := applyKuberc(root, flags, args, stderr)
	if err != nil {
		cli.PrintError(stderr, err)
		return cli.ExitCode(err, exitCodesAsked(args))
	}
	if code, ran := runPlugin(root, args, streams); ran {
		return code
	}
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var silent *cli.ExitError
	if errors.As(err, &silent) && silent.Silent {
		return silent.Code
	}
	var usage *cli.UsageError
	if !errors.As(err, &usage) && strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra's own check of the command name, before any flag is parsed.
		err = &cli.UsageError{Msg: err.Error()}
	}
	cli.PrintError(stderr, err)
	return cli.ExitCode(err, flags.ExitCodes || exitCodesAsked(args))
}

// applyKuberc loads kubectl's preferences file and applies it to the
// command line: aliases, flag defaults, and the credential plugin policy.
func applyKuberc(root *cobra.Command, flags *cli.GlobalFlags, args []string, warn io.Writer) ([]string, error) {
	if len(args) == 0 || !kuberc.Enabled(os.Getenv) {
		return args, nil
	}
	explicit, err := kuberc.FlagValue(args)
	if err != nil {
		return args, &cli.UsageError{Msg: err.Error()}
	}
	log := logr.Discard()
	if v := verbosityArg(args); v >= 5 {
		log = cli.NewLogger(warn, v)
	}
	pref, err := kuberc.Load(explicit, os.Getenv, warn, log)
	if err != nil || pref == nil {
		return args, err
	}
	flags.PluginPolicy = pref.Policy()
	return pref.Apply(root, args, warn)
}

// verbosityArg returns the -v (--v) level args give, which is read before
// the command line is parsed (0 when there is none, or it is not a
// number).
func verbosityArg(args []string) int {
	v := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			continue
		case a == "-v" || a == "--v":
			if i+1 < len(args) {
				i++
				value, hasValue = args[i], true
			}
		case name == "v" && hasValue:
		case strings.HasPrefix(a, "-v") && !strings.HasPrefix(a, "--"):
			value, hasValue = a[2:], true // -v5
		default:
			continue
		}
		if n, err := strconv.Atoi(value); hasValue && err == nil {
			v = n
		}
	}
	return v
}

// exitCodesAsked reports whether args turn on --exit-codes, for errors
// found before cobra parsed that flag (an unknown command, or a bad flag
// placed before it).
func exitCodesAsked(args []string) bool {
	asked := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--exit-codes"); ok {
			switch {
			case v == "":
				asked = true
			case strings.HasPrefix(v, "="):
				b, err := strconv.ParseBool(v[1:])
				asked = err == nil && b
			}
		}
	}
	return asked
}

// InvokedAsKubectl reports a kdyn run through a link (or a copy) named
// kubectl, the drop-in way: cobra's own messages, usage lines and help then
// name the command kubectl, as scripts written for kubectl expect (for
// example "unknown command "x" for "kubectl"").
func InvokedAsKubectl() bool {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	return name == "kubectl"
}

// NewRootCommand returns the kdyn command tree and its global flags.
func NewRootCommand(streams cli.IOStreams) (*cobra.Command, *cli.GlobalFlags) {
	flags := &cli.GlobalFlags{}
	f := cli.NewFactory(flags, streams)
	root := &cobra.Command{
		Use:   "kdyn",
		Short: "kdyn works with any Kubernetes resource, the way kubectl does, and more",
		Long: `kdyn works with any Kubernetes resource — built-in or custom — with kubectl's
conventions: the same kubeconfig, flags, resource names and output formats.
It finds CRDs installed a moment ago, keeps watching when the server closes a
stream, and adds what kubectl lacks: jsonl and gjson output, ownership trees,
every-resource listing, neat manifests and a built-in diff.`,
		Example: `  # List pods in the current namespace, as the server prints them
  kdyn get pods

  # Every object of a CRD, one JSON object per line, for scripts
  kdyn get widgets.example.com -A -o jsonl

  # Apply a directory of manifests with server-side apply
  kdyn apply -f ./manifests -R --server-side`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			flags.InsecureSet = cmd.Flags().Changed("insecure-skip-tls-verify")
			return nil
		},
		// --warnings-as-errors: a command that succeeded with the server's
		// warnings fails, in kubectl's words.
		PersistentPostRunE: func(*cobra.Command, []string) error {
			switch n := f.Warnings(); {
			case !flags.WarningsAsErrors || n == 0:
				return nil
			case n == 1:
				return errors.New("1 warning received")
			default:
				return fmt.Errorf("%d warnings received", n)
			}
		},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	flags.AddFlags(root.PersistentFlags())

	root.AddCommand(
		serverinfo.NewVersionCommand(f),
		config.NewCommand(f),
	)
	addCommands(root, f)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cli.UsageError{Msg: err.Error()} })
	markArgErrors(root)
	flagWarningsTo(root, streams.ErrOut)
	translateHelp(root)
	// kubectl's last line of a parent command's help, which scripts read
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		`Use "{{.CommandPath}} [command] --help" for more information about a command.`,
		`Use "{{.CommandPath}} <command> --help" for more information about a given command.`, 1))
	return root, flags
}

// markArgErrors makes the argument checks of c and its subcommands return
// usage errors (exit code 2 with --exit-codes), as flag errors are.
// flagWarningsTo sends the flag parser's warnings (a deprecated flag's)
// to w, standard error, as kubectl's go: cobra would print them on the
// command's output, which is standard output here.
func flagWarningsTo(c *cobra.Command, w io.Writer) {
	c.Flags().SetOutput(w)
	for _, sub := range c.Commands() {
		flagWarningsTo(sub, w)
	}
}

func markArgErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &cli.UsageError{Msg: err.Error()}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markArgErrors(sub)
	}
}
