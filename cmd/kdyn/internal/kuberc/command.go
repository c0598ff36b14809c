package kuberc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// errDisabled is kubectl's error for the kuberc command under KUBERC=off.
var errDisabled = errors.New("KUBERC is disabled via KUBERC=off environment variable")

// NewCommand returns "kdyn kuberc": view and set, on the file kdyn reads
// its preferences from.
func NewCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kuberc SUBCOMMAND",
		Short: "Manage kuberc configuration files",
		Long: `Show and change kubectl's preferences file, kuberc, which kdyn reads too: flag
defaults per command, aliases, and which credential plugins may run.

The file is the one --kuberc names, else the one $KUBERC names, else
~/.kube/kuberc; KUBERC=off turns preferences off.`,
		Example: `  # Show the preferences
  kdyn kuberc view

  # Make -o wide the default of get
  kdyn kuberc set --section defaults --command get --option output=wide

  # An alias: "kdyn getn" lists nodes, wide
  kdyn kuberc set --section aliases --name getn --command get --prependarg nodes --option output=wide`,
	}
	cmd.AddCommand(newViewCommand(f), newSetCommand(f))
	return cli.GroupCommand(cmd)
}

func newViewCommand(f *cli.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Display the current kuberc configuration",
		Long: `Print the preferences file, as YAML (the default) or in another output format,
in its current version (kubectl.config.k8s.io/v1beta1; an older file is
shown converted).

When there is no file at the default place (~/.kube/kuberc), kuberc view
offers to write one with recommended defaults (server-side apply,
interactive delete): answer y on standard input.`,
		Example: `  # The preferences, as YAML
  kdyn kuberc view

  # As JSON
  kdyn kuberc view -o json

  # Another file
  kdyn kuberc view --kuberc /path/to/kuberc`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cli.OutputOverDefault(output, templateFlag(cmd), cmd.Flags().Changed("output"), "yaml")
			return runView(f, out)
		},
	}
	cli.AddOutputFlags(cmd.Flags(), &output, "Output format: yaml (default), json, name, jsonpath=..., go-template=..., gjson=...")
	return cmd
}

// templateFlag is --template's value.
func templateFlag(cmd *cobra.Command) string {
	if fl := cmd.Flags().Lookup("template"); fl != nil {
		return fl.Value.String()
	}
	return ""
}

func runView(f *cli.Factory, output string) error {
	spec, _, err := cli.WriteOutput(output)
	if err != nil {
		return err
	}
	path, explicit, err := Path(f.Flags.Kuberc, os.Getenv)
	if err != nil {
		return err
	}
	if path == "" {
		return errDisabled
	}
	file, err := readFile(path)
	switch {
	case err != nil && !os.IsNotExist(err):
		return fmt.Errorf("error reading kuberc file: %w", err)
	case err != nil && explicit:
		return fmt.Errorf("kuberc file not found at %s", path)
	case err != nil:
		return offerDefault(f, path)
	}
	if file.Aliases == nil {
		file.Aliases = []Alias{}
	}
	if file.Defaults == nil {
		file.Defaults = []CommandDefaults{}
	}
	raw, err := json.Marshal(file)
	if err != nil {
		return err
	}
	return cli.PrintObjectJSON(f.Streams.Out, spec, raw, true, true)
}

// offerDefault asks whether to write the default file at path, which does
// not exist, and writes it on "y". Other answers, and none, leave it.
func offerDefault(f *cli.Factory, path string) error {
	fmt.Fprintf(f.Streams.Out, "kuberc file not found at %s\n", path)
	fmt.Fprint(f.Streams.Out, "Would you like to generate a default kuberc file with recommended options? (y/N): ")
	var answer string
	if _, err := fmt.Fscanln(f.Streams.In, &answer); err != nil || !strings.EqualFold(answer, "y") {
		return nil
	}
	return save(f, defaultFile(), path)
}

// save writes file to path and says so.
func save(f *cli.Factory, file *v1beta1, path string) error {
	if err := writeFile(file, path); err != nil {
		return err
	}
	_, err := fmt.Fprintf(f.Streams.Out, "Updated %s\n", path)
	return err
}

func newSetCommand(f *cli.Factory) *cobra.Command {
	o := &setOptions{}
	cmd := &cobra.Command{
		Use:   "set --section (defaults|aliases) --command COMMAND",
		Short: "Set values in the kuberc configuration",
		Long: `Change the preferences file (creating it if needed), one section at a time.

--section defaults sets new default values of a command's flags: --command
names the command only ("get", "create role", "set env"), not resources, and
each --option FLAG=VALUE is one flag's default.

--section aliases adds a command name of your own (--name) that runs
--command with its own --option defaults, and with --prependarg arguments
right after it and --appendarg arguments at the end of the command line.

--section credentialplugin sets which exec credential plugins may run:
--policy AllowAll, DenyAll, or Allowlist with --allowlist-entry
command=NAME_OR_PATH for each plugin allowed.

Existing defaults for a command, or an existing alias, are replaced only
with --overwrite; what the flags leave out (options, arguments) is kept.`,
		Example: `  # -o wide by default for get
  kdyn kuberc set --section defaults --command get --option output=wide

  # The same for a subcommand
  kdyn kuberc set --section defaults --command "set env" --option output=yaml

  # "kdyn getn": get nodes, wide
  kdyn kuberc set --section aliases --name getn --command get --prependarg nodes --option output=wide

  # "kdyn runx": run with an image and arguments for the container
  kdyn kuberc set --section aliases --name runx --command run --option image=nginx --appendarg "--" --appendarg custom-arg1

  # Replace the defaults of get
  kdyn kuberc set --section defaults --command get --option output=json --overwrite

  # Let only one credential plugin run
  kdyn kuberc set --section credentialplugin --policy Allowlist --allowlist-entry command=cloud-credential-helper`,
		RunE: func(*cobra.Command, []string) error { return runSet(f, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.section, "section", "", "The section to change: defaults, aliases or credentialplugin.")
	_ = cmd.MarkFlagRequired("section")
	fl.StringVar(&o.command, "command", "", `The command whose defaults to set, or the alias's command ("get", "create role", "set env").`)
	fl.StringVar(&o.aliasName, "name", "", "The alias's name (--section aliases).")
	fl.StringVar(&o.policy, "policy", "", "The credential plugin policy: AllowAll, DenyAll or Allowlist (--section credentialplugin).")
	fl.StringArrayVar(&o.options, "option", nil, "A flag's default, FLAG=VALUE (repeatable).")
	fl.StringArrayVar(&o.prependArgs, "prependarg", nil, "An argument the alias puts right after its name (repeatable).")
	fl.StringArrayVar(&o.appendArgs, "appendarg", nil, "An argument the alias puts at the end of the command line (repeatable).")
	fl.StringArrayVar(&o.allowlist, "allowlist-entry", nil, "A credential plugin the Allowlist policy lets run, command=NAME_OR_PATH (repeatable; several apart by commas).")
	fl.BoolVar(&o.overwrite, "overwrite", false, "Replace a command's defaults or an alias that the file already has.")
	return cmd
}

// runSet changes the file as o asks. Several mistakes in
// --allowlist-entry are printed one a line, without "error: ", as
// kubectl prints an aggregate of errors.
func runSet(f *cli.Factory, o *setOptions) error {
	path, _, err := Path(f.Flags.Kuberc, os.Getenv)
	if err != nil {
		return err
	}
	if path == "" {
		return errDisabled
	}
	if err := o.validate(); err != nil {
		return err
	}
	file, err := readFile(path)
	switch {
	case os.IsNotExist(err):
		file = newFile()
	case err != nil:
		return fmt.Errorf("error reading kuberc file: %w", err)
	}
	if err := o.apply(file); err != nil {
		var lines entryErrors
		if errors.As(err, &lines) && len(lines) > 1 {
			for _, l := range lines {
				fmt.Fprintln(f.Streams.ErrOut, l)
			}
			return &cli.ExitError{Code: cli.FailureCode(f, &cli.UsageError{Msg: err.Error()}), Silent: true, Err: err}
		}
		return err
	}
	return save(f, file, path)
}
