// Command kdyncontroller is the controller footprint probe for kdyn: a
// production-shaped controller — leader election, an Event recorder,
// Prometheus metrics and probes, a work queue with workers — that caches
// every ConfigMap of $PROBE_NAMESPACE, reconciles each once (a no-op),
// records one Event, and prints its resident memory.
package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/bench/lib/footprint/probe"
	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/metrics"
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
	res, err := kubeconfig.Resolve(nil, kubeconfig.Overrides{})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		return err
	}
	res.Config.Metrics = m.REST()
	dc, err := dynamic.NewForConfig(res.Config)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	f := informer.NewFactory(dc, informer.FactoryOptions{Namespace: ns, Metrics: m.Informer()})
	cms := f.ForResource(gvr, informer.InformerOptions{})
	rec, err := events.New(dc, events.Options{ReportingController: "kdyn.io/footprint-probe", Metrics: m.Events()})
	if err != nil {
		return err
	}
	var reconciled atomic.Int64
	done := make(chan struct{})
	ctrl, err := controller.New("probe", func(ctx context.Context, key string) (controller.Result, error) {
		reconciled.Add(1)
		return controller.Result{}, nil
	}, controller.Options[string]{Workers: 2, Metrics: m.Controller(), QueueMetrics: m.WorkQueue()})
	if err != nil {
		return err
	}
	if _, err := cms.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(o *unstructured.Unstructured, initial bool) { ctrl.AddInitial(informer.Key(o)) },
	}); err != nil {
		return err
	}
	mgr, err := controller.NewManager(controller.ManagerOptions{BindAddress: "127.0.0.1:0", MetricsHandler: metrics.Handler(reg),
		LeaderElection: &controller.LeaderElection{Client: dc, Namespace: ns, Name: "footprint-kdyn", Identity: "probe", ReleaseOnCancel: true, Metrics: m.LeaderElection()}})
	if err != nil {
		return err
	}
	mgr.AddCache(f)
	mgr.Add(ctrl)
	mgr.Add(rec)
	mgr.Add(controller.RunnableFunc(func(ctx context.Context) error {
		// Runs once the caches have synced: wait for every initial
		// reconcile.
		for reconciled.Load() < int64(cms.Store().Len()) {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(10 * time.Millisecond):
			}
		}
		close(done)
		return nil
	}))
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- mgr.Run(runCtx) }()
	select {
	case <-done:
	case err := <-errc:
		return fmt.Errorf("manager stopped: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	first := cms.Store().List()[0]
	rec.Eventf(first, nil, events.Normal, "Probed", "Probe", "footprint probe")
	fmt.Printf("cached %d, reconciled %d, rss %d\n", cms.Store().Len(), reconciled.Load(), probe.RSS())
	stop()
	return <-errc
}
