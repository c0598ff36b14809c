// Command libbench measures kdyn against client-go v0.37.2 side by side on
// one real control plane and prints a table per scenario.
//
//	go run ./cmd/libbench [-scenario all|discovery|mapper|dynamic|informer|footprint|controller|load] [-quick]
//	go run ./cmd/libbench -scenario shard|scale|gc|crcache [-quick]
//
// shard, scale, gc and crcache are not part of "all": each starts a
// control plane of its own (shard and scale with the ShardedListAndWatch
// feature gate on; see bench/lib).
//
// Memory figures come from child processes (the same binary re-executed
// with the hidden -child flag), one per contender.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kdyn/kdyn/bench/lib"
)

func main() {
	testing.Init() // testing.Benchmark is used programmatically
	scenario := flag.String("scenario", "all", "all, or a comma list of: discovery, mapper, dynamic, informer, footprint, controller, load; or, alone and never part of all: shard (1 vs 4 sharded members over 40,000 ConfigMaps), scale (metadata-only caches at 10k, 50k, 250k objects), gc (examples/gc vs the same collector on controller-runtime, 10,000 ConfigMaps + 5,000 owned Secrets), crcache (crcache/examples/secretsync on controller-runtime's cache and on crcache, 10,000 and 100,000 objects)")
	quick := flag.Bool("quick", false, "small counts for a fast smoke run (1,000 objects, 20 CRDs, short phases)")
	runs := flag.Int("runs", 0, "timing repetitions, median reported (0: 5, or 3 with -quick; gc: 2 with -quick; crcache: 3 rounds at up to 10,000 objects, else 2, and 2 with -quick)")
	profile := flag.String("profile", "", "directory for CPU/heap profiles of the informer children (gc: a heap profile of each collector at steady state; crcache: CPU and heap profiles of a run of each cache of its own)")
	parts := flag.String("informer-parts", "", "informer scenario parts to run: a comma list of sync, relist, watch (default all)")
	contenders := flag.String("informer-contenders", "", "informer contenders to run: a comma list of kdyn-default, kdyn-compact, kdyn-metadata, clientgo-plain, clientgo-strip, clientgo-metadata (default all)")
	scaleSizes := flag.String("scale-sizes", "", "the object counts of the scale scenario (default 10000,50000,250000) or of crcache (default 10000,100000), a comma list in increasing order")
	child := flag.String(lib.ChildFlag, "", "internal: run one child measurement")
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if len(f.Name) > 5 && f.Name[:5] == "test." {
			f.Usage = "" // testing's flags are not ours
		}
	})
	flag.Parse()
	if *child != "" {
		if err := lib.RunChild(*child); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var sizes []int
	for _, f := range strings.FieldsFunc(*scaleSizes, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(sizes) > 0 && n <= sizes[len(sizes)-1]) {
			fmt.Fprintf(os.Stderr, "libbench: -scale-sizes %q: want positive counts in increasing order\n", *scaleSizes)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := lib.Run(ctx, lib.Options{Scenario: *scenario, Quick: *quick, Runs: *runs, ProfileDir: *profile, InformerParts: *parts, InformerContenders: *contenders, ScaleSizes: sizes}); err != nil {
		fmt.Fprintln(os.Stderr, "libbench:", err)
		os.Exit(1)
	}
}
