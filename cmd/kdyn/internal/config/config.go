package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/printers"
	"github.com/kdyn/kdyn/kubeconfig"
)

// NewCommand returns "kdyn config" and its subcommands.
func NewCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config SUBCOMMAND",
		Short: "Modify kubeconfig files",
		Long: `Show and modify kubeconfig files, as kubectl config does. The files are found
as kubectl finds them: --kubeconfig, else the KUBECONFIG list (merged, first
wins), else ~/.kube/config. A change to an existing entry is written to the
file that defines it; a new entry goes to --kubeconfig, else the only file,
else the first listed file that exists, else the last one.`,
	}
	cmd.AddCommand(newConfigViewCommand(f), newConfigGetContextsCommand(f), newConfigCurrentContextCommand(f), newConfigUseContextCommand(f),
		newSetClusterCommand(f), newSetCredentialsCommand(f), newSetContextCommand(f), newSetCommand(f), newUnsetCommand(f),
		newDeleteCommand(f, kubeconfig.ClustersList, "cluster"), newDeleteCommand(f, kubeconfig.ContextsList, "context"), newDeleteCommand(f, kubeconfig.UsersList, "user"),
		newRenameContextCommand(f), newGetNamesCommand(f, kubeconfig.ClustersList, "cluster"), newGetNamesCommand(f, kubeconfig.UsersList, "user"))
	return cli.GroupCommand(cmd)
}

func newConfigViewCommand(f *cli.Factory) *cobra.Command {
	var raw, minify bool
	var output, template string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the merged kubeconfig, with secrets redacted",
		Example: `  kdyn config view
  kdyn config view --minify --raw
  kdyn config view -o jsonpath='{.users[?(@.name == "e2e")].user.password}'
  kdyn config view --template='{{ .kind }}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			output = cli.OutputOverDefault(output, template, cmd.Flags().Changed("output"), "yaml")
			cfg, err := kubeconfig.Load(f.LoadingRules())
			if err != nil {
				return err
			}
			if f.Flags.Context != "" {
				cfg.CurrentContext = f.Flags.Context
			}
			b, err := cfg.View(kubeconfig.ViewOptions{Raw: raw, Minify: minify})
			if err != nil {
				return err
			}
			var v any
			if err := yaml.Unmarshal(b, &v); err != nil {
				return err
			}
			switch {
			case output == "" || output == "yaml":
				_, err = f.Streams.Out.Write(b)
			case output == "json":
				jb, _ := json.MarshalIndent(v, "", "    ")
				_, err = fmt.Fprintln(f.Streams.Out, string(jb))
			case strings.HasPrefix(output, "go-template=") || strings.HasPrefix(output, "go-template-file=") ||
				strings.HasPrefix(output, "template=") || strings.HasPrefix(output, "templatefile="):
				spec, perr := cli.ParseOutput(output)
				if perr != nil {
					return perr
				}
				jb, _ := json.Marshal(v)
				err = cli.PrintObjectJSON(f.Streams.Out, spec, jb, true, true)
			case strings.HasPrefix(output, "jsonpath="):
				j, perr := printers.ParseJSONPath("config", strings.TrimPrefix(output, "jsonpath="))
				if perr != nil {
					return perr
				}
				err = j.Execute(f.Streams.Out, v)
			default:
				return cli.Usagef("--output must be yaml, json or jsonpath=TEMPLATE, not %q", output)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "Show certificate data, tokens and passwords.")
	cmd.Flags().BoolVar(&minify, "minify", false, "Show only the current context and what it uses.")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "Output format: yaml, json, jsonpath=TEMPLATE or go-template=TEMPLATE.")
	cmd.Flags().StringVar(&template, "template", "", "Template string or path to template file to use when -o=go-template, -o=go-template-file or -o=jsonpath; without -o, -o go-template.")
	return cmd
}

func newConfigGetContextsCommand(f *cli.Factory) *cobra.Command {
	var noHeaders bool
	var output string
	cmd := &cobra.Command{
		Use:     "get-contexts [NAME...]",
		Short:   "List the kubeconfig contexts",
		Example: `  kdyn config get-contexts`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := kubeconfig.Load(f.LoadingRules())
			if err != nil {
				return err
			}
			names := args
			if len(names) == 0 {
				for n := range cfg.Contexts {
					names = append(names, n)
				}
				sort.Strings(names)
			}
			current := cfg.CurrentContext
			if f.Flags.Context != "" {
				current = f.Flags.Context
			}
			if output == "name" {
				for _, n := range names {
					if _, ok := cfg.Contexts[n]; !ok {
						return fmt.Errorf("context %q not found", n)
					}
					fmt.Fprintln(f.Streams.Out, n)
				}
				return nil
			} else if output != "" {
				return cli.Usagef("--output must be name, not %q", output)
			}
			tw := tabwriter.NewWriter(f.Streams.Out, 6, 4, 3, ' ', 0)
			if !noHeaders {
				fmt.Fprintln(tw, "CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE")
			}
			for _, n := range names {
				c, ok := cfg.Contexts[n]
				if !ok {
					tw.Flush()
					return fmt.Errorf("context %q not found", n)
				}
				mark := ""
				if n == current {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, n, c.Cluster, c.AuthInfo, c.Namespace)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "Do not print the header line.")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: name.")
	return cmd
}

func newConfigCurrentContextCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the current context",
		Example: `  kdyn config current-context`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := kubeconfig.Load(f.LoadingRules())
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return fmt.Errorf("current-context is not set")
			}
			fmt.Fprintln(f.Streams.Out, cfg.CurrentContext)
			return nil
		},
	}
}

// newConfigUseContextCommand returns "config use-context" (alias "use"):
// set current-context in the kubeconfig file, refusing, in kubectl's
// words, a context the kubeconfig does not define.
func newConfigUseContextCommand(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "use-context NAME",
		Aliases: []string{"use"},
		Short:   "Make NAME the current context",
		Example: `  kdyn config use-context prod`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "" {
				return errors.New("empty context names are not allowed")
			}
			if _, err := kubeconfig.UseContext(f.LoadingRules(), args[0]); err != nil {
				var nf *kubeconfig.NotFoundError
				if errors.As(err, &nf) && nf.Kind == "context" {
					return fmt.Errorf("no context exists with the name: %q", args[0])
				}
				return err
			}
			fmt.Fprintf(f.Streams.Out, "Switched to context %q.\n", args[0])
			return nil
		},
	}
}
