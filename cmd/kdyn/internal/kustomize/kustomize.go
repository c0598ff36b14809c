package kustomize

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewCommand returns "kdyn kustomize".
func NewCommand(f *cli.Factory) *cobra.Command {
	var o cli.KustomizeOptions
	var outputPath string
	cmd := &cobra.Command{
		Use:   "kustomize [DIR]",
		Short: "Build a kustomization target from a directory or URL",
		Long: `Build a set of KRM resources using a 'kustomization.yaml' file.
The DIR argument must be a path to a directory containing
'kustomization.yaml', or a git repository URL with a path suffix
specifying same with respect to the repository root.
If DIR is omitted, '.' is assumed.

The output is what "kubectl kustomize DIR" prints, byte for byte: kdyn
builds with the same kustomize library and options. Nothing is sent to a
server; "kdyn apply -k DIR" builds and applies in one step.`,
		Example: `  # Build the current working directory
  kdyn kustomize

  # Build some shared configuration directory
  kdyn kustomize /home/config/production

  # Build from github
  kdyn kustomize https://github.com/kubernetes-sigs/kustomize.git/examples/helloWorld?ref=v1.0.6

  # Build, look, then apply the same objects
  kdyn kustomize overlays/prod | less
  kdyn apply -k overlays/prod`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if st, err := os.Stat(outputPath); outputPath != "" && err == nil && st.IsDir() {
				return cli.Usagef("-o %s is a directory: kdyn writes the build to one file (kubectl would write a file per object)", outputPath)
			}
			yml, err := cli.Kustomize(dir, o)
			if err != nil {
				return err
			}
			if outputPath != "" {
				return os.WriteFile(outputPath, yml, 0o644)
			}
			_, err = f.Streams.Out.Write(yml)
			return err
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVarP(&outputPath, "output", "o", "", "If specified, write output to this file.")
	return cmd
}
