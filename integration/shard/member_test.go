package shard_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/rest"
	"github.com/kdyn/kdyn/shard"
)

// memberEnv makes the test binary run as a ring member (memberMain)
// instead of running tests; the other SHARD_* variables configure it.
const memberEnv = "KDYN_SHARD_MEMBER"

// memberMain is a sharded controller in its own process: a ring member
// whose informer caches its share of the namespace's ConfigMaps and whose
// controller reconciles them. Each reconcile checks the member's fence as
// it begins and again before its effect, which here is the ledger line
// that ends it, as a controller checks it before a write; each line
// carries the time of that check (CLOCK_MONOTONIC ns, testenv.MonoNow):
// "start KEY RESOURCEVERSION MONO" as it begins, then "end …" when the
// fence still held, or "abort …" (with the time the fence failed) when it
// did not and the reconcile gave up. Each write of the member's Lease adds
// "renew RENEWTIME - MONO": the renewTime it carries (Unix ns) and when it
// was sent.
// So a ledger interval, start to end, is when the member acted on a key
// under its fence.
func memberMain() int {
	ns, ring, id, ledgerPath := os.Getenv("SHARD_NS"), os.Getenv("SHARD_RING"), os.Getenv("SHARD_ID"), os.Getenv("SHARD_LEDGER")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "member:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	res, err := kubeconfig.Resolve(nil, kubeconfig.Overrides{})
	if err != nil {
		return fail(err)
	}
	c, err := dynamic.NewForConfig(res.Config)
	if err != nil {
		return fail(err)
	}
	ledger, err := os.OpenFile(ledgerPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fail(err)
	}
	defer ledger.Close()
	var mu sync.Mutex
	note := func(what, key, rv string, at int64) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(ledger, "%s %s %s %d\n", what, key, rv, at)
	}
	sh, err := informer.NewShard(informer.ShardByUID)
	if err != nil {
		return fail(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{Namespace: ns})
	inf := f.ForResource(cmGVR, informer.InformerOptions{Shard: sh})
	fence := func(o *unstructured.Unstructured) bool { return sh.Holds(o) }
	ctrl, err := controller.New("ledger", func(ctx context.Context, key string) (controller.Result, error) {
		obj, ok := inf.Store().Get(key)
		// Each line carries the time read just before the fence check it
		// follows, so that a pause between the check and the line does not
		// move the line's time past the check; on CLOCK_MONOTONIC, which
		// the fence counts with and all processes share.
		at := testenv.MonoNow()
		if !ok || !fence(obj) {
			return controller.Result{}, nil
		}
		rv := obj.GetResourceVersion()
		note("start", key, rv, at)
		select { // a reconcile takes a while
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			note("abort", key, rv, testenv.MonoNow())
			return controller.Result{}, ctx.Err()
		}
		at = testenv.MonoNow()
		if !fence(obj) {
			note("abort", key, rv, at)
			return controller.Result{}, nil
		}
		note("end", key, rv, at)
		return controller.Result{}, nil
	}, controller.Options[string]{Workers: 4, Owns: func(key string) bool {
		obj, ok := inf.Store().Get(key)
		return ok && sh.Holds(obj)
	}})
	if err != nil {
		return fail(err)
	}
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(o *unstructured.Unstructured, _ bool) { ctrl.Add(informer.Key(o)) },
		UpdateFunc: func(_, o *unstructured.Unstructured) { ctrl.Add(informer.Key(o)) },
	}); err != nil {
		return fail(err)
	}
	// Membership has a client of its own: its requests never wait behind
	// the informers' and reconciles' (rate limit, connection).
	lcfg := rest.CopyConfig(res.Config)
	lcfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		// each Lease write is noted with the renewTime it carries (Unix
		// ns, the wall clock) and the moment it is sent on the ledger's
		// clock, so that the test can date the renewals the server recorded
		return testenv.OnLeaseWrites(rt, func(renewTime, sent time.Time) {
			// on the ledger's clock: MonoNow read first, so a stall
			// before time.Since can only date the renewal earlier
			mono := testenv.MonoNow()
			note("renew", strconv.FormatInt(renewTime.UnixNano(), 10), "-", mono-int64(time.Since(sent)))
		})
	}
	lc, err := dynamic.NewForConfig(lcfg)
	if err != nil {
		return fail(err)
	}
	m, err := shard.New(lc, shard.Options{Namespace: ns, Ring: ring, Identity: id,
		LeaseDuration: memberLeaseDuration, RenewDeadline: memberRenewDeadline, RetryPeriod: memberRetryPeriod,
		Shard: sh, Drainers: []shard.Drainer{ctrl}})
	if err != nil {
		return fail(err)
	}
	mgr, err := controller.NewManager(controller.ManagerOptions{})
	if err != nil {
		return fail(err)
	}
	mgr.AddCache(f)
	mgr.Add(ctrl)
	mgr.Add(m)
	if err := mgr.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}
