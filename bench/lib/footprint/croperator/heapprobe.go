//go:build heapprobe

// The heap probe of bench/lib's crcache scenario, linked into the operator
// only with -tags heapprobe (as crgc's).

package main

import _ "github.com/kdyn/kdyn/examples/gc/heapprobe"
