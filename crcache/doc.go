// Package crcache is a controller-runtime cache (sigs.k8s.io/controller-runtime
// v0.25 cache.Cache) on kdyn's informers, so an existing operator gets kdyn's
// memory and sync speed by changing one line:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{NewCache: crcache.New})
//
// It lives in a Go module of its own so that kdyn's core stays free of
// client-go and controller-runtime.
package crcache
