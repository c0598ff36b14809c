package crcache_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kdyn/kdyn/crcache"
)

// An operator changes one line, its manager's NewCache:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// The manager then calls it as below and starts the cache before its
// controllers; a read before Start gets controller-runtime's error.
func Example() {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c, err := crcache.New(&rest.Config{Host: "https://127.0.0.1:6443"}, cache.Options{Mapper: mapper})
	if err != nil {
		fmt.Println(err)
		return
	}
	var cm corev1.ConfigMap
	err = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "settings"}, &cm)
	fmt.Println(err)
	// Output: the cache is not started, can not read objects
}

// Objects kept as the server's JSON text and decoded on each read (less
// memory, more CPU per read), with the managedFields controller-runtime's
// cache would keep.
func ExampleNewWith() {
	newCache := crcache.NewWith(crcache.Options{Compact: true, KeepManagedFields: true})
	_, err := newCache(&rest.Config{Host: "https://127.0.0.1:6443"}, cache.Options{Mapper: meta.NewDefaultRESTMapper(nil)})
	fmt.Println(err)
	// Output: <nil>
}
