package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/leaderelection"
)

// Runnable is anything with kdyn's lifecycle: Run returns once ctx is done
// and everything it started has ended (Controller, informer.Factory,
// informer.ResourceSet, workqueue users of your own).
type Runnable interface {
	Run(ctx context.Context) error
}

// RunnableFunc is a function as a Runnable.
type RunnableFunc func(ctx context.Context) error

// Run calls f.
func (f RunnableFunc) Run(ctx context.Context) error { return f(ctx) }

// LeaderElectionRunnable is a Runnable that says whether it runs only
// while the replica leads (controller-runtime's convention): one that
// returns false runs in every replica from the start, as shard.Member
// does.
type LeaderElectionRunnable interface {
	Runnable
	NeedLeaderElection() bool
}

// Cache is a Runnable the Manager waits for before it starts controllers:
// informer.Factory and informer.ResourceSet are caches.
type Cache interface {
	Runnable
	WaitForSync(ctx context.Context) error
}

// Check is a health or readiness check: nil means healthy.
type Check func(*http.Request) error

// ManagerOptions configure a Manager. The zero value runs controllers at
// once, in every replica, with no HTTP server.
type ManagerOptions struct {
	// BindAddress, when set (":8080", "127.0.0.1:0"), serves /metrics,
	// /healthz and /readyz there — one address, like controller-runtime's
	// --metrics-bind-address and --health-probe-bind-address in one.
	BindAddress string
	// MetricsHandler serves /metrics (metrics.Handler(registry)); nil
	// serves 404 there.
	MetricsHandler http.Handler
	// LeaderElection, when set, runs the controllers only while this
	// replica leads (caches run in every replica, so a new leader starts
	// warm). Its Callbacks must be empty: the Manager sets them. Losing
	// leadership stops the controllers and makes Run return an error
	// wrapping leaderelection.ErrLeadershipLost: exit and let the
	// Deployment restart the replica, as client-go's controllers do.
	LeaderElection *leaderelection.Config
	// LeaderElectionGrace is the grace of the leader-election liveness
	// check (see leaderelection.Elector.HealthCheck); zero means 20 s.
	LeaderElectionGrace time.Duration
	// ShutdownTimeout bounds how long Run waits, once ctx is done, for
	// controllers and caches to stop; zero means 60 s.
	ShutdownTimeout time.Duration
	// Logger receives the manager's logs; nil means none.
	Logger *zap.Logger
}

// Manager runs a controller process: its caches in every replica, its
// controllers in the one that leads once the caches have synced, and an
// HTTP server for metrics and probes:
//
//   - /healthz (liveness) fails when a check added with AddHealthCheck
//     fails, or, with leader election, when this replica believes it leads
//     but has not renewed its Lease past LeaseDuration + grace;
//   - /readyz (readiness) succeeds once every cache has synced and, with
//     leader election, while this replica leads, and when every check
//     added with AddReadyCheck succeeds;
//   - /metrics serves ManagerOptions.MetricsHandler.
//
// Add caches, controllers and checks before Run. A Manager runs once.
type Manager struct {
	opts   ManagerOptions
	client dynamic.Interface
	log    *zap.Logger

	mu        sync.Mutex
	caches    []Cache
	runnables []Runnable
	healthz   map[string]Check
	readyz    map[string]Check
	ran       bool
	addr      net.Addr
	addrReady chan struct{}
	synced    atomic.Bool
	elector   *leaderelection.Elector
}

// NewManager returns a Manager; client is used for leader election (and
// may be nil without it). Give it a client of its own, not the one the
// controllers use: election requests must not wait behind theirs (the
// client-side rate limit, the connection) — see package leaderelection.
func NewManager(client dynamic.Interface, opts ManagerOptions) (*Manager, error) {
	if opts.LeaderElectionGrace <= 0 {
		opts.LeaderElectionGrace = 20 * time.Second
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 60 * time.Second
	}
	m := &Manager{opts: opts, client: client, log: opts.Logger, healthz: map[string]Check{}, readyz: map[string]Check{}, addrReady: make(chan struct{})}
	if m.log == nil {
		m.log = zap.NewNop()
	}
	if le := opts.LeaderElection; le != nil {
		if client == nil {
			return nil, errors.New("controller: leader election needs a client")
		}
		if le.Callbacks.OnStartedLeading != nil || le.Callbacks.OnStoppedLeading != nil {
			return nil, errors.New("controller: ManagerOptions.LeaderElection.Callbacks must be empty; the Manager sets them")
		}
	}
	return m, nil
}

// AddCache adds a cache: run in every replica from the start; controllers
// start once every cache's WaitForSync has returned nil.
func (m *Manager) AddCache(c Cache) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.caches = append(m.caches, c)
}

// Add adds a controller (or any Runnable) that runs only while this
// replica leads (always, without leader election), after the caches have
// synced — unless it is a LeaderElectionRunnable that needs no leader
// election, which runs from the start in every replica.
func (m *Manager) Add(r Runnable) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runnables = append(m.runnables, r)
}

// AddHealthCheck adds a liveness check, served at /healthz.
func (m *Manager) AddHealthCheck(name string, c Check) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.healthz[name] = c
}

// AddReadyCheck adds a readiness check, served at /readyz.
func (m *Manager) AddReadyCheck(name string, c Check) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.readyz[name] = c
}

// Addr returns the address the HTTP server listens on, once Run has opened
// it (for a BindAddress with port 0); nil without BindAddress. It waits
// until the server is listening or ctx is done.
func (m *Manager) Addr(ctx context.Context) net.Addr {
	select {
	case <-m.addrReady:
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

// IsLeader reports whether this replica leads at this moment, with a
// Lease whose renew deadline has not passed (leaderelection.Elector's
// IsLeader): the fence a controller checks right before a write. It is
// always true without leader election, and false with it until Run has
// won the election.
func (m *Manager) IsLeader() bool {
	if m.opts.LeaderElection == nil {
		return true
	}
	m.mu.Lock()
	e := m.elector
	m.mu.Unlock()
	return e != nil && e.IsLeader()
}

// Run runs the manager until ctx is done or leadership is lost: it serves
// the probes, runs the caches, waits for them to sync, and then runs the
// controllers (while leading, with leader election). On the way out it
// stops the controllers first — they finish the reconciles in flight —
// then the caches and the server, and returns once they all have stopped
// (or ShutdownTimeout passed). It returns nil when ctx ended it, the
// error of a cache that failed to sync, or an error wrapping
// leaderelection.ErrLeadershipLost.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.ran {
		m.mu.Unlock()
		return errors.New("controller: Manager.Run called twice")
	}
	m.ran = true
	caches := slices.Clone(m.caches)
	var runnables, always []Runnable
	for _, r := range m.runnables {
		if le, ok := r.(LeaderElectionRunnable); ok && !le.NeedLeaderElection() {
			always = append(always, r)
		} else {
			runnables = append(runnables, r)
		}
	}
	m.mu.Unlock()

	ctx, stop := context.WithCancel(ctx)
	defer stop()

	var elector *leaderelection.Elector
	leading := func(lctx context.Context) error { return runAll(lctx, runnables) }
	var leadErr error
	var leadMu sync.Mutex
	if le := m.opts.LeaderElection; le != nil {
		cfg := *le
		cfg.Callbacks.OnStartedLeading = func(lctx context.Context) {
			m.log.Info("leading; starting the controllers", zap.String("lease", cfg.Namespace+"/"+cfg.Name), zap.String("identity", cfg.Identity))
			if err := leading(lctx); err != nil {
				leadMu.Lock()
				leadErr = err
				leadMu.Unlock()
				stop()
			}
		}
		cfg.Callbacks.OnStoppedLeading = func() {
			m.log.Info("stopped leading; the controllers have stopped", zap.String("lease", cfg.Namespace+"/"+cfg.Name))
		}
		var err error
		if elector, err = leaderelection.New(m.client, cfg); err != nil {
			return err
		}
		m.mu.Lock()
		m.elector = elector
		m.healthz["leaderElection"] = elector.HealthCheck(m.opts.LeaderElectionGrace).Check
		m.mu.Unlock()
	}

	srv, err := m.serve()
	if err != nil {
		return err
	}

	var caching errgroup.Group
	cacheCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCaches()
	for _, c := range caches {
		caching.Go(func() error { return c.Run(cacheCtx) })
	}
	// Runnables that need no leader run beside the caches, and stop with
	// the controllers.
	var alwaysRunning errgroup.Group
	for _, r := range always {
		alwaysRunning.Go(func() error { return r.Run(ctx) })
	}

	runErr := m.runSynced(ctx, caches, func(ctx context.Context) error {
		if elector == nil {
			return leading(ctx)
		}
		err := elector.Run(ctx)
		leadMu.Lock()
		defer leadMu.Unlock()
		if leadErr != nil {
			return leadErr
		}
		return err
	})

	// Controllers have stopped (runSynced returned); now the runnables
	// that run in every replica, the caches, then the server.
	stop()
	if err := alwaysRunning.Wait(); err != nil && runErr == nil {
		runErr = err
	}
	stopCaches()
	done := make(chan error, 1)
	go func() { done <- caching.Wait() }()
	select {
	case err := <-done:
		if err != nil && runErr == nil {
			runErr = err
		}
	case <-time.After(m.opts.ShutdownTimeout):
		m.log.Warn("caches did not stop within the shutdown timeout", zap.Duration("timeout", m.opts.ShutdownTimeout))
	}
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	return runErr
}

// runSynced waits for every cache to sync, then calls run.
func (m *Manager) runSynced(ctx context.Context, caches []Cache, run func(context.Context) error) error {
	for _, c := range caches {
		if err := c.WaitForSync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("controller: a cache did not sync: %w", err)
		}
	}
	m.synced.Store(true)
	m.log.Info("caches synced", zap.Int("caches", len(caches)))
	return run(ctx)
}

// runAll runs every runnable until ctx is done, or until one fails; it
// returns once all have returned and ctx is done (a runnable that ends
// early does not end the others), or at once with a runnable's error.
func runAll(ctx context.Context, rs []Runnable) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, r := range rs {
		g.Go(func() error { return r.Run(gctx) })
	}
	g.Go(func() error {
		<-gctx.Done()
		return nil
	})
	return g.Wait()
}

// serve starts the probe and metrics server, if any.
func (m *Manager) serve() (*http.Server, error) {
	if m.opts.BindAddress == "" {
		close(m.addrReady)
		return nil, nil
	}
	ln, err := net.Listen("tcp", m.opts.BindAddress)
	if err != nil {
		close(m.addrReady)
		return nil, fmt.Errorf("controller: serve metrics and probes on %s: %w", m.opts.BindAddress, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", m.checks(func() map[string]Check { return m.healthz }, nil))
	mux.Handle("/readyz", m.checks(func() map[string]Check { return m.readyz }, m.ready))
	if m.opts.MetricsHandler != nil {
		mux.Handle("/metrics", m.opts.MetricsHandler)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error("the metrics and probe server stopped", zap.Error(err))
		}
	}()
	m.mu.Lock()
	m.addr = ln.Addr()
	m.mu.Unlock()
	close(m.addrReady)
	m.log.Info("serving /metrics, /healthz and /readyz", zap.String("address", ln.Addr().String()))
	return srv, nil
}

// ready is the built-in readiness: caches synced and, with leader
// election, leading.
func (m *Manager) ready(*http.Request) error {
	if !m.synced.Load() {
		return errors.New("caches not synced")
	}
	if !m.IsLeader() {
		return errors.New("not leading")
	}
	return nil
}

// checks serves a probe: 200 "ok" when builtin (if any) and every check
// pass, else 500 with each failure; ?verbose lists every check.
func (m *Manager) checks(list func() map[string]Check, builtin Check) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		cs := map[string]Check{}
		for name, c := range list() {
			cs[name] = c
		}
		m.mu.Unlock()
		if builtin != nil {
			cs["manager"] = builtin
		}
		names := make([]string, 0, len(cs))
		for name := range cs {
			names = append(names, name)
		}
		sort.Strings(names)
		var b strings.Builder
		failed := false
		for _, name := range names {
			if err := cs[name](r); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", name, err)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", name)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, b.String())
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprint(w, b.String())
		}
		fmt.Fprint(w, "ok")
	})
}
