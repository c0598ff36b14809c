package cli

import "github.com/spf13/cobra"

// addCommands adds the resource commands. Each group registers its
// commands in its own file.
func addCommands(root *cobra.Command, f *factory) {
	root.AddCommand(newGetCommand(f))
	addManifestCommands(root, f)  // apply, create, replace, delete, diff
	addObjectCommands(root, f)    // patch, label, annotate, edit, wait
	addDiscoveryCommands(root, f) // api-resources, api-versions, explain, tree, completion
	root.AddCommand(&cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of --exit-codes",
		Long:  exitCodesHelp,
	})
}
