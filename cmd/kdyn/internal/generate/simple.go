package generate

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
)

var (
	namespaceGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	serviceAccountGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

func newNamespaceCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:     "namespace NAME [--dry-run=server|client|none]",
		Aliases: []string{"ns"},
		Short:   "Create a namespace with the specified name",
		Long: `Create a Namespace. With --dry-run=client -o yaml (or json) nothing is sent,
and the output is byte for byte kubectl's.`,
		Example: `  # Create a namespace named my-namespace
  kdyn create namespace my-namespace

  # Print its manifest instead
  kdyn create namespace my-namespace --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: namespaceGVR, kind: "Namespace",
				build: func(name, _ string) (*object, error) {
					// The typed Namespace's spec and status are structs,
					// which kubectl always prints, empty.
					return &object{gvr: namespaceGVR, kind: "Namespace", name: name,
						body: fields{{"spec", fields{}}, {"status", fields{}}}}, nil
				},
			})
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newServiceAccountCommand(f *cli.Factory) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:     "serviceaccount NAME [--dry-run=server|client|none]",
		Aliases: []string{"sa"},
		Short:   "Create a service account with the specified name",
		Long: `Create a ServiceAccount. With --dry-run=client -o yaml (or json) nothing is
sent, and the output is byte for byte kubectl's.`,
		Example: `  # Create a service account named my-service-account
  kdyn create serviceaccount my-service-account

  # In another namespace, printed rather than created
  kdyn create sa robot -n ci --dry-run=client -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), f, cmd, args, generator{
				gvr: serviceAccountGVR, kind: "ServiceAccount", namespaced: true, failure: "failed to create serviceaccount: ",
				build: func(name, ns string) (*object, error) {
					return &object{gvr: serviceAccountGVR, kind: "ServiceAccount", name: name, namespace: ns}, nil
				},
			})
		},
	}
	o.addFlags(cmd)
	return cmd
}
