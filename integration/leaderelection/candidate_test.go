package leaderelection_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/go-logr/zapr"
	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/kubeconfig"
	"github.com/kdyn/kdyn/leaderelection"
)

// The environment of a candidate process.
const (
	envCandidate  = "KDYN_LE_CANDIDATE"  // its identity; set, the binary is a candidate
	envKubeconfig = "KDYN_LE_KUBECONFIG" // the kubeconfig file to use
	envLease      = "KDYN_LE_LEASE"      // namespace/name
	envTiming     = "KDYN_LE_TIMING"     // LeaseDuration,RenewDeadline,RetryPeriod
)

// report is one line a candidate writes on stdout.
type report struct {
	ID   string `json:"id"`
	Ev   string `json:"ev"`   // ready, start, stop, lost
	Mono int64  `json:"mono"` // testenv.MonoNow()
	Wall int64  `json:"wall"` // Unix nanoseconds
	Err  string `json:"err,omitempty"`
}

// candidateMain is a candidate process: it stands for election until
// SIGTERM (then releases the lease and exits 0), standing again after a
// loss, and reports when it starts and stops leading. SIGKILL stops it
// without any of that, as a crash would.
func candidateMain(id string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "candidate:", err)
		return 2
	}
	var mu sync.Mutex
	emit := func(ev string, err error) {
		r := report{ID: id, Ev: ev, Mono: testenv.MonoNow(), Wall: time.Now().UnixNano()}
		if err != nil {
			r.Err = err.Error()
		}
		b, _ := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		_, _ = os.Stdout.Write(append(b, '\n')) // one write per line: whole lines in the pipe
	}

	ns, name, _ := strings.Cut(os.Getenv(envLease), "/")
	var ld, rd, rp time.Duration
	if _, err := fmt.Sscanf(os.Getenv(envTiming), "%d,%d,%d", &ld, &rd, &rp); err != nil {
		return fail(fmt.Errorf("%s: %w", envTiming, err))
	}
	res, err := kubeconfig.Resolve(&kubeconfig.LoadingRules{ExplicitPath: os.Getenv(envKubeconfig)}, kubeconfig.Overrides{})
	if err != nil {
		return fail(err)
	}
	client, err := dynamic.NewForConfig(res.Config)
	if err != nil {
		return fail(err)
	}
	log, err := zap.NewProduction() // JSON lines on stderr
	if err != nil {
		return fail(err)
	}
	e, err := leaderelection.New(client, leaderelection.Config{
		Namespace: ns, Name: name, Identity: id,
		LeaseDuration: ld, RenewDeadline: rd, RetryPeriod: rp,
		ReleaseOnCancel: true,
		Logger:          zapr.NewLogger(log),
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) {
			emit("start", nil)
			<-ctx.Done()
			emit("stop", nil)
		}},
	})
	if err != nil {
		return fail(err)
	}
	emit("ready", nil)
	for ctx.Err() == nil {
		if err := e.Run(ctx); err != nil {
			if !errors.Is(err, leaderelection.ErrLeadershipLost) {
				return fail(err)
			}
			emit("lost", err) // and stand again
		}
	}
	return 0
}
