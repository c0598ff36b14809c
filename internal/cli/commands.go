package cli

import "github.com/spf13/cobra"

// addCommands adds the resource commands. Each group registers its
// commands in its own file.
func addCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(newGetCommand(f))
	addManifestCommands(root, f)  // apply, create, replace, delete, diff
	addObjectCommands(root, f)    // patch, label, annotate, edit, wait
	addDiscoveryCommands(root, f) // api-resources, api-versions, explain, tree, completion
	root.AddCommand(&cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of --exit-codes",
		Long:  ExitCodesHelp,
	})
}

// addObjectCommands registers the commands that change or watch existing
// objects: patch, label, annotate, edit and wait.
func addObjectCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(
		NewPatchCommand(f),
		NewLabelCommand(f),
		NewAnnotateCommand(f),
		NewEditCommand(f),
		newWaitCommand(f),
	)
}
