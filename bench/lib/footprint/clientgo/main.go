// Command clientgo is the footprint probe for client-go: clientcmd, the
// dynamic client, a deferred discovery REST mapper and a dynamic informer
// factory, doing what the kdyn probe does.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
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
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	m := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	mapping, err := m.RESTMapping(schema.GroupKind{Kind: "ConfigMap"})
	if err != nil {
		return err
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, ns, nil)
	inf := f.ForResource(mapping.Resource).Informer()
	f.Start(ctx.Done())
	defer f.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("informer did not sync")
	}
	l, err := dc.Resource(mapping.Resource).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d cached, list returned %d\n", mapping.Resource, len(inf.GetStore().ListKeys()), len(l.Items))
	return nil
}
