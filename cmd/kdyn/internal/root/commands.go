package root

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/apply"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/auth"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/cluster"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/debug"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/delete"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/describe"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/edit"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/events"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/explain"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/generate"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/get"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/kuberc"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/kustomize"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/mutate"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/plugin"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/pods"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/proxy"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/rollout"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/scale"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/serverinfo"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/tree"
	"github.com/kdyn/kdyn/cmd/kdyn/internal/wait"
)

// addCommands adds the resource commands, family by family.
func addCommands(root *cobra.Command, f *cli.Factory) {
	root.AddCommand(get.NewCommand(f))
	root.AddCommand(describe.NewCommand(f))
	root.AddCommand(events.NewCommand(f))
	addManifestCommands(root, f)         // apply, create, replace, delete, diff
	addObjectCommands(root, f)           // patch, label, annotate, edit, scale, wait, rollout
	root.AddCommand(auth.NewCommand(f))  // auth can-i, auth whoami, auth reconcile
	root.AddCommand(proxy.NewCommand(f)) // the API on a local address
	root.AddCommand(generate.NewRunCommand(f))
	root.AddCommand(generate.NewExposeCommand(f))
	root.AddCommand(generate.NewAutoscaleCommand(f))
	root.AddCommand(debug.NewCommand(f)) // ephemeral containers, pod copies, node pods
	root.AddCommand(cluster.NewClusterInfoCommand(f), cluster.NewTopCommand(f))
	root.AddCommand(pods.NewLogsCommand(f), pods.NewExecCommand(f), pods.NewAttachCommand(f), pods.NewPortForwardCommand(f), pods.NewCpCommand(f))
	if kuberc.Enabled(os.Getenv) {
		root.AddCommand(kuberc.NewCommand(f)) // kuberc view, kuberc set
	}
	root.AddCommand(plugin.NewCommand(f))
	addDiscoveryCommands(root, f) // api-resources, api-versions, explain, tree, completion
	root.AddCommand(&cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of --exit-codes",
		Long:  cli.ExitCodesHelp,
	})
}

// addManifestCommands registers the commands that read manifests: apply,
// create, replace, delete and diff, and kustomize, which builds them.
func addManifestCommands(root *cobra.Command, f *cli.Factory) {
	create := apply.NewCreateCommand(f)
	create.AddCommand(generate.Commands(f)...)
	root.AddCommand(
		apply.NewApplyCommand(f),
		create,
		apply.NewReplaceCommand(f),
		delete.NewCommand(f),
		apply.NewDiffCommand(f),
		kustomize.NewCommand(f),
	)
}

// addObjectCommands registers the commands that change or watch existing
// objects: patch, label, annotate, edit, scale, wait and rollout.
func addObjectCommands(root *cobra.Command, f *cli.Factory) {
	root.AddCommand(
		edit.NewPatchCommand(f),
		edit.NewLabelCommand(f),
		edit.NewAnnotateCommand(f),
		edit.NewEditCommand(f),
		scale.NewCommand(f),
		wait.NewCommand(f),
		rollout.NewCommand(f),
		mutate.NewCordonCommand(f, true),
		mutate.NewCordonCommand(f, false),
		mutate.NewDrainCommand(f),
		mutate.NewTaintCommand(f),
		mutate.NewSetCommand(f),
		mutate.NewCertificateCommand(f),
	)
}

// addDiscoveryCommands adds api-resources, api-versions, explain, tree and
// completion, then registers dynamic shell completion (resource types,
// then object names) on every resource command already on root.
// addCommands calls it after the get, manifest and object groups for that
// reason.
func addDiscoveryCommands(root *cobra.Command, f *cli.Factory) {
	root.AddCommand(
		serverinfo.NewAPIResourcesCommand(f),
		serverinfo.NewAPIVersionsCommand(f),
		explain.NewCommand(f),
		tree.NewCommand(f),
		newCompletionCommand(root),
	)
	registerCompletions(root, f)
}
