package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	kunstructured "github.com/kdyn/kdyn/unstructured"
)

// This file runs kustomize builds for -k and "kdyn kustomize", with
// sigs.k8s.io/kustomize/api at the version kubectl v0.37.2 links
// (v0.21.1), so that the output is kubectl's byte for byte. Only the CLI
// links kustomize; the library does not (internal/depcheck).

// KustomizeOptions are the build options of "kdyn kustomize"; the zero
// value is kubectl's default build, as -k runs it.
type KustomizeOptions struct {
	// LoadRestrictor is "LoadRestrictionsRootOnly" (default: files only
	// from the kustomization's directory tree) or "LoadRestrictionsNone".
	LoadRestrictor string
	// EnableHelm lets the helmCharts field run the helm command
	// (HelmCommand, default "helm") with HelmAPIVersions,
	// HelmKubeVersion and HelmDebug.
	EnableHelm      bool
	HelmCommand     string
	HelmAPIVersions []string
	HelmKubeVersion string
	HelmDebug       bool
}

// AddFlags adds kubectl kustomize's build flags to cmd.
func (o *KustomizeOptions) AddFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.LoadRestrictor, "load-restrictor", types.LoadRestrictionsRootOnly.String(),
		"If set to '"+types.LoadRestrictionsNone.String()+"', local kustomizations may load files from outside their root. This does, however, break the relocatability of the kustomization.")
	fl.BoolVar(&o.EnableHelm, "enable-helm", false, "Enable use of the Helm chart inflator generator.")
	fl.StringVar(&o.HelmCommand, "helm-command", "helm", "helm command (path to executable)")
	fl.StringArrayVar(&o.HelmAPIVersions, "helm-api-versions", nil, "Kubernetes api versions used by Helm for Capabilities.APIVersions")
	fl.StringVar(&o.HelmKubeVersion, "helm-kube-version", "", "Kubernetes version used by Helm for Capabilities.KubeVersion")
	fl.BoolVar(&o.HelmDebug, "helm-debug", false, "Enable debug output from the Helm chart inflator generator.")
	_ = cmd.RegisterFlagCompletionFunc("load-restrictor", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{types.LoadRestrictionsNone.String(), types.LoadRestrictionsRootOnly.String()}, cobra.ShellCompDirectiveNoFileComp
	})
}

func (o *KustomizeOptions) krustyOptions() (*krusty.Options, error) {
	k := krusty.MakeDefaultOptions()
	// kubectl kustomize without --reorder: the kustomization's sortOptions
	// if it has some, else kustomize's legacy order (Namespaces first,
	// webhooks last). apply -k sorts the same way.
	k.Reorder = krusty.ReorderOptionUnspecified
	switch o.LoadRestrictor {
	case "", types.LoadRestrictionsRootOnly.String():
		k.LoadRestrictions = types.LoadRestrictionsRootOnly
	case types.LoadRestrictionsNone.String(), "none":
		k.LoadRestrictions = types.LoadRestrictionsNone
	default:
		return nil, Usagef("illegal flag value --load-restrictor %s; legal values: [%s %s]", o.LoadRestrictor,
			types.LoadRestrictionsRootOnly, types.LoadRestrictionsNone)
	}
	k.PluginConfig.HelmConfig.Enabled = o.EnableHelm
	k.PluginConfig.HelmConfig.Command = o.HelmCommand
	if k.PluginConfig.HelmConfig.Command == "" {
		k.PluginConfig.HelmConfig.Command = "helm"
	}
	k.PluginConfig.HelmConfig.ApiVersions = o.HelmAPIVersions
	k.PluginConfig.HelmConfig.KubeVersion = o.HelmKubeVersion
	k.PluginConfig.HelmConfig.Debug = o.HelmDebug
	return k, nil
}

// Kustomize builds the kustomization in dir (a directory, or a git URL as
// kustomize accepts) and returns its objects as YAML documents separated
// by "---", exactly as kubectl kustomize prints them.
func Kustomize(dir string, o KustomizeOptions) ([]byte, error) {
	opts, err := o.krustyOptions()
	if err != nil {
		return nil, err
	}
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

// readKustomization builds dir for -k and reads its documents, named
// after dir in messages ("overlays/prod: document 3").
func readKustomization(dir string) []*ManifestEntry {
	yml, err := Kustomize(dir, KustomizeOptions{})
	if err != nil {
		return []*ManifestEntry{{doc: kunstructured.Document{Source: dir}, err: fmt.Errorf("kustomize %s: %w", dir, err)}}
	}
	return readManifestStream(bytes.NewReader(yml), dir)
}
