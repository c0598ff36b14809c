package cli

import "github.com/spf13/cobra"

// addManifestCommands registers the commands that read manifests: apply,
// create, replace, delete and diff.
func addManifestCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(
		NewApplyCommand(f),
		NewCreateCommand(f),
		NewReplaceCommand(f),
		newDeleteCommand(f),
		NewDiffCommand(f),
	)
}
