// Command kubectl is kubectl v0.37.2 built from k8s.io/kubectl, exactly as
// k8s.io/kubernetes v1.37.2's cmd/kubectl/kubectl.go builds it, so that the
// CLI benchmarks (bench/cmd/clibench) compare kdyn with the real thing built
// with the same toolchain and flags.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// As upstream: parse the verbosity early so that klog works during
	// command construction (plugins, .kuberc).
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
