package shard_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/shard"
)

// memberEnv makes the test binary run as a ring member (memberMain)
// instead of running tests; the other SHARD_* variables configure it.
const memberEnv = "KDYN_SHARD_MEMBER"

// memberMain is a sharded controller in its own process: a ring member
// whose informer caches its share of the namespace's ConfigMaps and whose
// controller reconciles them, writing a ledger line as each reconcile
// starts and ends ("start|end KEY RESOURCEVERSION UNIXNANO").
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
	note := func(what, key, rv string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(ledger, "%s %s %s %d\n", what, key, rv, time.Now().UnixNano())
	}
	sh, err := informer.NewShard(informer.ShardByUID)
	if err != nil {
		return fail(err)
	}
	f := informer.NewFactory(c, informer.FactoryOptions{Namespace: ns})
	inf := f.ForResource(cmGVR, informer.InformerOptions{Shard: sh})
	ctrl, err := controller.New("ledger", func(ctx context.Context, key string) (controller.Result, error) {
		obj, ok := inf.Store().Get(key)
		if !ok {
			return controller.Result{}, nil
		}
		note("start", key, obj.GetResourceVersion())
		time.Sleep(20 * time.Millisecond) // a reconcile takes a while
		note("end", key, obj.GetResourceVersion())
		return controller.Result{}, nil
	}, controller.Options[string]{Workers: 4, Owns: func(key string) bool {
		obj, ok := inf.Store().Get(key)
		return ok && sh.Contains(obj)
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
	m, err := shard.New(c, shard.Options{Namespace: ns, Ring: ring, Identity: id,
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 300 * time.Millisecond,
		Process: shard.Process(sh, ctrl)})
	if err != nil {
		return fail(err)
	}
	mgr, err := controller.NewManager(c, controller.ManagerOptions{})
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
