package cli

import "github.com/spf13/cobra"

// addDiscoveryCommands adds api-resources, api-versions, explain, tree and
// completion, then registers dynamic shell completion (resource types,
// then object names) on every resource command already on root. commands.go
// calls it after the get, manifest and object groups for that reason.
func addDiscoveryCommands(root *cobra.Command, f *Factory) {
	root.AddCommand(
		NewAPIResourcesCommand(f),
		NewAPIVersionsCommand(f),
		newExplainCommand(f),
		newTreeCommand(f),
		newCompletionCommand(root),
	)
	registerCompletions(root, f)
}
