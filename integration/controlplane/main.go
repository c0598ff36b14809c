// Command controlplane runs an embedded etcd and a real kube-apiserver in one
// process, on loopback only, for kdyn's integration tests and `make cluster`;
// the same binary runs kube-controller-manager, kube-scheduler and KWOK's
// controller (simulated nodes and pods, with a kubelet API for logs, exec,
// attach and port-forward), so that the whole cluster is built once, from
// one module graph.
//
// Usage:
//
//	controlplane --etcd-dir DIR --etcd-client-port N --etcd-peer-port N -- [kube-apiserver flags]
//	controlplane kube-controller-manager [flags]
//	controlplane kube-scheduler [flags]
//	controlplane kwok --kubeconfig FILE [kwok flags]
//
// The kube-apiserver flags are passed through unchanged; --etcd-servers is added
// when it is not given. The process stops etcd after the apiserver has exited
// (on SIGTERM or SIGINT). The other two take their own flags unchanged.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "kube-controller-manager":
			cmd := kcm.NewControllerManagerCommand()
			cmd.SetArgs(os.Args[2:])
			os.Exit(cli.Run(cmd))
		case "kube-scheduler":
			cmd := scheduler.NewSchedulerCommand()
			cmd.SetArgs(os.Args[2:])
			os.Exit(cli.Run(cmd))
		case "kwok":
			os.Exit(runKWOK(os.Args[2:]))
		}
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var passthrough []string
	for i, a := range args {
		if a == "--" {
			passthrough = args[i+1:]
			args = args[:i]
			break
		}
	}
	fs := flag.NewFlagSet("controlplane", flag.ContinueOnError)
	etcdDir := fs.String("etcd-dir", "", "etcd data directory (required)")
	clientPort := fs.Int("etcd-client-port", 2379, "etcd client port on 127.0.0.1")
	peerPort := fs.Int("etcd-peer-port", 2380, "etcd peer port on 127.0.0.1")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *etcdDir == "" {
		fmt.Fprintln(os.Stderr, "controlplane: --etcd-dir is required")
		return 2
	}

	cfg := embed.NewConfig()
	cfg.Dir = *etcdDir
	cfg.Name = "kdyn-test"
	cfg.LogLevel = "error"
	clientURL := mustURL(fmt.Sprintf("http://127.0.0.1:%d", *clientPort))
	peerURL := mustURL(fmt.Sprintf("http://127.0.0.1:%d", *peerPort))
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.Name + "=" + peerURL.String()
	cfg.ListenMetricsUrls = nil
	// A throwaway test store: no fsync (the data survives the process being
	// killed, only not a machine crash), and WAL segments of 8 MB instead of
	// 64 MB, two of which etcd preallocates on disk for every data dir.
	cfg.UnsafeNoFsync = true
	wal.SegmentSizeBytes = 8 << 20

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "controlplane: start etcd: %v\n", err)
		return 1
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "controlplane: etcd did not become ready within 60s")
		return 1
	}

	hasEtcd := false
	for _, a := range passthrough {
		if strings.HasPrefix(a, "--etcd-servers") {
			hasEtcd = true
		}
	}
	if !hasEtcd {
		passthrough = append(passthrough, "--etcd-servers="+clientURL.String())
	}

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(passthrough)
	return cli.Run(cmd)
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}
