package serverinfo

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"github.com/kdyn/kdyn/cmd/kdyn/internal/cli"
	"github.com/kdyn/kdyn/discovery"
	"github.com/kdyn/kdyn/rest"
)

// versionOutput is kubectl's version document.
type versionOutput struct {
	ClientVersion    *version.Info `json:"clientVersion,omitempty"`
	KustomizeVersion string        `json:"kustomizeVersion,omitempty"`
	ServerVersion    *version.Info `json:"serverVersion,omitempty"`
}

// KustomizeVersion is the release of kustomize whose library
// (sigs.k8s.io/kustomize/api v0.21.1, the one go.mod requires) builds
// kdyn's kustomizations; kubectl v1.37 embeds the same one and reports it
// under this name.
const KustomizeVersion = "v5.8.1"

func clientVersion() *version.Info {
	return &version.Info{
		GitVersion: rest.Version,
		GoVersion:  runtime.Version(),
		Compiler:   runtime.Compiler,
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// NewVersionCommand returns "kdyn version".
func NewVersionCommand(f *cli.Factory) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version and, when reachable, the server's",
		Example: `  kdyn version
  kdyn version --client
  kdyn version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return cli.Usagef("--output must be json or yaml, not %q", output)
			}
			out := versionOutput{ClientVersion: clientVersion(), KustomizeVersion: KustomizeVersion}
			var serverErr error
			if !clientOnly {
				serverErr = func() error {
					rc, err := f.RESTClient()
					if err != nil {
						return err
					}
					dc, err := discovery.New(rc, discovery.Options{Logger: f.Logger()})
					if err != nil {
						return err
					}
					out.ServerVersion, err = dc.ServerVersion(cmd.Context())
					return err
				}()
			}
			w := f.Streams.Out
			switch output {
			case "json":
				b, _ := json.MarshalIndent(out, "", "  ")
				fmt.Fprintln(w, string(b))
			case "yaml":
				b, _ := yaml.Marshal(out)
				fmt.Fprintln(w, string(b))
			default:
				fmt.Fprintf(w, "Client Version: %s\n", out.ClientVersion.GitVersion)
				fmt.Fprintf(w, "Kustomize Version: %s\n", out.KustomizeVersion)
				if out.ServerVersion != nil {
					fmt.Fprintf(w, "Server Version: %s\n", out.ServerVersion.GitVersion)
				}
			}
			if serverErr != nil {
				return fmt.Errorf("could not reach the server for its version: %w", serverErr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print the client version only (no server needed).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml.")
	return cmd
}
