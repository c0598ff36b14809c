//go:build heapprobe

// The heap probe of bench/lib's gc scenario (package heapprobe), linked
// into examples/gc only with -tags heapprobe.

package main

import _ "github.com/kdyn/kdyn/examples/gc/heapprobe"
