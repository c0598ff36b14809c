package controller_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kdyn/kdyn/controller"
	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/workqueue"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A controller reconciles each key it is given; an error retries the key
// with per-key backoff, and Result.RequeueAfter comes back to it later.
// Here "b" fails once, then succeeds.
func ExampleController() {
	var (
		mu       sync.Mutex
		attempts = map[string]int{}
		done     = make(chan struct{})
	)
	reconcile := func(ctx context.Context, key string) (controller.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if key == "b" && attempts[key] == 1 {
			return controller.Result{}, errors.New("not yet")
		}
		if attempts["a"] == 1 && attempts["b"] == 2 {
			close(done)
		}
		return controller.Result{}, nil
	}
	c, err := controller.New("example", reconcile, controller.Options[string]{
		RateLimiter: workqueue.NewItemExponentialRateLimiter[string](time.Millisecond, time.Second),
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- c.Run(ctx) }()
	c.Add("a")
	c.Add("b")
	<-done
	cancel()
	fmt.Println(<-stopped)
	fmt.Println("a:", attempts["a"], "b:", attempts["b"])
	// Output:
	// <nil>
	// a: 1 b: 2
}

// Watch wires informers to the controller: a Widget's own key from For,
// and, through Owns, the key of the Widget that controls a ConfigMap
// (watched metadata-only). The reconcile reads the Widget from the cache.
func ExampleController_Watch() {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "web", "namespace": "prod", "uid": "w-1"}}}
	yes := true
	owned := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web-settings", "namespace": "prod", "ownerReferences": []any{
			map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": "web", "uid": "w-1", "controller": yes}}}}}
	client := fake.NewClient(widget, owned) // or dynamic.NewForConfig(cfg)
	f := informer.NewFactory(client, informer.FactoryOptions{})
	cache := f.ForResource(widgets, informer.InformerOptions{})

	var mu sync.Mutex
	seen := map[string]int{}
	ctrl, err := controller.New("widgets", func(ctx context.Context, key string) (controller.Result, error) {
		if _, ok := cache.Store().Get(key); ok {
			mu.Lock()
			seen[key]++
			mu.Unlock()
		}
		return controller.Result{}, nil
	}, controller.Options[string]{})
	if err != nil {
		panic(err)
	}
	if err := ctrl.Watch(
		controller.For(cache),
		controller.Owns(f.ForResourceMetadata(configMaps, informer.InformerOptions{}), schema.GroupKind{Group: "example.com", Kind: "Widget"}),
	); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var g sync.WaitGroup
	g.Go(func() { _ = f.Run(ctx) })
	g.Go(func() { _ = ctrl.Run(ctx) })
	for {
		mu.Lock()
		n := seen["prod/web"]
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	g.Wait()
	fmt.Println("reconciled prod/web")
	// Output:
	// reconciled prod/web
}
