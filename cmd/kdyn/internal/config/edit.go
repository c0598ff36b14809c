package config

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/kubeconfig"
)

// edit runs change on the kubeconfig files and saves them.
func edit(f *cli.Factory, change func(*kubeconfig.Editor) error) error {
	e, err := kubeconfig.NewEditor(f.LoadingRules())
	if err != nil {
		return err
	}
	if err := change(e); err != nil {
		return err
	}
	return e.Save()
}

// optional is a string flag that records whether it was given, so that
// an empty value can clear a field.
type optional struct {
	set   bool
	value string
}

func (o *optional) String() string     { return o.value }
func (o *optional) Set(v string) error { o.value, o.set = v, true; return nil }
func (o *optional) Type() string       { return "string" }

var _ pflag.Value = (*optional)(nil)

// apply sets key in body from o when it was given; "" removes it.
func (o *optional) apply(body map[string]any, key string) {
	switch {
	case !o.set:
	case o.value == "":
		delete(body, key)
	default:
		body[key] = o.value
	}
}

// fileField sets body's path field from path, or with embed its data
// field from the file's content (and removes the other).
func fileField(body map[string]any, path string, embed bool, pathKey, dataKey string) error {
	if !embed {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		body[pathKey] = abs
		delete(body, dataKey)
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("could not read %s data from %s: %w", pathKey, path, err)
	}
	body[dataKey] = base64.StdEncoding.EncodeToString(data)
	delete(body, pathKey)
	return nil
}

func newSetClusterCommand(f *cli.Factory) *cobra.Command {
	var server, tlsServerName, proxyURL optional
	var ca string
	var embed, insecure, compress bool
	cmd := &cobra.Command{
		Use:   "set-cluster NAME [--server=server] [--certificate-authority=path/to/certificate/authority] [--insecure-skip-tls-verify=true] [--tls-server-name=example.com]",
		Short: "Set a cluster entry in kubeconfig",
		Long: `Set a cluster entry in kubeconfig. Fields given are set on the existing
entry (in the file that defines it) or on a new one; the others are kept.`,
		Example: `  # Set only the server field on the e2e cluster entry
  kdyn config set-cluster e2e --server=https://1.2.3.4

  # Embed certificate authority data for the e2e cluster entry
  kdyn config set-cluster e2e --embed-certs --certificate-authority=~/.kube/e2e/kubernetes.ca.crt

  # Disable cert checking for the e2e cluster entry
  kdyn config set-cluster e2e --insecure-skip-tls-verify=true`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			fl := cmd.Flags()
			if embed && ca == "" {
				return cli.Usagef("you must specify a --certificate-authority to embed")
			}
			return edit(f, func(e *kubeconfig.Editor) error {
				body, _ := e.Entry(kubeconfig.ClustersList, name)
				server.apply(body, "server")
				tlsServerName.apply(body, "tls-server-name")
				proxyURL.apply(body, "proxy-url")
				if fl.Changed("insecure-skip-tls-verify") {
					if insecure {
						body["insecure-skip-tls-verify"] = true
						delete(body, "certificate-authority")
						delete(body, "certificate-authority-data")
					} else {
						delete(body, "insecure-skip-tls-verify")
					}
				}
				if fl.Changed("disable-compression") {
					body["disable-compression"] = compress
				}
				if ca != "" {
					if err := fileField(body, ca, embed, "certificate-authority", "certificate-authority-data"); err != nil {
						return err
					}
					delete(body, "insecure-skip-tls-verify")
				}
				fmt.Fprintf(f.Streams.Out, "Cluster %q set.\n", name)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.Var(&server, "server", "The server of the cluster entry.")
	fl.Var(&tlsServerName, "tls-server-name", "The server name checked in its certificate.")
	fl.Var(&proxyURL, "proxy-url", "A proxy for the cluster's requests.")
	fl.StringVar(&ca, "certificate-authority", "", "Path to the certificate authority file of the cluster entry.")
	fl.BoolVar(&embed, "embed-certs", false, "Embed the certificate authority in the kubeconfig instead of its path.")
	fl.BoolVar(&insecure, "insecure-skip-tls-verify", false, "Do not check the server's certificate.")
	fl.BoolVar(&compress, "disable-compression", false, "Ask for uncompressed responses from this cluster.")
	// The root command's --server and --insecure-skip-tls-verify are the
	// global ones; these are the entry's, as in kubectl.
	return cmd
}

func newSetCredentialsCommand(f *cli.Factory) *cobra.Command {
	var token, username, password optional
	var cert, key, execCommand, execAPIVersion, execMode string
	var execArgs, execEnv []string
	var embed bool
	cmd := &cobra.Command{
		Use:   "set-credentials NAME [--client-certificate=path/to/certfile] [--client-key=path/to/keyfile] [--token=bearer_token] [--username=basic_user] [--password=basic_password]",
		Short: "Set a user entry in kubeconfig",
		Long: `Set a user entry in kubeconfig. Fields given are set on the existing entry
(in the file that defines it) or on a new one; the others are kept. A bearer
token and basic auth exclude each other.`,
		Example: `  # Set only the client-key field on the cluster-admin entry
  kdyn config set-credentials cluster-admin --client-key=~/.kube/admin.key

  # Set basic auth for the cluster-admin entry
  kdyn config set-credentials cluster-admin --username=admin --password=uXFGweU9l35qcif

  # Embed client certificate data in the cluster-admin entry
  kdyn config set-credentials cluster-admin --client-certificate=~/.kube/admin.crt --embed-certs=true

  # Use an exec credential plugin
  kdyn config set-credentials cluster-admin --exec-command=/path/to/the/executable --exec-api-version=client.authentication.k8s.io/v1 --exec-interactive-mode=Never`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if token.value != "" && (username.value != "" || password.value != "") {
				return cli.Usagef("you cannot specify more than one authentication method at the same time: --token, --username and --password")
			}
			if embed && cert == "" && key == "" {
				return cli.Usagef("you must specify a --client-certificate or --client-key to embed")
			}
			return edit(f, func(e *kubeconfig.Editor) error {
				body, _ := e.Entry(kubeconfig.UsersList, name)
				token.apply(body, "token")
				username.apply(body, "username")
				password.apply(body, "password")
				if cert != "" {
					if err := fileField(body, cert, embed, "client-certificate", "client-certificate-data"); err != nil {
						return err
					}
				}
				if key != "" {
					if err := fileField(body, key, embed, "client-key", "client-key-data"); err != nil {
						return err
					}
				}
				if execCommand != "" || execAPIVersion != "" || len(execArgs) > 0 || len(execEnv) > 0 || execMode != "" {
					ex, _ := body["exec"].(map[string]any)
					if ex == nil {
						ex = map[string]any{}
						body["exec"] = ex
					}
					if execCommand != "" {
						ex["command"] = execCommand
					}
					if execAPIVersion != "" {
						ex["apiVersion"] = execAPIVersion
					}
					if execMode != "" {
						ex["interactiveMode"] = execMode
					}
					if len(execArgs) > 0 {
						l := make([]any, len(execArgs))
						for i, a := range execArgs {
							l[i] = a
						}
						ex["args"] = l
					}
					if len(execEnv) > 0 {
						var env []any
						for _, kv := range execEnv {
							k, v, ok := cutEnv(kv)
							if !ok {
								return cli.Usagef("--exec-env %q: use NAME=VALUE", kv)
							}
							env = append(env, map[string]any{"name": k, "value": v})
						}
						ex["env"] = env
					}
				}
				fmt.Fprintf(f.Streams.Out, "User %q set.\n", name)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.Var(&token, "token", "The bearer token of the user entry.")
	fl.Var(&username, "username", "The basic auth user name.")
	fl.Var(&password, "password", "The basic auth password.")
	fl.StringVar(&cert, "client-certificate", "", "Path to the client certificate file.")
	fl.StringVar(&key, "client-key", "", "Path to the client key file.")
	fl.BoolVar(&embed, "embed-certs", false, "Embed the client certificate and key in the kubeconfig instead of their paths.")
	fl.StringVar(&execCommand, "exec-command", "", "The command of an exec credential plugin.")
	fl.StringVar(&execAPIVersion, "exec-api-version", "", "The ExecCredential API version of the plugin.")
	fl.StringArrayVar(&execArgs, "exec-arg", nil, "An argument of the plugin (repeatable).")
	fl.StringArrayVar(&execEnv, "exec-env", nil, "NAME=VALUE in the plugin's environment (repeatable).")
	fl.StringVar(&execMode, "exec-interactive-mode", "", "The plugin's interactiveMode: Never, IfAvailable or Always.")
	return cmd
}

func cutEnv(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], i > 0
		}
	}
	return "", "", false
}

func newSetContextCommand(f *cli.Factory) *cobra.Command {
	var cluster, user, namespace optional
	var current bool
	cmd := &cobra.Command{
		Use:   "set-context [NAME | --current] [--cluster=cluster_nickname] [--user=user_nickname] [--namespace=namespace]",
		Short: "Set a context entry in kubeconfig",
		Long: `Set a context entry in kubeconfig. Fields given are set on the existing
entry (in the file that defines it) or on a new one; the others are kept.
--current changes the current context.`,
		Example: `  # Set the user field on the gce context entry without touching other values
  kdyn config set-context gce --user=cluster-admin

  # Use another namespace in the current context
  kdyn config set-context --current --namespace=prod`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return edit(f, func(e *kubeconfig.Editor) error {
				var name string
				switch {
				case current && len(args) > 0:
					return cli.Usagef("you cannot specify both a context name and --current")
				case current:
					if name = e.CurrentContext(); name == "" {
						return fmt.Errorf("no current context is set")
					}
				case len(args) == 1:
					name = args[0]
				default:
					return cli.Usagef("you must specify a non-empty context name or --current")
				}
				body, created := e.Entry(kubeconfig.ContextsList, name)
				cluster.apply(body, "cluster")
				user.apply(body, "user")
				namespace.apply(body, "namespace")
				if created {
					fmt.Fprintf(f.Streams.Out, "Context %q created.\n", name)
				} else {
					fmt.Fprintf(f.Streams.Out, "Context %q modified.\n", name)
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.Var(&cluster, "cluster", "The cluster of the context entry.")
	fl.Var(&user, "user", "The user of the context entry.")
	fl.VarP(&namespace, "namespace", "n", "The namespace of the context entry.")
	fl.BoolVar(&current, "current", false, "Modify the current context.")
	return cmd
}

func newSetCommand(f *cli.Factory) *cobra.Command {
	var raw bool
	cmd := editCommand(f, &cobra.Command{
		Use:   "set PROPERTY_NAME PROPERTY_VALUE",
		Short: "Set an individual value in a kubeconfig file",
		Long: `Set an individual value in a kubeconfig file. PROPERTY_NAME is a dot-delimited
name: clusters.NAME.FIELD, users.NAME.FIELD, contexts.NAME.FIELD or
current-context. Certificate and key data take base64, or the bytes
themselves with --set-raw-bytes.`,
		Example: `  # Set the server field on the my-cluster cluster to https://1.2.3.4
  kdyn config set clusters.my-cluster.server https://1.2.3.4

  # Set the namespace of the my-context context
  kdyn config set contexts.my-context.namespace prod`,
		Args: cobra.ExactArgs(2),
	}, func(e *kubeconfig.Editor, args []string) (string, error) {
		return fmt.Sprintf("Property %q set.", args[0]), e.Set(args[0], args[1], raw)
	})
	cmd.Flags().BoolVar(&raw, "set-raw-bytes", false, "For certificate and key data, take the value as the bytes themselves rather than base64.")
	return cmd
}

// editCommand returns a command that changes the kubeconfig files with
// change, which returns the line to print.
func editCommand(f *cli.Factory, cmd *cobra.Command, change func(e *kubeconfig.Editor, args []string) (string, error)) *cobra.Command {
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		return edit(f, func(e *kubeconfig.Editor) error {
			msg, err := change(e, args)
			if err == nil {
				fmt.Fprintln(f.Streams.Out, msg)
			}
			return err
		})
	}
	return cmd
}

func newUnsetCommand(f *cli.Factory) *cobra.Command {
	return editCommand(f, &cobra.Command{
		Use:   "unset PROPERTY_NAME",
		Short: "Unset an individual value in a kubeconfig file",
		Example: `  # Unset the current-context
  kdyn config unset current-context

  # Unset the namespace of the foo context
  kdyn config unset contexts.foo.namespace`,
		Args: cobra.ExactArgs(1),
	}, func(e *kubeconfig.Editor, args []string) (string, error) {
		return fmt.Sprintf("Property %q unset.", args[0]), e.Unset(args[0])
	})
}

// newDeleteCommand returns delete-cluster, delete-context or delete-user.
func newDeleteCommand(f *cli.Factory, kind, what string) *cobra.Command {
	return editCommand(f, &cobra.Command{
		Use:     "delete-" + what + " NAME",
		Short:   "Delete the specified " + what + " from the kubeconfig",
		Example: "  kdyn config delete-" + what + " minikube",
		Args:    cobra.ExactArgs(1),
	}, func(e *kubeconfig.Editor, args []string) (string, error) {
		file, ok := e.Delete(kind, args[0])
		if !ok {
			return "", fmt.Errorf("cannot delete %s %s, not in %s", what, args[0], e.DefaultFile())
		}
		if kind == kubeconfig.ContextsList && e.CurrentContext() == args[0] {
			fmt.Fprintln(f.Streams.ErrOut, `warning: this removed your active context, use "kdyn config use-context" to select a different one`)
		}
		return fmt.Sprintf("deleted %s %s from %s", what, args[0], file), nil
	})
}

func newRenameContextCommand(f *cli.Factory) *cobra.Command {
	return editCommand(f, &cobra.Command{
		Use:     "rename-context CONTEXT_NAME NEW_NAME",
		Short:   "Rename a context from the kubeconfig file",
		Example: "  kdyn config rename-context old-name new-name",
		Args:    cobra.ExactArgs(2),
	}, func(e *kubeconfig.Editor, args []string) (string, error) {
		return fmt.Sprintf("Context %q renamed to %q.", args[0], args[1]), e.RenameContext(args[0], args[1])
	})
}

// newGetNamesCommand returns get-clusters or get-users.
func newGetNamesCommand(f *cli.Factory, kind, what string) *cobra.Command {
	return &cobra.Command{
		Use:     "get-" + what + "s",
		Short:   "Display " + what + "s defined in the kubeconfig",
		Example: "  kdyn config get-" + what + "s",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := kubeconfig.NewEditor(f.LoadingRules())
			if err != nil {
				return err
			}
			fmt.Fprintln(f.Streams.Out, "NAME")
			for _, n := range e.Names(kind) {
				fmt.Fprintln(f.Streams.Out, n)
			}
			return nil
		},
	}
}
