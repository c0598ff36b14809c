package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/informer/workqueue"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/restmapper"
)

// syncTimeout bounds the wait for the first list of every resource.
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

// newLogger logs to w: info and above, or everything with -v.
func newLogger(w io.Writer, verbose bool) *zap.Logger {
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	enc := zap.NewDevelopmentEncoderConfig()
	enc.CallerKey = ""
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), level))
}

// run is the controller; it returns when ctx is done and every goroutine
// it started has exited.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	rules := kubeconfig.NewDefaultLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	res, err := kubeconfig.Resolve(rules, kubeconfig.Overrides{Context: o.context})
	if err != nil {
		return err
	}
	cfg := res.Config
	cfg.UserAgent = "kdyn-example-gc"
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mp, err := restmapper.NewForConfig(cfg)
	if err != nil {
		return err
	}
	log := newLogger(stderr, o.verbose)
	defer func() { _ = log.Sync() }()

	q := workqueue.New(workqueue.Options[types.UID]{
		Name: "gc",
		// client-go's default, with a 30 s cap instead of 1000 s: a
		// dependent waiting for its owner to be cached is retried soon.
		RateLimiter: workqueue.NewMaxOfRateLimiter[types.UID](
			workqueue.NewItemExponentialRateLimiter[types.UID](50*time.Millisecond, 30*time.Second),
			workqueue.NewBucketRateLimiter[types.UID](10, 100),
		),
	})
	c := newCollector(dc.Metadata(), mp, q, o.delete, stdout, log)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := informer.NewFactory(dc, informer.FactoryOptions{Logger: log})
	set := informer.NewResourceSet(f, mp, informer.ResourceSetOptions{
		Keep:     c.keep,
		Handler:  c.handle,
		Informer: informer.InformerOptions{Namespace: o.namespace},
		OnDiscoveryError: func(err error) {
			if ctx.Err() != nil {
				return // stopping: the refresh was cut short
			}
			log.Warn("discovery failed; keeping the resources already watched", zap.Error(err))
		},
		Logger: log,
	})
	var wg sync.WaitGroup
	defer func() {
		cancel()
		q.ShutDown()
		wg.Wait()
	}()
	wg.Go(func() { _ = f.Run(ctx) })
	wg.Go(func() {
		if err := set.Run(ctx); err != nil {
			log.Error("resource set stopped", zap.Error(err))
			cancel()
		}
	})

	syncCtx, syncCancel := context.WithTimeout(ctx, syncTimeout)
	err = set.WaitForSync(syncCtx)
	syncCancel()
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		log.Warn("some resources did not sync; checking the others", zap.Error(err))
	}
	objects, _ := c.graph.size()
	c.println(fmt.Sprintf("synced %d resources, %d objects", len(set.Resources()), objects))

	wg.Go(func() { c.follow(ctx, set, o.resync) })
	return q.Run(ctx, o.workers, func(ctx context.Context, uid types.UID) error {
		err := c.process(ctx, uid)
		switch {
		case err == nil, ctx.Err() != nil:
		case errors.Is(err, errOwnerNotObserved):
			log.Debug("retrying: owner not cached yet", zap.String("uid", string(uid)))
		default:
			log.Warn("check failed; retrying with backoff", zap.String("uid", string(uid)), zap.Error(err))
		}
		return err
	})
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
