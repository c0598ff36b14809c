package auth

import (
	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

// NewCommand returns "kdyn auth" with can-i, whoami and reconcile.
func NewCommand(f *cli.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Inspect authorization",
		Long: `Inspect authorization: whether an action is allowed (can-i), everything
allowed in a namespace (can-i --list), and who the server takes you for
(whoami); and bring RBAC roles and bindings in line with manifests
(reconcile).`,
		Example: `  kdyn auth can-i create deployments.apps -n prod
  kdyn auth can-i --list
  kdyn auth whoami
  kdyn auth reconcile -f rbac.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCanICommand(f), newWhoAmICommand(f), newReconcileCommand(f))
	return cli.GroupCommand(cmd)
}

// CanICommandName is the name of the can-i subcommand, for completion.
const CanICommandName = "can-i"
