package cli

import "github.com/spf13/cobra"

func addManifestCommands(root *cobra.Command, f *factory) {}
