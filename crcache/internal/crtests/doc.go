// Package crtests is where crcache's suite test compiles
// controller-runtime's own pkg/cache tests (read from the module cache at
// test time and laid over this directory with go test -overlay), with
// cache.New replaced by crcache.New. It has no code of its own; deps.go
// records the tests' imports in crcache's go.mod.
package crtests
