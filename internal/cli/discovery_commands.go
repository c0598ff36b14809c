package cli

import "github.com/spf13/cobra"

func addDiscoveryCommands(root *cobra.Command, f *factory) {}
