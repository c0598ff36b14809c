// Package heapprobe is the probe the gc scenario of bench/lib links into
// both collectors it compares (examples/gc and the same collector on
// controller-runtime), by a blank import from a file built only with -tags
// heapprobe, so that the binary whose size the scenario reports is built
// without it. On SIGUSR1 the process collects garbage and writes its live
// heap to stderr as one line, "heapprobe: live=<runtime.MemStats.HeapAlloc>";
// on SIGUSR2 it writes a heap profile (runtime/pprof) to the file
// $HEAPPROBE_PROFILE names and "heapprobe: profile=<path>" to stderr. With
// $HEAPPROBE_PROFILE set, the heap is sampled every 64 KiB allocated
// instead of 512 KiB, for a finer profile. With $HEAPPROBE_CPUPROFILE set,
// a CPU profile from the start to the first signal is written there.
package heapprobe

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
)

func init() {
	if os.Getenv("HEAPPROBE_PROFILE") != "" {
		runtime.MemProfileRate = 64 << 10
	}
	stopCPU := startCPUProfile(os.Getenv("HEAPPROBE_CPUPROFILE"))
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sig {
			stopCPU()
			if s == syscall.SIGUSR1 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				fmt.Fprintf(os.Stderr, "heapprobe: live=%d\n", ms.HeapAlloc)
				continue
			}
			path := os.Getenv("HEAPPROBE_PROFILE")
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(os.Stderr, "heapprobe: profile error=%v\n", err)
				continue
			}
			fmt.Fprintf(os.Stderr, "heapprobe: profile=%s\n", path)
		}
	}()
}

// writeHeapProfile collects garbage (so that the profile's in-use figures
// are those of that collection) and writes the heap profile to path.
func writeHeapProfile(path string) error {
	if path == "" {
		return fmt.Errorf("HEAPPROBE_PROFILE is not set")
	}
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// startCPUProfile profiles the CPU into path from now on ("" profiles
// nothing); the function it returns ends the profile (once).
func startCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "heapprobe: cpu profile error=%v\n", err)
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		})
	}
}
