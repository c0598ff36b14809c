package cli

import "github.com/spf13/cobra"

// addManifestCommands registers the commands that read manifests: apply,
// create, replace, delete and diff.
func addManifestCommands(root *cobra.Command, f *factory) {
	root.AddCommand(
		newApplyCommand(f),
		newCreateCommand(f),
		newReplaceCommand(f),
		newDeleteCommand(f),
		newDiffCommand(f),
	)
}
