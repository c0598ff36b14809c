package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	ctrl "github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/metrics"
	"github.com/kdyn/kdyn/readiness"
	"github.com/kdyn/kdyn/rest"
	kunstructured "github.com/kdyn/kdyn/unstructured"
	"github.com/kdyn/kdyn/workqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// crdManifest is crd.yaml, applied by --install-crd.
//
//go:embed crd.yaml
var crdManifest []byte

// establishTimeout bounds the wait for the CRD installed by --install-crd
// to be established.
const establishTimeout = time.Minute

// options are the command-line flags.
type options struct {
	kubeconfig string
	context    string
	namespace  string
	workers    int
	installCRD bool
	verbose    bool

	leaderElect    bool
	leaseNamespace string
	identity       string
	metricsAddress string
	metricsSecure  bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("crd-controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&o.namespace, "namespace", "", "only manage Widgets in this namespace; empty means all")
	fs.IntVar(&o.workers, "workers", 2, "number of Widgets reconciled at once")
	fs.BoolVar(&o.installCRD, "install-crd", false, "apply the Widget CRD (crd.yaml, built in) and wait until it is established")
	fs.BoolVar(&o.verbose, "v", false, "debug logs on stderr")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "run several replicas: only the one holding the Lease \"kdyn-example-crd-controller\" reconciles")
	fs.StringVar(&o.leaseNamespace, "lease-namespace", "default", "namespace of the leader-election Lease")
	fs.StringVar(&o.identity, "identity", "", "this replica's identity in the Lease (default: the host name and a random suffix)")
	fs.StringVar(&o.metricsAddress, "metrics-bind-address", "", "serve /metrics, /healthz and /readyz on this address (\":8080\"); empty: none")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve over TLS (a self-signed certificate) and /metrics only to bearer tokens the API server authorizes for get on /metrics (TokenReview and SubjectAccessReview: the controller needs the ClusterRole system:auth-delegator); false: plain HTTP to anyone")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crd-controller [flags]\n\nKeeps a ConfigMap with each Widget's spec.data, and the Widget's Ready status.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.workers < 1 {
		return o, fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	if o.identity == "" {
		host, _ := os.Hostname()
		o.identity = fmt.Sprintf("%s-%06d", host, rand.IntN(1_000_000))
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crd-controller:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crd-controller:", err)
		os.Exit(1)
	}
}

// newLogger logs to w through zap, as a logr.Logger (go-logr/zapr), the
// logger kdyn's packages take: up to V(1) (kdyn's informational lines),
// or everything with -v. sync flushes it.
func newLogger(w io.Writer, verbose bool) (log logr.Logger, sync func()) {
	level := zapcore.DebugLevel // logr's V(1)
	if verbose {
		level = zapcore.Level(-127) // every V level
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.CallerKey = ""
	zl := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), level))
	return zapr.NewLogger(zl), func() { _ = zl.Sync() }
}

// run is the controller; it returns when ctx is done and every goroutine
// it started has exited.
func run(ctx context.Context, o options, stderr io.Writer) error {
	rules := kubeconfig.NewDefaultLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	res, err := kubeconfig.Resolve(rules, kubeconfig.Overrides{Context: o.context})
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		return err
	}
	cfg := res.Config
	cfg.UserAgent = "kdyn-example-crd-controller"
	cfg.Metrics = m.REST()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	log, syncLog := newLogger(stderr, o.verbose)
	defer syncLog()
	client := dynamic.WithFieldManager(dc, fieldManager)

	if o.installCRD {
		if err := installCRD(ctx, client); err != nil {
			return err
		}
		log.V(1).Info("CRD installed", "crd", crdName)
	} else if _, err := dc.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return fmt.Errorf("the CRD %s is not installed: run with --install-crd, or apply examples/crd-controller/crd.yaml", crdName)
	} else if err != nil {
		return fmt.Errorf("read the CRD %s: %w", crdName, err)
	}

	f := informer.NewFactory(dc, informer.FactoryOptions{Namespace: o.namespace, Logger: log, Metrics: m.Informer()})
	c := &controller{
		client:  client,
		widgets: f.ForResource(widgetGVR, informer.InformerOptions{}),
		// Only the ConfigMaps the controller made: the label selector
		// keeps the cache small, and the owner label names the Widget.
		cms:    f.ForResource(cmGVR, informer.InformerOptions{LabelSelector: ownerLabel}),
		log:    log,
		events: events.Discard, // until the recorder is made
	}
	reconciler, err := ctrl.New("widgets", func(ctx context.Context, key string) (ctrl.Result, error) {
		return ctrl.Result{}, c.reconcile(ctx, key)
	}, ctrl.Options[string]{
		Workers: o.workers,
		RateLimiter: workqueue.NewMaxOfRateLimiter[string](
			workqueue.NewItemExponentialRateLimiter[string](5*time.Millisecond, time.Minute),
			workqueue.NewBucketRateLimiter[string](10, 100),
		),
		Metrics:      m.Controller(),
		QueueMetrics: m.WorkQueue(),
		Logger:       log,
	})
	if err != nil {
		return err
	}
	c.queue = reconciler
	if err := reconciler.Watch(c.watches()...); err != nil {
		return err
	}
	mo := ctrl.ManagerOptions{BindAddress: o.metricsAddress, MetricsHandler: metrics.Handler(reg), Logger: log}
	if o.metricsSecure {
		mo.SecureMetrics = &ctrl.SecureMetrics{Client: dc}
	}
	if o.leaderElect {
		// Leader election has a client of its own: its requests never
		// wait behind the controller's.
		leaseCfg := rest.CopyConfig(cfg)
		leaseCfg.UserAgent = cfg.UserAgent + "/leases"
		lc, err := dynamic.NewForConfig(leaseCfg)
		if err != nil {
			return err
		}
		mo.LeaderElection = &ctrl.LeaderElection{
			Client:    lc,
			Namespace: o.leaseNamespace, Name: "kdyn-example-crd-controller", Identity: o.identity,
			ReleaseOnCancel: true, Metrics: m.LeaderElection(),
		}
	}
	mgr, err := ctrl.NewManager(mo)
	if err != nil {
		return err
	}
	if o.leaderElect {
		c.leading = mgr.IsLeader
	}
	rec, err := events.New(dc, events.Options{ReportingController: "kdyn.io/example-crd-controller", ReportingInstance: o.identity, Logger: log, Metrics: m.Events()})
	if err != nil {
		return err
	}
	c.events = rec
	mgr.Add(rec) // in every replica; flushes when it stops, after the reconciler
	mgr.AddCache(f)
	mgr.Add(ctrl.RunnableFunc(func(ctx context.Context) error {
		where := o.namespace
		if where == "" {
			where = "all namespaces"
		}
		log.V(1).Info("caches synced; reconciling", "namespace", where, "widgets", c.widgets.Store().Len(), "workers", o.workers)
		return nil
	}))
	mgr.Add(reconciler)
	return mgr.Run(ctx)
}

// installCRD applies crd.yaml with server-side apply and waits until the
// CRD is established (its resource is served).
func installCRD(ctx context.Context, client dynamic.Interface) error {
	objs, err := kunstructured.DecodeManifests(bytes.NewReader(crdManifest), "crd.yaml")
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if _, err := client.Resource(crdGVR).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{Force: true}); err != nil {
			return fmt.Errorf("apply the CRD %s: %w", obj.GetName(), err)
		}
	}
	// Follow the CRD (one list, then a watch) until readiness says it is
	// Established: its resource is served.
	ctx, cancel := context.WithTimeout(ctx, establishTimeout)
	defer cancel()
	established := func(crd *unstructured.Unstructured) (bool, error) {
		res, err := readiness.Compute(crd) // an error: not established yet
		return err == nil && res.Ready(), nil
	}
	src := informer.NewResourceSource(client.Resource(crdGVR), informer.SourceOptions{})
	err = informer.Follow(ctx, src, informer.FollowOptions{ListOptions: metav1.ListOptions{FieldSelector: "metadata.name=" + crdName}},
		informer.FollowFuncs[*unstructured.Unstructured]{
			Listed: func(crds []*unstructured.Unstructured) (bool, error) {
				if len(crds) == 0 {
					return false, nil
				}
				return established(crds[0])
			},
			Event: func(_ watch.EventType, crd *unstructured.Unstructured) (bool, error) { return established(crd) },
		})
	if err != nil {
		return fmt.Errorf("the CRD %s was not established within %v: %w", crdName, establishTimeout, err)
	}
	return nil
}
