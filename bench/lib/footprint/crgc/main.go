// Command crgc is examples/gc — the garbage-collector-style controller
// built on kdyn — written on client-go and controller-runtime v0.25.3, for
// the gc scenario of bench/cmd/libbench: the same collector doing the same
// work, in idiomatic controller-runtime code.
//
// Like examples/gc it watches the metadata of every resource that supports
// list, watch and delete (discovery's preferred versions:
// metav1.PartialObjectMetadata through the manager's cache, managedFields
// stripped by cache.TransformStripManagedFields), follows CRDs as they come
// and go (discovery again on every CRD event and every 30 s; informers of
// resources that left are removed from the cache), keeps an owner graph by
// UID (examples/gc/ownergraph, the package examples/gc uses), and checks
// dependents from a rate limited queue keyed by UID: a dependent whose owners are all gone is
// reported as "orphan ..." on stdout or, with --delete, deleted with
// propagationPolicy Background and preconditions on its UID and
// resourceVersion, with an Event (events.k8s.io/v1) for each. Once every
// resource's informer has synced it prints "synced <n> resources, <m>
// objects". The flags are examples/gc's, less --identity and --shard-ring
// (controller-runtime has no sharding; the leader-election identity is its
// own), plus --health-probe-bind-address: controller-runtime serves the
// probes on an address of their own, examples/gc beside /metrics.
//
// Differences that controller-runtime decides: its controllers, and so the
// informers their sources start, run only in the replica that leads (kdyn's
// caches run in every replica); a replica that loses its Lease exits
// instead of checking a fence before each delete; and secure metrics use
// its filters package (k8s.io/apiserver's delegating authentication and
// authorization) where examples/gc reviews tokens itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap/zapcore"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// options are the command-line flags.
type options struct {
	kubeconfig string
	context    string
	namespace  string
	delete     bool
	resync     time.Duration
	workers    int
	verbose    bool

	leaderElect    bool
	leaseNamespace string
	metricsAddress string
	metricsSecure  bool
	probeAddress   string
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("crgc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&o.namespace, "namespace", "", "only look at dependents in this namespace (cluster-scoped objects are always watched); empty means all")
	fs.BoolVar(&o.delete, "delete", false, "delete orphans (with propagationPolicy Background) instead of only reporting them")
	fs.DurationVar(&o.resync, "resync", 5*time.Minute, "how often every object with owners is checked again")
	fs.IntVar(&o.workers, "workers", 2, "number of concurrent checks")
	fs.BoolVar(&o.verbose, "v", false, "debug logs on stderr")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "run several replicas: only the one holding the Lease \"crgc\" acts")
	fs.StringVar(&o.leaseNamespace, "lease-namespace", "default", "namespace of the leader-election Lease")
	fs.StringVar(&o.metricsAddress, "metrics-bind-address", "", "serve /metrics on this address (\":8080\"; \"127.0.0.1:0\" picks a port); empty: none")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve over TLS (a self-signed certificate) and /metrics only to bearer tokens the API server authorizes for get on /metrics (controller-runtime's filters.WithAuthenticationAndAuthorization); false: plain HTTP to anyone")
	fs.StringVar(&o.probeAddress, "health-probe-bind-address", "", "serve /healthz and /readyz on this address; empty: none")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 15*time.Second, "leader-election Lease duration")
	fs.DurationVar(&o.renewDeadline, "renew-deadline", 10*time.Second, "leader-election renew deadline")
	fs.DurationVar(&o.retryPeriod, "retry-period", 2*time.Second, "leader-election retry period")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.resync <= 0 {
		return o, fmt.Errorf("--resync must be positive, got %v", o.resync)
	}
	if o.workers < 1 {
		return o, fmt.Errorf("--workers must be at least 1, got %d", o.workers)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crgc:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crgc:", err)
		os.Exit(1)
	}
}

// run is the controller; it returns when ctx is done and the manager has
// stopped.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	// As examples/gc: zap's development console encoder, up to logr's V(1)
	// (zap's debug level), everything with -v.
	level := zapcore.DebugLevel
	if o.verbose {
		level = zapcore.Level(-127)
	}
	log := zap.New(zap.UseDevMode(true), zap.WriteTo(stderr), zap.Level(level))
	ctrl.SetLogger(log)

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
	if err != nil {
		return err
	}
	cfg.UserAgent = "crgc"

	// The cache strips managedFields, as kdyn's informers do by default;
	// with --namespace, namespaced resources are watched in it alone.
	co := cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	if o.namespace != "" {
		co.DefaultNamespaces = map[string]cache.Config{o.namespace: {}}
	}
	mo := manager.Options{
		Cache:                         co,
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddress, SecureServing: o.metricsSecure},
		HealthProbeBindAddress:        o.probeAddress,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "crgc",
		LeaderElectionNamespace:       o.leaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
	}
	if o.metricsAddress == "" {
		mo.Metrics.BindAddress = "0" // none
	}
	if o.metricsSecure {
		mo.Metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return err
	}
	if o.probeAddress != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, mgr.GetHTTPClient())
	if err != nil {
		return err
	}

	c := newCollector(mgr.GetAPIReader(), mgr.GetClient(), mgr.GetRESTMapper(), mgr.GetCache(), disco, o.delete, stdout, log)
	c.events = mgr.GetEventRecorder("crgc")
	gc, err := controller.NewTyped("gc", mgr, controller.TypedOptions[types.UID]{
		Reconciler:              c,
		MaxConcurrentReconciles: o.workers,
		// examples/gc's limiter: client-go's default with a 30 s cap, so a
		// dependent waiting for its owner to be cached is retried soon.
		RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.UID](50*time.Millisecond, 30*time.Second),
			&workqueue.TypedBucketRateLimiter[types.UID]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
		),
	})
	if err != nil {
		return err
	}
	c.ctrl = gc
	// Dependents queued from outside the informers' events: every resync
	// period, and those of a resource that left.
	if err := gc.Watch(source.TypedChannel(c.requeue, handler.TypedFuncs[types.UID, types.UID]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[types.UID], q workqueue.TypedRateLimitingInterface[types.UID]) {
			q.Add(e.Object)
		},
	})); err != nil {
		return err
	}
	// The resources of the first discovery: the controller waits for
	// their informers to sync before its workers start.
	resources, err := c.discover()
	if err != nil {
		return err
	}
	initial := make([]*trackedSource, 0, len(resources))
	for _, r := range resources {
		s, err := c.watch(r)
		if err != nil {
			return err
		}
		initial = append(initial, s)
	}
	// Runs in the leader, beside the controller: reports the sync, then
	// follows discovery and resyncs.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		for _, s := range initial {
			if err := s.waitForSync(ctx); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		objects, _ := c.graph.Size()
		c.println(fmt.Sprintf("synced %d resources, %d objects", c.resourceCount(), objects))
		c.follow(ctx, o.resync)
		return nil
	})); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
