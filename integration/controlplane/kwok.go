package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	kwokcrd "sigs.k8s.io/kwok/kustomize/crd"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
	"sigs.k8s.io/yaml"
)

// kwokCRDs are the kwok.x-k8s.io kinds that the kwok subcommand installs
// and enables, so that tests configure the simulated kubelet's logs, exec,
// attach and port-forward per pod (or per cluster) through the API.
var kwokCRDs = map[string][]byte{
	"Logs":               kwokcrd.Logs,
	"ClusterLogs":        kwokcrd.ClusterLogs,
	"Exec":               kwokcrd.Exec,
	"ClusterExec":        kwokcrd.ClusterExec,
	"Attach":             kwokcrd.Attach,
	"ClusterAttach":      kwokcrd.ClusterAttach,
	"PortForward":        kwokcrd.PortForward,
	"ClusterPortForward": kwokcrd.ClusterPortForward,
}

// runKWOK runs KWOK's controller (sigs.k8s.io/kwok v0.8.0): it keeps the
// nodes it manages Ready (with leases) and plays pods on them (Running
// with an IP, then Succeeded or deleted), and serves the kubelet API
// (containerLogs, exec, attach, portForward) that the apiserver proxies to.
//
// Its flags are kwok's own; --kubeconfig is required. Before kwok starts,
// the stages that kwokctl uses by default (node initialize and heartbeat
// with lease; pod ready, complete and delete) are written to a config file
// in the working directory and passed with --config, and the CRDs of
// kwokCRDs are created or updated and enabled.
func runKWOK(args []string) int {
	fs := pflag.NewFlagSet("kwok", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.Usage = func() {}
	kubeconfig := fs.String("kubeconfig", "", "")
	_ = fs.Parse(args)
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "controlplane kwok: --kubeconfig is required")
		return 2
	}

	stages := filepath.Join(".", "kwok-stages.yaml")
	docs := []string{nodefast.DefaultNodeInit, nodelease.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady, podfast.DefaultPodComplete, podfast.DefaultPodDelete}
	if err := os.WriteFile(stages, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane kwok:", err)
		return 1
	}
	kinds := make([]string, 0, len(kwokCRDs))
	for k := range kwokCRDs {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)

	ctx := signals.SetupSignalContext()
	if err := installCRDs(ctx, *kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "controlplane kwok: install kwok's CRDs:", err)
		return 1
	}

	// The Kubernetes components' flags (component-base's --version among
	// them) sit on pflag.CommandLine, which cobra adds to every root
	// command; kwok has a --version of its own.
	pflag.CommandLine = pflag.NewFlagSet("kwok", pflag.ExitOnError)
	// kwok's own flag handling reads os.Args: present them as kwok's.
	os.Args = append([]string{"kwok", "--config=" + stages, "--enable-crds=" + strings.Join(kinds, ","), "-v=WARN"}, args...)
	global := pflag.NewFlagSet("global", pflag.ContinueOnError)
	global.ParseErrorsAllowlist.UnknownFlags = true
	global.Usage = func() {}
	ctx, logger := kwoklog.InitFlags(ctx, global)
	ctx, err := kwokconfig.InitFlags(ctx, global)
	if err != nil {
		logger.Error("Init config flags", "err", err)
		return 1
	}
	cmd := kwokcmd.NewCommand(ctx)
	cmd.PersistentFlags().AddFlagSet(global)
	cmd.SetArgs(os.Args[1:])
	if err := cmd.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		return 1
	}
	return 0
}

// installCRDs creates (or updates) kwokCRDs and waits until each is
// Established.
func installCRDs(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	for kind, data := range kwokCRDs {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		names = append(names, crd.Name)
		var last error
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := crds.Create(ctx, &crd, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				old, gerr := crds.Get(ctx, crd.Name, metav1.GetOptions{})
				if gerr != nil {
					last = gerr
					return false, nil
				}
				crd.ResourceVersion = old.ResourceVersion
				_, err = crds.Update(ctx, &crd, metav1.UpdateOptions{})
			}
			last = err
			return err == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w (last error: %v)", crd.Name, err, last)
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			crd, err := crds.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("%s not established: %w", name, errors.Join(err, ctx.Err()))
		}
	}
	return nil
}
