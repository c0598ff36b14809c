package cli

import "github.com/spf13/cobra"

// addCommands adds the resource commands.
func addCommands(root *cobra.Command, f *factory) {
	root.AddCommand(newGetCommand(f))
	root.AddCommand(&cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of --exit-codes",
		Long:  exitCodesHelp,
	})
}
