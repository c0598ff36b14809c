// Command clibench benchmarks the kdyn CLI against kubectl v0.37.2 on a
// real control plane, side by side in one run, and prints a table of
// medians with the targets met or missed. Run it from the bench module:
//
//	go run ./cmd/clibench          # 10,000 + 2,000 ConfigMaps, 5 repetitions
//	go run ./cmd/clibench -quick   # 1,000 + 200 ConfigMaps, 2 repetitions
//	go run ./cmd/clibench -profile /tmp/prof   # also CPU/alloc profiles
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kdyn/kdyn/bench/cli"
)

func main() {
	var o cli.Options
	quick := flag.Bool("quick", false, "Smoke run: 1,000 objects (and 200), 2 repetitions.")
	flag.IntVar(&o.Objects, "objects", 0, "ConfigMaps in the main namespace (default 10000, 1000 with -quick).")
	flag.IntVar(&o.Small, "small", 0, "ConfigMaps in the second namespace, for -o jsonl's flat memory (default objects/5).")
	flag.IntVar(&o.Reps, "reps", 0, "Repetitions of each command; medians are reported (default 5, 2 with -quick).")
	flag.IntVar(&o.Workers, "workers", 16, "Parallel creates while seeding.")
	flag.IntVar(&o.ApplyObjects, "apply-objects", 0, "ConfigMaps each tool applies, in -apply-files files (default 1000; negative: skip the apply cases).")
	flag.IntVar(&o.ApplyFiles, "apply-files", 0, "Files the -apply-objects are spread over (default 50).")
	flag.StringVar(&o.Bin.Kdyn, "kdyn", "", "Prebuilt kdyn binary (default: build ../cmd/kdyn).")
	flag.StringVar(&o.Bin.Kubectl, "kubectl", "", "Prebuilt kubectl binary (default: build ./kubectl).")
	flag.StringVar(&o.WorkDir, "work", "", "Work directory (binaries, caches, outputs); default a temporary one.")
	flag.BoolVar(&o.Keep, "keep", false, "Keep the temporary work directory.")
	flag.StringVar(&o.ProfileDir, "profile", "", "Also write CPU and allocation profiles of both tools to this directory.")
	flag.BoolVar(&o.Verbose, "v", false, "Log every execution.")
	flag.Float64Var(&o.QuietIdle, "quiet-idle", 0.5, "Before each repetition, wait for the machine's CPU to be this idle (over 1 s)...")
	flag.DurationVar(&o.QuietWait, "quiet-wait", 15*time.Second, "...for at most this long (0 = do not wait).")
	timeout := flag.Duration("timeout", 30*time.Minute, "Give up after this long.")
	flag.Parse()
	if *quick {
		if o.Objects == 0 {
			o.Objects = 1000
		}
		if o.Reps == 0 {
			o.Reps = 2
		}
	}
	o.Log = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	start := time.Now()
	res, err := cli.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clibench:", err)
		os.Exit(1)
	}
	res.Print(os.Stdout)
	fmt.Fprintf(os.Stdout, "\n(total %s)\n", time.Since(start).Round(time.Second))
}
