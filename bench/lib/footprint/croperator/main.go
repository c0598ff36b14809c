// Command croperator runs the operator of crcache/examples/secretsync on a
// controller-runtime v0.25.3 manager, for the crcache scenario of
// bench/cmd/libbench: the same operator on one of four caches, chosen with
// --cache:
//
//   - default: controller-runtime's cache as it comes (cache.Options{});
//   - strip: its cache with DefaultTransform:
//     cache.TransformStripManagedFields();
//   - kdyn: crcache.New (kdyn's informers, managedFields stripped, objects
//     decoded in the store);
//   - kdyn-compact: crcache.NewWith(crcache.Options{Compact: true}) (objects
//     kept as JSON, decoded on each read).
//
// The manager is as kubebuilder scaffolds it (ctrl.GetConfigOrDie, so
// --kubeconfig and no client-side rate limit), less the metrics server
// (BindAddress "0"), leader election and health probes.
//
// On stdout it prints "synced" once the manager's cache has synced the
// operator's three informers (ConfigMaps, Secrets, the metadata of
// Namespaces), and "reconciled n=... ago_us=... cpu_us=..." once it has
// reconciled at least --sources times and then nothing for a second: n
// reconciles, the last ago_us microseconds before the line, when the
// process had used cpu_us of CPU. It reads commands on stdin, one a line,
// and answers each with one line on stdout:
//
//   - "stats": "stats reconciles=... creates=... updates=... cpu_us=...
//     peak_heap=... peak_live=...": the operator's counters, the process's
//     CPU (getrusage, user+system) and the largest heap (runtime/metrics
//     /memory/classes/heap/objects:bytes, garbage included) and live heap
//     (/gc/heap/live:bytes, as of the last GC) seen since the start,
//     sampled every 10 ms;
//   - "cpuprofile PATH" and "cpuprofile stop": start and stop a CPU
//     profile ("cpuprofile started", "cpuprofile stopped" or "cpuprofile
//     error=...");
//   - "heapprofile PATH": collect garbage and write a heap profile
//     ("heapprofile written" or "heapprofile error=...").
//
// Built with -tags heapprobe it links examples/gc/heapprobe (SIGUSR1: live
// heap after a GC on stderr; SIGUSR2: heap profile).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kdyn/kdyn/crcache"
	"github.com/kdyn/kdyn/crcache/examples/secretsync"
)

// Caches are the values of --cache.
var Caches = []string{"default", "strip", "kdyn", "kdyn-compact"}

// quietFor is how long the operator must reconcile nothing, after
// --sources reconciles, for its initial reconciles to count as done.
const quietFor = time.Second

func main() {
	which := flag.String("cache", "default", "the manager's cache: "+strings.Join(Caches, ", "))
	sources := flag.Int("sources", 0, "how many source ConfigMaps there are: the initial reconciles are done after at least that many and then a second without one")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	opts, err := managerOptions(*which)
	if err != nil {
		fmt.Fprintln(os.Stderr, "croperator:", err)
		os.Exit(2)
	}
	if err := run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts, *sources, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "croperator:", err)
		os.Exit(1)
	}
}

// managerOptions returns the manager's options for a --cache value.
func managerOptions(which string) (manager.Options, error) {
	o := manager.Options{Metrics: metricsserver.Options{BindAddress: "0"}}
	switch which {
	case "default":
	case "strip":
		o.Cache = cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
	case "kdyn":
		o.NewCache = crcache.New
	case "kdyn-compact":
		o.NewCache = crcache.NewWith(crcache.Options{Compact: true})
	default:
		return o, fmt.Errorf("--cache %q: want one of %s", which, strings.Join(Caches, ", "))
	}
	return o, nil
}

// run runs the operator until ctx is done, answering commands from in.
func run(ctx context.Context, cfg *rest.Config, opts manager.Options, sources int, in io.Reader, out io.Writer) error {
	cfg.UserAgent = "croperator"
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	r := &secretsync.Reconciler{}
	if err := r.Setup(ctx, mgr); err != nil {
		return err
	}
	o := &output{w: out}
	peaks := samplePeaks(ctx)
	go serve(in, o, r, peaks)
	if err := mgr.Add(reporter{mgr: mgr, r: r, sources: sources, out: o}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// output serializes lines on stdout.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *output) printf(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.w, format+"\n", a...)
}

// reporter prints the synced and reconciled lines. It runs in every
// replica (no leader election here anyway), after the caches have
// started.
type reporter struct {
	mgr     manager.Manager
	r       *secretsync.Reconciler
	sources int
	out     *output
}

func (reporter) NeedLeaderElection() bool { return false }

// Start waits for the operator's informers to sync (GetInformer blocks
// until then; they are the ones its controller watches), prints synced,
// then waits for the initial reconciles.
func (p reporter) Start(ctx context.Context) error {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	c := p.mgr.GetCache()
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, ns} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return nil
	}
	p.out.printf("synced configmaps, secrets, namespaces (metadata)")

	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	last, lastAt, lastCPU := p.r.Reconciles.Load(), time.Now(), cpuTime()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n := p.r.Reconciles.Load()
		if n != last {
			last, lastAt, lastCPU = n, time.Now(), cpuTime()
			continue
		}
		if n >= int64(p.sources) && time.Since(lastAt) >= quietFor {
			p.out.printf("reconciled n=%d creates=%d updates=%d ago_us=%d cpu_us=%d", n, p.r.Creates.Load(), p.r.Updates.Load(), time.Since(lastAt).Microseconds(), lastCPU.Microseconds())
			return nil
		}
	}
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peaks are the largest heap figures sampled so far.
type peaks struct{ heap, live atomic.Uint64 }

// samplePeaks samples the heap every 10 ms until ctx is done.
func samplePeaks(ctx context.Context) *peaks {
	p := &peaks{}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() {
		metrics.Read(s)
		for i, v := range []*atomic.Uint64{&p.heap, &p.live} {
			if s[i].Value.Kind() != metrics.KindUint64 {
				continue
			}
			if x := s[i].Value.Uint64(); x > v.Load() {
				v.Store(x)
			}
		}
	}
	read()
	go func() {
		for ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
			read()
		}
	}()
	return p
}

// serve answers the commands read from in until it ends.
func serve(in io.Reader, o *output, r *secretsync.Reconciler, pk *peaks) {
	s := bufio.NewScanner(in)
	var prof *os.File
	for s.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(s.Text()), " ")
		switch {
		case cmd == "stats":
			o.printf("stats reconciles=%d creates=%d updates=%d cpu_us=%d peak_heap=%d peak_live=%d",
				r.Reconciles.Load(), r.Creates.Load(), r.Updates.Load(), cpuTime().Microseconds(), pk.heap.Load(), pk.live.Load())
		case cmd == "cpuprofile" && arg == "stop":
			if prof == nil {
				o.printf("cpuprofile error=not profiling")
				continue
			}
			pprof.StopCPUProfile()
			err := prof.Close()
			prof = nil
			if err != nil {
				o.printf("cpuprofile error=%v", err)
				continue
			}
			o.printf("cpuprofile stopped")
		case cmd == "heapprofile" && arg != "":
			if err := writeHeapProfile(arg); err != nil {
				o.printf("heapprofile error=%v", err)
				continue
			}
			o.printf("heapprofile written")
		case cmd == "cpuprofile" && arg != "":
			f, err := startCPUProfile(arg, prof != nil)
			if err != nil {
				o.printf("cpuprofile error=%v", err)
				continue
			}
			prof = f
			o.printf("cpuprofile started")
		default:
			o.printf("error unknown command %q", s.Text())
		}
	}
}

// startCPUProfile starts a CPU profile written to path.
func startCPUProfile(path string, running bool) (*os.File, error) {
	if running {
		return nil, fmt.Errorf("already profiling")
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeHeapProfile writes the heap profile, as of a collection made now,
// to path.
func writeHeapProfile(path string) error {
	runtime.GC()
	var b strings.Builder // the profile is gzipped: bytes, not text
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
