package cli

import "github.com/spf13/cobra"

func addObjectCommands(root *cobra.Command, f *factory) {}
