// Command kdyn is the footprint probe for kdyn: kubeconfig, a dynamic
// client, a REST mapper and an informer factory, doing what a minimal
// controller does once: resolve a kind, sync an informer, list.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/restmapper"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := kubeconfig.Resolve(nil, kubeconfig.Overrides{})
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(res.Config)
	if err != nil {
		return err
	}
	m, err := restmapper.NewForConfig(res.Config)
	if err != nil {
		return err
	}
	mapping, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"})
	if err != nil {
		return err
	}
	f := informer.NewFactory(dc, informer.FactoryOptions{Namespace: res.Namespace})
	inf := f.ForResource(mapping.Resource, informer.InformerOptions{})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(runCtx)
	}()
	defer func() {
		stop()
		<-done
	}()
	if err := f.WaitForSync(ctx); err != nil {
		return err
	}
	l, err := dc.Resource(mapping.Resource).Namespace(res.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d cached, list returned %d\n", mapping.Resource, inf.Store().Len(), len(l.Items))
	return nil
}
