// Command crcontroller is the controller footprint probe for client-go and
// controller-runtime: the same controller as kdyncontroller — leader
// election, an event recorder, Prometheus metrics and probes, a work
// queue with two workers — written the usual controller-runtime way (a
// typed ConfigMap reconciler), caching every ConfigMap of
// $PROBE_NAMESPACE, reconciling each once, recording one Event, and
// printing its resident memory.
package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/kdyn/kdyn/bench/lib/footprint/probe"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := os.Getenv("PROBE_NAMESPACE")
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Metrics:                       metricsserver.Options{BindAddress: "127.0.0.1:0"},
		HealthProbeBindAddress:        "127.0.0.1:0",
		LeaderElection:                true,
		LeaderElectionID:              "footprint-cr",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true, // as the kdyn probe: the next run need not wait for the Lease to expire
		// Like kdyn's informers by default: managedFields are not cached.
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return err
	}
	recorder := mgr.GetEventRecorderFor("footprint-probe")
	var reconciled atomic.Int64
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciled.Add(1)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- mgr.Start(runCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("cache did not sync")
	}
	var list corev1.ConfigMapList
	if err := mgr.GetCache().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return err
	}
	for reconciled.Load() < int64(len(list.Items)) {
		select {
		case err := <-errc:
			return fmt.Errorf("manager stopped: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	recorder.Event(&list.Items[0], corev1.EventTypeNormal, "Probed", "footprint probe")
	fmt.Printf("cached %d, reconciled %d, rss %d\n", len(list.Items), reconciled.Load(), probe.RSS())
	stop()
	return <-errc
}
