//go:build linux && !race

package rest

// afterQuietRead has nothing to do outside race builds.
func afterQuietRead(uintptr, []byte) {}

// beforeQuietWrite has nothing to do outside race builds.
func beforeQuietWrite(uintptr, []byte) {}
