package faults_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/informer"
	"github.com/kdyn/kdyn/integration/faultproxy"
	"github.com/kdyn/kdyn/integration/testenv"
	"github.com/kdyn/kdyn/rest"
)

var (
	cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nsGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// informerUA is the user agent of the informers under test, so the
// proxy's records tell their requests from the CLI's.
const informerUA = "faults-informer"

// rig is one scenario's setting: a control plane, a fault proxy in front
// of it, a client that writes straight to the server (never through the
// proxy), and a fresh namespace.
type rig struct {
	env    *testenv.Env
	proxy  *faultproxy.Proxy
	direct *dynamic.DynamicClient
	ns     string
}

func newRig(t *testing.T, env *testenv.Env) *rig {
	t.Helper()
	p := faultproxy.NewForTest(t, faultproxy.Options{Upstream: env.Host(), UpstreamCAData: env.CAData()})
	cfg := env.RESTConfig(testenv.Admin)
	cfg.QPS = -1
	direct, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{env: env, proxy: p, direct: direct}
	r.ns = fmt.Sprintf("faults-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), rand.IntN(100_000))
	if len(r.ns) > 63 {
		r.ns = r.ns[len(r.ns)-63:]
		r.ns = strings.TrimLeft(r.ns, "-")
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": r.ns}}}
	if _, err := direct.Resource(nsGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// proxied returns a REST config that reaches the server through the proxy.
func (r *rig) proxied() *rest.Config {
	c := r.proxy.RESTConfig(r.env.RESTConfig(testenv.Admin))
	c.UserAgent = informerUA
	return c
}

// version is one object as some observer knows it.
type version struct {
	RV string // resourceVersion
	V  string // data.v
}

type state map[string]version // "namespace/name" → version

func versionOf(o metav1.Object, u *unstructured.Unstructured) version {
	v, _, _ := unstructured.NestedString(u.Object, "data", "v")
	return version{RV: o.GetResourceVersion(), V: v}
}

// serverState lists the namespace fresh from the server, directly.
func (r *rig) serverState(ctx context.Context) (state, error) {
	l, err := r.direct.Resource(cmGVR).Namespace(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := state{}
	for i := range l.Items {
		o := &l.Items[i]
		out[informer.Key(o)] = versionOf(o, o)
	}
	return out, nil
}

func rvNum(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// model is a handler that keeps its own view of the namespace from the
// events alone, and notes every event that contradicts what it saw before.
type model struct {
	mu         sync.Mutex
	objs       state
	lastRV     map[string]uint64          // highest resourceVersion seen per key, deletes included
	seen       map[string]map[string]bool // key → resourceVersions delivered by add/update
	inferred   map[string]bool            // keys delivered as deletes with FinalStateUnknown
	adds       int
	updates    int
	deletes    int
	tombstones int
	uidChanges int // updates whose old and new objects have different UIDs (deleted and recreated)
	problems   []string
}

func newModel() *model {
	return &model{objs: state{}, lastRV: map[string]uint64{}, seen: map[string]map[string]bool{}, inferred: map[string]bool{}}
}

func (m *model) problem(format string, args ...any) {
	if len(m.problems) < 20 {
		m.problems = append(m.problems, fmt.Sprintf(format, args...))
	}
}

func (m *model) note(key, rv string) {
	if m.seen[key] == nil {
		m.seen[key] = map[string]bool{}
	}
	m.seen[key][rv] = true
	if n := rvNum(rv); n > m.lastRV[key] {
		m.lastRV[key] = n
	}
}

func (m *model) handler() informer.HandlerFuncs[*unstructured.Unstructured] {
	return informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(o *unstructured.Unstructured, _ bool) {
			m.mu.Lock()
			defer m.mu.Unlock()
			key := informer.Key(o)
			m.adds++
			if _, ok := m.objs[key]; ok {
				m.problem("ADD of %s@%s, which is already cached", key, o.GetResourceVersion())
			}
			if n := rvNum(o.GetResourceVersion()); n <= m.lastRV[key] {
				m.problem("ADD of %s@%s after resourceVersion %d", key, o.GetResourceVersion(), m.lastRV[key])
			}
			m.objs[key] = versionOf(o, o)
			m.note(key, o.GetResourceVersion())
		},
		UpdateFunc: func(old, o *unstructured.Unstructured) {
			m.mu.Lock()
			defer m.mu.Unlock()
			key := informer.Key(o)
			m.updates++
			cur, ok := m.objs[key]
			switch {
			case !ok:
				m.problem("UPDATE of %s@%s, which is not cached", key, o.GetResourceVersion())
			case cur.RV != old.GetResourceVersion():
				m.problem("UPDATE of %s: old is @%s, the last delivered was @%s", key, old.GetResourceVersion(), cur.RV)
			}
			if old.GetUID() != o.GetUID() {
				m.uidChanges++
			}
			if rvNum(o.GetResourceVersion()) <= rvNum(old.GetResourceVersion()) {
				m.problem("UPDATE of %s from @%s to the older or equal @%s", key, old.GetResourceVersion(), o.GetResourceVersion())
			}
			m.objs[key] = versionOf(o, o)
			m.note(key, o.GetResourceVersion())
		},
		DeleteFunc: func(d informer.Deleted[*unstructured.Unstructured]) {
			m.mu.Lock()
			defer m.mu.Unlock()
			key := informer.Key(d.Obj)
			m.deletes++
			if d.FinalStateUnknown {
				m.tombstones++
				m.inferred[key] = true
			}
			cur, ok := m.objs[key]
			if !ok {
				m.problem("DELETE of %s, which is not cached", key)
			} else if rvNum(d.Obj.GetResourceVersion()) < rvNum(cur.RV) {
				m.problem("DELETE of %s carries @%s, older than the last delivered @%s", key, d.Obj.GetResourceVersion(), cur.RV)
			}
			delete(m.objs, key)
			if n := rvNum(d.Obj.GetResourceVersion()); n > m.lastRV[key] {
				m.lastRV[key] = n
			}
		},
	}
}

// tombstoned reports whether key was delivered as a delete inferred from a
// relist.
func (m *model) tombstoned(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inferred[key]
}

func (m *model) snapshot() (state, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(state, len(m.objs))
	for k, v := range m.objs {
		out[k] = v
	}
	return out, append([]string(nil), m.problems...)
}

// counts returns the events delivered so far.
func (m *model) counts() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := fmt.Sprintf("%d adds, %d updates, %d deletes (%d inferred from a relist)", m.adds, m.updates, m.deletes, m.tombstones)
	if m.uidChanges > 0 {
		s += fmt.Sprintf(", %d updates between different UIDs (recreated during a gap)", m.uidChanges)
	}
	return s
}

// watched is an informer under test, running through the proxy.
type watched struct {
	inf   *informer.Informer[*unstructured.Unstructured]
	model *model
	logs  *observer.ObservedLogs
	log   logr.Logger
	errs  *errorLog
}

// errorLog collects what Options.OnWatchError receives.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (e *errorLog) add(err error) {
	e.mu.Lock()
	e.errs = append(e.errs, err)
	e.mu.Unlock()
}

func (e *errorLog) list() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// startInformer runs an informer of the rig's ConfigMaps through the proxy
// (informer.New over informer.NewResourceSource), with a model handler and an
// observed logger, and waits for its first sync.
func startInformer(t *testing.T, r *rig, opts informer.Options[*unstructured.Unstructured]) *watched {
	t.Helper()
	core, logs := observer.New(zapcore.Level(-127))
	w := &watched{model: newModel(), logs: logs, log: zapr.NewLogger(zap.New(core)), errs: &errorLog{}}
	cfg := r.proxied()
	cfg.Logger = w.log
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = w.log
	opts.OnWatchError = w.errs.add
	w.inf = informer.New(informer.NewResourceSource(dynamic.New(rc).Resource(cmGVR).Namespace(r.ns), informer.SourceOptions{KeepManagedFields: true}), opts)
	if _, err := w.inf.AddEventHandler(w.model.handler()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the informer did not stop within 20s")
		}
		rc.HTTPClient().CloseIdleConnections()
	})
	sctx, scancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer scancel()
	if err := w.inf.WaitForSync(sctx); err != nil {
		t.Fatal(err)
	}
	awaitPlainWatch(t, r)
	return w
}

// startFactoryInformer is startInformer through an informer.Factory (which
// strips managedFields and shares informers by resource).
func startFactoryInformer(t *testing.T, r *rig) *watched {
	t.Helper()
	core, logs := observer.New(zapcore.Level(-127))
	w := &watched{model: newModel(), logs: logs, log: zapr.NewLogger(zap.New(core)), errs: &errorLog{}}
	cfg := r.proxied()
	cfg.Logger = w.log
	rc, err := rest.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informer.NewFactory(dynamic.New(rc), informer.FactoryOptions{Namespace: r.ns, Logger: w.log})
	w.inf = f.ForResource(cmGVR, informer.InformerOptions{})
	if _, err := w.inf.AddEventHandler(w.model.handler()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		rc.HTTPClient().CloseIdleConnections()
	})
	sctx, scancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer scancel()
	if err := f.WaitForSync(sctx); err != nil {
		t.Fatal(err)
	}
	awaitPlainWatch(t, r)
	return w
}

// awaitPlainWatch waits until the informer holds an open watch that is not
// its initial streaming list. An informer that synced over a bulk or
// compressed stream ends it at the initial-events-end bookmark and sends a
// new watch request; a fault set up while that request is in flight would
// meet it before its connection is cut (a 429 the client never reads, for
// example), which is not the scenario the tests describe.
func awaitPlainWatch(t *testing.T, r *rig) {
	t.Helper()
	eventually(t, 20*time.Second, "the informer watching after its sync", func() string {
		for _, rec := range r.proxy.Records() {
			if rec.UserAgent == informerUA && rec.Watch && rec.End.IsZero() && rec.Status == http.StatusOK &&
				queryParam(rec.Query, "sendInitialEvents") != "true" {
				return ""
			}
		}
		return "no open watch without sendInitialEvents"
	})
}

func (w *watched) cacheState() state {
	out := state{}
	for _, o := range w.inf.Store().List() {
		out[informer.Key(o)] = versionOf(o, o)
	}
	return out
}

// converge waits (at most within) until the informer's cache and its
// handler's model both equal a fresh list from the server, and fails the
// test with the differences otherwise. It also fails on any event the
// model found out of order.
func converge(t *testing.T, r *rig, w *watched, within time.Duration) {
	t.Helper()
	eventually(t, within, "informer cache and handler model equal the server", func() string {
		want, err := r.serverState(t.Context())
		if err != nil {
			return err.Error()
		}
		got := w.cacheState()
		view, _ := w.model.snapshot()
		if d := cmp.Diff(want, got); d != "" {
			return "cache (-server +cache):\n" + d
		}
		if d := cmp.Diff(want, view); d != "" {
			return "handler model (-server +model):\n" + d
		}
		return ""
	})
	if _, problems := w.model.snapshot(); len(problems) > 0 {
		t.Errorf("events out of order:\n%s", strings.Join(problems, "\n"))
	}
}

// eventually polls check every 100 ms until it returns "" or within has
// passed, and then fails the test with check's last answer.
func eventually(t *testing.T, within time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) || t.Context().Err() != nil {
			t.Fatalf("%s: not within %v:\n%s", what, within, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writes records what the direct writer did: every resourceVersion its
// creates and updates produced.
type writes struct {
	mu                       sync.Mutex
	rvs                      map[string][]string
	creates, updates, delete int
}

func newWrites() *writes { return &writes{rvs: map[string][]string{}} }

func (w *writes) add(key, rv string, create bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rvs[key] = append(w.rvs[key], rv)
	if create {
		w.creates++
	} else {
		w.updates++
	}
}

func (w *writes) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d creates, %d updates, %d deletes", w.creates, w.updates, w.delete)
}

// missing returns the resourceVersions the writer produced that seen does
// not hold, as "key@rv", at most 10.
func (w *writes) missing(seen func(key, rv string) bool) (n int, sample []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.rvs))
	for k := range w.rvs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, rv := range w.rvs[k] {
			if !seen(k, rv) {
				n++
				if len(sample) < 10 {
					sample = append(sample, k+"@"+rv)
				}
			}
		}
	}
	return n, sample
}

func configMap(ns, name, v string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"v": v}}}
}

// churnOptions shape a churn.
type churnOptions struct {
	workers int
	// updates per worker; each worker also creates and deletes objects
	// among its own names as it goes.
	updates int
	// names per worker.
	names  int
	prefix string
	// pace, when set, sleeps between operations of a worker.
	pace time.Duration
}

// churn runs workers that create, update and delete ConfigMaps straight on
// the server. Each worker owns its names, so there are no conflicts. It
// returns when every worker is done.
func churn(t *testing.T, r *rig, o churnOptions, w *writes) {
	t.Helper()
	cms := r.direct.Resource(cmGVR).Namespace(r.ns)
	salt := rand.IntN(1_000_000) // every update changes the object, even over an earlier churn
	var wg sync.WaitGroup
	for wk := 0; wk < o.workers; wk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := t.Context()
			exists := make([]bool, o.names)
			// Start from what the server has, so deletes also hit objects
			// the watchers already know.
			for d := range exists {
				_, err := cms.Get(ctx, fmt.Sprintf("%s-%02d-%d", o.prefix, wk, d), metav1.GetOptions{})
				exists[d] = err == nil
			}
			updates := 0
			for i := 0; updates < o.updates && i < 10*o.updates+10; i++ {
				if ctx.Err() != nil {
					return
				}
				d := i % o.names
				name := fmt.Sprintf("%s-%02d-%d", o.prefix, wk, d)
				key := r.ns + "/" + name
				val := fmt.Sprintf("%s-%d-%d-%d", o.prefix, wk, i, salt)
				switch {
				case !exists[d]:
					obj, err := cms.Create(ctx, configMap(r.ns, name, val), metav1.CreateOptions{})
					if err != nil {
						t.Errorf("create %s: %v", name, err)
						return
					}
					exists[d] = true
					w.add(key, obj.GetResourceVersion(), true)
				case i%13 == 7:
					if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Errorf("delete %s: %v", name, err)
						return
					}
					exists[d] = false
					w.mu.Lock()
					w.delete++
					w.mu.Unlock()
				default:
					obj, err := cms.Patch(ctx, name, "application/merge-patch+json", []byte(`{"data":{"v":"`+val+`"}}`), metav1.PatchOptions{})
					if err != nil {
						t.Errorf("update %s: %v", name, err)
						return
					}
					updates++
					w.add(key, obj.GetResourceVersion(), false)
				}
				if o.pace > 0 {
					time.Sleep(o.pace)
				}
			}
		}()
	}
	wg.Wait()
}

// every runs f every d in a goroutine, at most max times, until the
// returned stop is called; stop returns how many times f ran.
func every(d time.Duration, max int, f func()) (stop func() int) {
	quit := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		t := time.NewTicker(d)
		defer t.Stop()
		for n < max {
			select {
			case <-quit:
				done <- n
				return
			case <-t.C:
				f()
				n++
			}
		}
		<-quit
		done <- n
	}()
	return func() int {
		close(quit)
		return <-done
	}
}
