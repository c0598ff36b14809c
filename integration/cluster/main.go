// Command cluster runs kdyn's test cluster (an embedded etcd, a real
// kube-apiserver, kube-controller-manager, kube-scheduler and KWOK's
// simulated nodes, see package testenv) in the foreground, for trying kdyn
// or kubectl against it by hand. It is what "make cluster" runs.
// -nodes sets the number of simulated nodes (default 2; 0 runs no KWOK);
// -controllers=false runs the apiserver alone.
//
// Usage:
//
//	go run ./integration/cluster [-dir DIR] [-v] [-nodes N] [-controllers=false]
//	go run ./integration/cluster -build-only
//
// It prints an "export KUBECONFIG=..." line and runs until SIGINT or
// SIGTERM. With -dir, the directory keeps the credentials and the data
// between runs (and the same ports when they are free); without it, a
// temporary directory is used and removed at exit. -build-only builds the
// control-plane binary if needed, prints its path and exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kdyn/kdyn/integration/testenv"
)

func main() {
	dir := flag.String("dir", "", "directory for credentials, etcd data and kubeconfig (default: a temporary directory, removed at exit)")
	buildOnly := flag.Bool("build-only", false, "build the control-plane binary if needed, print its path and exit")
	verbose := flag.Bool("v", false, "copy the control plane's output to stderr")
	controllers := flag.Bool("controllers", true, "also run kube-controller-manager and kube-scheduler")
	nodes := flag.Int("nodes", 2, "simulated (KWOK) nodes to register; 0 runs no KWOK (with -controllers only)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "cluster: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if !*controllers {
		*nodes = 0
	}
	os.Exit(run(*dir, *buildOnly, *verbose, *controllers, *nodes))
}

func run(dir string, buildOnly, verbose, controllers bool, nodes int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if buildOnly {
		bin, err := testenv.Binary(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cluster:", err)
			return 1
		}
		fmt.Println(bin)
		return 0
	}

	opts := testenv.Options{Dir: dir, Controllers: controllers, Scheduler: controllers, Nodes: nodes}
	if verbose {
		opts.Output = os.Stderr
	}
	start := time.Now()
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "cluster: kube-apiserver ready at %s after %s (log: %s)\n",
		env.Host(), time.Since(start).Round(100*time.Millisecond), env.LogPath())
	switch {
	case nodes > 0:
		fmt.Fprintf(os.Stderr, "cluster: kube-controller-manager, kube-scheduler and KWOK running (logs beside it); %d simulated nodes Ready,"+
			" kubelet API on 127.0.0.1:%d (configure pods' logs, exec, attach and port-forward with kwok.x-k8s.io/v1alpha1 objects)\n",
			nodes, env.KubeletPort())
	case controllers:
		fmt.Fprintf(os.Stderr, "cluster: kube-controller-manager and kube-scheduler running (logs beside it); no nodes, so pods stay Pending\n")
	}
	fmt.Printf("export KUBECONFIG=%s\n", env.KubeconfigPath(testenv.Admin))
	fmt.Fprintf(os.Stderr, "cluster: run the export line in another shell, then e.g. `kubectl get ns`;"+
		" contexts: admin (current), cert-admin, nobody. Ctrl-C stops the cluster.\n")

	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			if err := env.Err(); err != nil {
				fmt.Fprintln(os.Stderr, "cluster:", err)
				env.Stop()
				return 1
			}
		}
	}
	stop() // a second Ctrl-C kills us the default way
	fmt.Fprintln(os.Stderr, "cluster: stopping…")
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		return 1
	}
	return 0
}
