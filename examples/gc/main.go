package main

import (
	"context"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/metrics"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/restmapper"
	"github.com/kdyn/kdyn/shard"
	"github.com/kdyn/kdyn/workqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// syncTimeout bounds the wait for the first list of a resource: one that
// has not synced by then is reported, and the others are checked.
const syncTimeout = 2 * time.Minute

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
	warmStandby    bool
	leaseNamespace string
	identity       string
	metricsAddress string
	metricsSecure  bool
	shardRing      string
	shardWeight    int
	leaseDuration  time.Duration
	renewDeadline  time.Duration
	retryPeriod    time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&o.namespace, "namespace", "", "only look at dependents in this namespace (cluster-scoped objects are always watched); empty means all")
	fs.BoolVar(&o.delete, "delete", false, "delete orphans (with propagationPolicy Background) instead of only reporting them")
	fs.DurationVar(&o.resync, "resync", 5*time.Minute, "how often every object with owners is checked again")
	fs.IntVar(&o.workers, "workers", 2, "number of concurrent checks")
	fs.BoolVar(&o.verbose, "v", false, "debug logs on stderr")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "run several replicas: only the one holding the Lease \"kdyn-example-gc\" acts")
	fs.BoolVar(&o.warmStandby, "warm-standby", false, "with --leader-elect: fill the caches while standing by, so a take-over starts at once (default: a standby caches nothing until it leads)")
	fs.StringVar(&o.leaseNamespace, "lease-namespace", "default", "namespace of the leader-election Lease, or of the shard ring's Leases")
	fs.StringVar(&o.identity, "identity", "", "this replica's identity in the Lease(s) (default: the host name and a random suffix)")
	fs.StringVar(&o.metricsAddress, "metrics-bind-address", "", "serve /metrics, /healthz and /readyz on this address (\":8080\"; \"127.0.0.1:0\" picks a port and logs it); empty: none")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve over TLS (a self-signed certificate) and /metrics only to bearer tokens the API server authorizes for get on /metrics (TokenReview and SubjectAccessReview: the controller needs the ClusterRole system:auth-delegator); false: plain HTTP to anyone")
	fs.StringVar(&o.shardRing, "shard-ring", "", "run sharded: every replica with the same ring name takes a share of the namespaces (KEP-5866 sharded list and watch, membership in Leases); incompatible with --leader-elect")
	fs.IntVar(&o.shardWeight, "shard-weight", 1, "this replica's weight in the shard ring")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 15*time.Second, "leader-election and shard Lease duration")
	fs.DurationVar(&o.renewDeadline, "renew-deadline", 10*time.Second, "leader-election and shard renew deadline")
	fs.DurationVar(&o.retryPeriod, "retry-period", 2*time.Second, "leader-election and shard retry period")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gc [flags]\n\nReports (or, with --delete, deletes) objects whose owners are all gone.\n\nFlags:")
		fs.PrintDefaults()
	}
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
	if o.leaderElect && o.shardRing != "" {
		return o, errors.New("--leader-elect and --shard-ring do not go together: a sharded replica acts on its share")
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
		fmt.Fprintln(os.Stderr, "gc:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gc:", err)
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
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	log, syncLog := newLogger(stderr, o.verbose)
	defer syncLog()
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		return err
	}
	rules := kubeconfig.NewDefaultLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	res, err := kubeconfig.Resolve(rules, kubeconfig.Overrides{Context: o.context})
	if err != nil {
		return err
	}
	cfg := res.Config
	cfg.UserAgent = "kdyn-example-gc"
	cfg.Metrics = m.REST()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Leader election and ring membership have a client of their own:
	// their requests never wait behind the collector's (its rate limit,
	// its connection), so a cut or a slow path is noticed in time.
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.UserAgent = cfg.UserAgent + "/leases"
	lc, err := dynamic.NewForConfig(leaseCfg)
	if err != nil {
		return err
	}
	mp, err := restmapper.NewForConfig(cfg)
	if err != nil {
		return err
	}

	// With --shard-ring, this replica caches and checks the namespaces
	// its share of the ring covers (cluster-scoped objects have namespace
	// "" and go to one member); the share is empty until the member joins.
	var sh *informer.Shard
	if o.shardRing != "" {
		if sh, err = informer.NewShard(informer.ShardByNamespace); err != nil {
			return err
		}
	}
	c := newCollector(dc.Metadata(), mp, o.delete, sh, stdout, log)
	check := func(ctx context.Context, uid types.UID) (controller.Result, error) {
		err := c.process(ctx, uid)
		if errors.Is(err, errOwnerNotObserved) {
			log.V(4).Info("retrying: owner not cached yet", "uid", string(uid))
		}
		return controller.Result{}, err
	}
	ctrl, err := controller.New("gc", check, controller.Options[types.UID]{
		Workers: o.workers,
		// client-go's default, with a 30 s cap instead of 1000 s: a
		// dependent waiting for its owner to be cached is retried soon.
		RateLimiter: workqueue.NewMaxOfRateLimiter[types.UID](
			workqueue.NewItemExponentialRateLimiter[types.UID](50*time.Millisecond, 30*time.Second),
			workqueue.NewBucketRateLimiter[types.UID](10, 100),
		),
		Metrics:      m.Controller(),
		QueueMetrics: m.WorkQueue(),
		Logger:       log,
		Owns:         c.owns,
	})
	if err != nil {
		return err
	}
	c.queue = ctrl

	f := informer.NewFactory(dc, informer.FactoryOptions{Logger: log, Metrics: m.Informer()})
	set := informer.NewResourceSet(f, mp, informer.ResourceSetOptions{
		Keep: c.keep,
		// Compact: the collector reads its own graph, never the caches,
		// so they keep each object's metadata encoded (a third of the heap).
		Informer: informer.InformerOptions{Namespace: o.namespace, Shard: sh, Compact: true},
		// Resources it may not list (or that do not answer) are reported,
		// and the check goes on with the others.
		SyncTimeout: syncTimeout,
		OnSyncError: func(err error) { log.Info("a resource did not sync; checking the others", "error", err) },
		OnDiscoveryError: func(err error) {
			if ctx.Err() != nil {
				return // stopping: the refresh was cut short
			}
			log.Info("discovery failed; keeping the resources already watched", "error", err)
		},
		Logger: log,
	})
	if err := ctrl.Watch(controller.WatchesSet(set, c.keys)); err != nil {
		return err
	}
	mo := controller.ManagerOptions{BindAddress: o.metricsAddress, MetricsHandler: metrics.Handler(reg), Logger: log}
	if o.metricsSecure {
		mo.SecureMetrics = &controller.SecureMetrics{Client: dc}
	}
	if o.leaderElect {
		mo.LeaderElection = &controller.LeaderElection{
			Client:    lc,
			Namespace: o.leaseNamespace, Name: "kdyn-example-gc", Identity: o.identity, ReleaseOnCancel: true, WarmStandby: o.warmStandby,
			LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
			Metrics: m.LeaderElection(),
		}
	}
	mgr, err := controller.NewManager(mo)
	if err != nil {
		return err
	}
	if o.leaderElect {
		c.leading = mgr.IsLeader
	}
	rec, err := events.New(dc, events.Options{ReportingController: "kdyn.io/example-gc", ReportingInstance: o.identity, Logger: log, Metrics: m.Events()})
	if err != nil {
		return err
	}
	c.events = rec
	// The recorder runs in every replica (only the acting one records),
	// and flushes what is queued when it stops.
	mgr.Add(rec)
	mgr.AddCache(f)
	mgr.AddCache(set)
	mgr.Add(ctrl)
	mgr.Add(controller.RunnableFunc(func(ctx context.Context) error {
		objects, _ := c.graph.Size()
		c.println(fmt.Sprintf("synced %d resources, %d objects", len(set.Resources()), objects))
		c.follow(ctx, set, o.resync)
		return nil
	}))
	if sh != nil {
		member, err := shard.New(lc, shard.Options{
			Namespace: o.leaseNamespace, Ring: o.shardRing, Identity: o.identity, Weight: o.shardWeight,
			LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
			Shard: sh, Drainers: []shard.Drainer{ctrl}, Logger: log,
		})
		if err != nil {
			return err
		}
		mgr.Add(member)
	}
	if o.metricsAddress != "" {
		go func() {
			if addr := mgr.Addr(ctx); addr != nil {
				log.V(1).Info("serving metrics and probes", "address", addr.String())
			}
		}()
	}
	return mgr.Run(ctx)
}

// follow forgets the objects of resources that leave the set (their
// informers stop without delete events) and queues every dependent again
// each resync period, until ctx is done.
func (c *collector) follow(ctx context.Context, set *informer.ResourceSet, resync time.Duration) {
	known := map[schema.GroupVersionResource]bool{}
	for _, gvr := range set.Resources() {
		known[gvr] = true
	}
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	full := time.NewTicker(resync)
	defer full.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-full.C:
			c.resync()
		case <-poll.C:
			now := map[schema.GroupVersionResource]bool{}
			for _, gvr := range set.Resources() {
				now[gvr] = true
			}
			for gvr := range known {
				if !now[gvr] {
					c.forgetResource(gvr)
				}
			}
			known = now
		}
	}
}
