// Package cli holds the kdyn commands. cmd/kdyn/main.go only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Main runs kdyn with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv("GOGC") == "" {
		// A short-lived command that streams large lists: collect less
		// often (memory stays small; see the CLI benchmarks).
		debug.SetGCPercent(400)
	}
	streams := IOStreams{In: stdin, Out: stdout, ErrOut: stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root, flags := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var silent *exitError
	if errors.As(err, &silent) && silent.silent {
		return silent.code
	}
	var usage *usageError
	if !errors.As(err, &usage) && strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra's own check of the command name, before any flag is parsed.
		err = &usageError{msg: err.Error()}
	}
	printError(stderr, err)
	return exitCode(err, flags.exitCodes || exitCodesAsked(args))
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

// NewRootCommand returns the kdyn command tree and its global flags.
func NewRootCommand(streams IOStreams) (*cobra.Command, *globalFlags) {
	flags := &globalFlags{}
	f := newFactory(flags, streams)
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
  kdyn apply -f ./manifests -R`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			flags.insecureSet = cmd.Flags().Changed("insecure-skip-tls-verify")
			return nil
		},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	pf := root.PersistentFlags()
	pf.StringVar(&flags.kubeconfig, "kubeconfig", "", "Path to the kubeconfig file to use (only that file).")
	pf.StringVar(&flags.context, "context", "", "The kubeconfig context to use.")
	pf.StringVar(&flags.cluster, "cluster", "", "The kubeconfig cluster to use.")
	pf.StringVar(&flags.user, "user", "", "The kubeconfig user to use.")
	pf.StringVarP(&flags.namespace, "namespace", "n", "", "The namespace scope for this request.")
	pf.StringVarP(&flags.server, "server", "s", "", "The address and port of the Kubernetes API server.")
	pf.StringVar(&flags.token, "token", "", "Bearer token for authentication to the API server.")
	pf.StringVar(&flags.certAuthority, "certificate-authority", "", "Path to a cert file for the certificate authority.")
	pf.StringVar(&flags.clientCert, "client-certificate", "", "Path to a client certificate file for TLS.")
	pf.StringVar(&flags.clientKey, "client-key", "", "Path to a client key file for TLS.")
	pf.BoolVar(&flags.insecure, "insecure-skip-tls-verify", false, "Do not check the server's certificate (insecure).")
	pf.StringVar(&flags.tlsServerName, "tls-server-name", "", "Server name to use for server certificate validation.")
	pf.StringVar(&flags.as, "as", "", "Username to impersonate for the operation.")
	pf.StringArrayVar(&flags.asGroups, "as-group", nil, "Group to impersonate for the operation (repeatable).")
	pf.StringVar(&flags.asUID, "as-uid", "", "UID to impersonate for the operation.")
	pf.StringVar(&flags.requestTimeout, "request-timeout", "0", "How long to wait for a single request (e.g. 30s, 2m; 0 = no limit).")
	pf.StringVar(&flags.cacheDir, "cache-dir", "", "Cache directory (default ~/.kube/cache/kdyn).")
	pf.IntVarP(&flags.verbosity, "v", "v", 0, "Log level: 6 URLs and status, 8 bodies, 9 a curl command line (secrets redacted).")
	pf.Float32Var(&flags.qps, "qps", 0, "Client-side request rate limit (default 50; negative disables).")
	pf.IntVar(&flags.burst, "burst", 0, "Client-side request burst (default 100).")
	pf.BoolVar(&flags.refreshDiscovery, "refresh-discovery", false, "Ask the server again what it serves, ignoring the discovery cache.")
	pf.BoolVar(&flags.disableCompression, "disable-compression", false, "Do not ask the server to compress responses (faster on fast networks).")
	pf.BoolVar(&flags.exitCodes, "exit-codes", false, "Exit with a code that names the failure (see 'kdyn help exit-codes').")

	root.AddCommand(
		newVersionCommand(f),
		newConfigCommand(f),
	)
	addCommands(root, f)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	markArgErrors(root)
	return root, flags
}

// markArgErrors makes the argument checks of c and its subcommands return
// usage errors (exit code 2 with --exit-codes), as flag errors are.
func markArgErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{msg: err.Error()}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markArgErrors(sub)
	}
}

// exitError carries an exit code; silent ones print nothing more (the
// command already reported).
type exitError struct {
	code   int
	silent bool
	err    error
}

func (e *exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit code %d", e.code)
}

func (e *exitError) Unwrap() error { return e.err }
