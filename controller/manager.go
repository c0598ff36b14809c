package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

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
// once, in every replica, with no HTTP server, and gives everything 60 s to
// stop.
type ManagerOptions struct {
	// BindAddress, when set (":8080", "127.0.0.1:0"), serves /metrics,
	// /healthz and /readyz there — one address, like controller-runtime's
	// --metrics-bind-address and --health-probe-bind-address in one.
	BindAddress string
	// MetricsHandler serves /metrics (metrics.Handler(registry)); nil
	// serves 404 there.
	MetricsHandler http.Handler
	// SecureMetrics, when set, serves BindAddress over TLS and /metrics
	// only to callers the API server authorizes (see SecureMetrics); nil
	// serves plain HTTP to anyone who can reach the address.
	SecureMetrics *SecureMetrics
	// LeaderElection, when set, runs the controllers only while this
	// replica leads. A standby replica runs no caches: it stands for the
	// Lease first and fills its caches once it leads, so only the leader
	// holds the cluster's objects in memory (LeaderElection.WarmStandby
	// fills them in every replica, for a faster hand-over). Losing
	// leadership stops the controllers and makes Run return an error
	// wrapping leaderelection.ErrLeadershipLost: exit and let the
	// Deployment restart the replica, as client-go's controllers do.
	LeaderElection *LeaderElection
	// ShutdownTimeout bounds how long Run waits, once ctx is done, for
	// everything it started to stop: the controllers (for four fifths of
	// it at most), then the runnables that run in every replica, then the
	// caches. What has not stopped by then is named in Run's error and
	// left running. Zero means 60 s.
	ShutdownTimeout time.Duration
	// Logger receives the manager's logs (and the election's); the zero
	// value logs nothing.
	Logger logr.Logger
}

// LeaderElection configures the Manager's election, on a
// coordination.k8s.io/v1 Lease (see package leaderelection, whose defaults
// and rules apply). The Manager starts and stops the controllers with the
// term: there are no callbacks to set.
type LeaderElection struct {
	// Client carries the election's requests. Give it a client of its
	// own, built from the same rest.Config as the controllers' (the
	// election then never waits behind their requests); required.
	Client dynamic.Interface
	// Namespace, Name and Identity name the Lease and this candidate;
	// required.
	Namespace, Name, Identity string
	// LeaseDuration, RenewDeadline, RetryPeriod and RequestTimeout are
	// leaderelection.Config's; zero means its defaults (15 s, 10 s, 2 s,
	// RenewDeadline/4).
	LeaseDuration, RenewDeadline, RetryPeriod, RequestTimeout time.Duration
	// ReleaseOnCancel gives the Lease up when the term ends, once every
	// controller has stopped, so that another replica takes over at once.
	ReleaseOnCancel bool
	// WarmStandby runs the caches in every replica from the start, so a
	// replica that takes over has them synced already and starts its
	// controllers at once; it costs every standby the memory and the
	// API server the watches of a full cache. False (the default) starts
	// the caches only once this replica leads: a standby costs little,
	// and a new leader starts its controllers after one sync.
	WarmStandby bool
	// HealthGrace is the grace of the leader-election liveness check (see
	// leaderelection.Elector.HealthCheck); zero means 20 s.
	HealthGrace time.Duration
	// OnNewLeader, if set, is told the identity of each new holder.
	OnNewLeader func(identity string)
	// Metrics, if set, is told when this replica starts and stops leading.
	Metrics leaderelection.Metrics
}

// Manager runs a controller process: its caches (in the replica that
// leads, or in every replica with LeaderElection.WarmStandby), its
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
	opts ManagerOptions
	log  logr.Logger

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

// NewManager returns a Manager. It checks the options (with leader
// election, the election's too) and makes no request.
func NewManager(opts ManagerOptions) (*Manager, error) {
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 60 * time.Second
	}
	m := &Manager{opts: opts, log: opts.Logger, healthz: map[string]Check{}, readyz: map[string]Check{}, addrReady: make(chan struct{})}
	if sm := opts.SecureMetrics; sm != nil {
		if sm.Client == nil {
			return nil, errors.New("controller: ManagerOptions.SecureMetrics.Client is nil: the reviews of callers' tokens need a client")
		}
		if (sm.CertFile == "") != (sm.KeyFile == "") {
			return nil, errors.New("controller: ManagerOptions.SecureMetrics: CertFile and KeyFile go together")
		}
	}
	if opts.LeaderElection != nil {
		le := *opts.LeaderElection
		m.opts.LeaderElection = &le
		if le.Client == nil {
			return nil, errors.New("controller: ManagerOptions.LeaderElection.Client is nil: the election needs a client (one of its own)")
		}
		if le.HealthGrace <= 0 {
			m.opts.LeaderElection.HealthGrace = 20 * time.Second
		}
		// Checked now; Run makes the elector it runs.
		if _, err := leaderelection.New(le.Client, m.electionConfig(func(context.Context) {})); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
	}
	return m, nil
}

// electionConfig is the leaderelection.Config of the Manager's election,
// with lead as OnStartedLeading.
func (m *Manager) electionConfig(lead func(context.Context)) leaderelection.Config {
	le := m.opts.LeaderElection
	return leaderelection.Config{
		Namespace: le.Namespace, Name: le.Name, Identity: le.Identity,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod, RequestTimeout: le.RequestTimeout,
		ReleaseOnCancel: le.ReleaseOnCancel, Logger: m.log, Metrics: le.Metrics,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: lead,
			OnStoppedLeading: func() {
				m.log.V(1).Info("stopped leading; the controllers have stopped", "lease", le.Namespace+"/"+le.Name)
			},
			OnNewLeader: le.OnNewLeader,
		},
	}
}

// AddCache adds a cache: run from the start (with leader election, once
// this replica leads, unless LeaderElection.WarmStandby); controllers
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
// the probes, runs the runnables that need no leader and the caches (with
// leader election, once leading, unless WarmStandby), waits for the caches
// to sync, and then runs the controllers (while leading, with leader
// election). On the way out it stops the controllers first —
// they finish the reconciles in flight — then the runnables that run in
// every replica (an events.Recorder flushes what they recorded), then the
// caches and the server. It returns once all of them have stopped; if
// ShutdownTimeout passes first, it returns an error naming each one still
// running, and leaves them (with leader election, a Lease is released only
// once the controllers have stopped, so one still running keeps it until
// it expires). Otherwise it returns nil when ctx ended it, the error of a
// cache that failed to sync or of a runnable that failed, or an error
// wrapping leaderelection.ErrLeadershipLost.
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
	var tasks tasks
	var failed firstError
	fail := func(err error) {
		if failed.set(err) {
			stop()
		}
	}

	srv, err := m.serve()
	if err != nil {
		return err
	}
	cacheCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCaches()
	startCaches := func() {
		for i, c := range caches {
			tasks.start(describe(c, "cache", i), func() error { return c.Run(cacheCtx) }, fail)
		}
	}
	le := m.opts.LeaderElection
	if le == nil || le.WarmStandby {
		startCaches()
	}
	// Runnables that need no leader run beside the caches, and stop after
	// the controllers.
	alwaysCtx, stopAlways := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAlways()
	for i, r := range always {
		tasks.start(describe(r, "runnable in every replica", i), func() error { return r.Run(alwaysCtx) }, fail)
	}
	leading := func(lctx context.Context) error { return runAll(lctx, runnables, &tasks) }
	controllers := tasks.start("the controllers", func() error {
		switch {
		case le == nil:
			return m.runSynced(ctx, caches, leading)
		case le.WarmStandby:
			return m.runSynced(ctx, caches, func(ctx context.Context) error { return m.lead(ctx, leading) })
		}
		// A cold standby: the caches start with the term (and stop
		// with Run, after the controllers, as warm ones do).
		return m.lead(ctx, func(lctx context.Context) error {
			startCaches()
			return m.runSynced(lctx, caches, leading)
		})
	}, fail)

	select {
	case <-ctx.Done():
	case <-controllers.done:
	}
	// Stop: the controllers (and the election), then the runnables that run
	// in every replica, then the caches, all within ShutdownTimeout.
	// The controllers get four fifths of the time, so that the others
	// (which stop quickly once told) are stopped in order even when a
	// controller overruns.
	deadline := time.Now().Add(m.opts.ShutdownTimeout)
	stop()
	controllers.wait(deadline.Add(-m.opts.ShutdownTimeout / 5))
	stopAlways()
	tasks.waitAll(deadline, "runnable in every replica")
	stopCaches()
	tasks.waitAll(deadline, "cache")
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
	}
	if still := tasks.running(); len(still) > 0 {
		err := fmt.Errorf("controller: ShutdownTimeout %v passed and these have not stopped; Run returns without them: %s",
			m.opts.ShutdownTimeout, strings.Join(still, ", "))
		m.log.Error(err, "the manager abandons what did not stop")
		return errors.Join(failed.get(), err)
	}
	return failed.get()
}

// lead stands for election and runs leading while this replica leads; a
// failure of leading ends the election.
func (m *Manager) lead(ctx context.Context, leading func(context.Context) error) error {
	le := m.opts.LeaderElection
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var leadErr firstError
	e, err := leaderelection.New(le.Client, m.electionConfig(func(lctx context.Context) {
		m.log.V(1).Info("leading; starting the controllers", "lease", le.Namespace+"/"+le.Name, "identity", le.Identity)
		if leadErr.set(leading(lctx)) {
			cancel()
		}
	}))
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	m.mu.Lock()
	m.elector = e
	m.healthz["leaderElection"] = e.HealthCheck(le.HealthGrace).Check
	m.mu.Unlock()
	err = e.Run(ctx)
	if lerr := leadErr.get(); lerr != nil {
		return lerr
	}
	return err
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
	m.log.V(1).Info("caches synced", "caches", len(caches))
	return run(ctx)
}

// runAll runs every runnable until ctx is done, or until one fails; it
// returns once all have returned and ctx is done (a runnable that ends
// early does not end the others), or, with a runnable's error, once the
// others have stopped too. Each runs as one of ts.
func runAll(ctx context.Context, rs []Runnable, ts *tasks) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var failed firstError
	var started []*task
	for i, r := range rs {
		started = append(started, ts.start(describe(r, "runnable", i), func() error { return r.Run(ctx) }, func(err error) {
			if failed.set(err) {
				cancel()
			}
		}))
	}
	<-ctx.Done()
	for _, t := range started {
		<-t.done
	}
	return failed.get()
}

// describe names a runnable or cache for Run's error: its Name() when it
// has one (a Controller), else its type and place.
func describe(r any, what string, i int) string {
	if n, ok := r.(interface{ Name() string }); ok {
		return fmt.Sprintf("%s %q", what, n.Name())
	}
	return fmt.Sprintf("%s %d (%T)", what, i, r)
}

// task is one goroutine of Run.
type task struct {
	name string
	done chan struct{}
}

// wait waits for t until deadline; it reports whether t ended.
func (t *task) wait(deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-t.done:
		return true
	case <-timer.C:
		return false
	}
}

// tasks are the goroutines Run started, for a bounded shutdown that names
// what did not stop.
type tasks struct {
	mu  sync.Mutex
	all []*task
}

// start runs f in a goroutine named name, reporting its error to fail.
func (ts *tasks) start(name string, f func() error, fail func(error)) *task {
	t := &task{name: name, done: make(chan struct{})}
	ts.mu.Lock()
	ts.all = append(ts.all, t)
	ts.mu.Unlock()
	go func() {
		defer close(t.done)
		if err := f(); err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
	}()
	return t
}

// waitAll waits, until deadline, for the tasks whose name starts with
// prefix.
func (ts *tasks) waitAll(deadline time.Time, prefix string) {
	ts.mu.Lock()
	all := slices.Clone(ts.all)
	ts.mu.Unlock()
	for _, t := range all {
		if strings.HasPrefix(t.name, prefix) && !t.wait(deadline) {
			return
		}
	}
}

// running names the tasks that have not ended.
func (ts *tasks) running() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, t := range ts.all {
		select {
		case <-t.done:
		default:
			out = append(out, t.name)
		}
	}
	return out
}

// firstError keeps the first error set.
type firstError struct {
	mu  sync.Mutex
	err error
}

// set records err if it is the first; it reports whether it was.
func (f *firstError) set(err error) bool {
	if err == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return false
	}
	f.err = err
	return true
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
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
	metricsHandler := m.opts.MetricsHandler
	scheme := "http"
	if sm := m.opts.SecureMetrics; sm != nil {
		cfg, err := sm.tlsConfig(ln.Addr().String())
		if err != nil {
			ln.Close()
			close(m.addrReady)
			return nil, fmt.Errorf("controller: %w", err)
		}
		ln = tls.NewListener(ln, cfg)
		scheme = "https"
		if metricsHandler != nil {
			metricsHandler = newAuthorizing(metricsHandler, apiReviewer{sm.Client}, sm.CacheTTL)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", m.checks(func() map[string]Check { return m.healthz }, nil))
	mux.Handle("/readyz", m.checks(func() map[string]Check { return m.readyz }, m.ready))
	if metricsHandler != nil {
		mux.Handle("/metrics", metricsHandler)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		// TLS handshake failures and the like, at V(1) rather than on
		// the process's stderr.
		ErrorLog: log.New(logWriter{m.log.V(1)}, "", 0)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error(err, "the metrics and probe server stopped")
		}
	}()
	m.mu.Lock()
	m.addr = ln.Addr()
	m.mu.Unlock()
	close(m.addrReady)
	m.log.V(1).Info("serving /metrics, /healthz and /readyz", "address", ln.Addr().String(), "scheme", scheme)
	return srv, nil
}

// ready is the built-in readiness: caches synced and, with leader
// election, leading.
func (m *Manager) ready(*http.Request) error {
	if !m.IsLeader() {
		return errors.New("not leading")
	}
	if !m.synced.Load() {
		return errors.New("caches not synced")
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

// logWriter is an io.Writer onto a logr.Logger, one line per write, for
// the standard library's *log.Logger.
type logWriter struct{ l logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Info(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
