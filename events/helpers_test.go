package events

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
)

// fakeClock is a manual clock: time moves only on Step, which fires the
// timers whose deadline it reaches.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

var _ clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]struct{}{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) TimerAt(deadline time.Time) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, deadline: deadline, c: make(chan time.Time, 1)}
	if !deadline.After(c.now) {
		t.c <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	return t
}

// Step advances the clock by d and fires the timers now due.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.deadline.After(c.now) {
			delete(c.timers, t)
			t.c <- c.now
		}
	}
}

// pendingTimers counts the timers not yet fired.
func (c *fakeClock) pendingTimers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type fakeTimer struct {
	clock    *fakeClock
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	_, pending := t.clock.timers[t]
	delete(t.clock.timers, t)
	return pending
}

// liveness bounds how long a test waits for something that must happen
// promptly (a goroutine reacting); it never decides a measured figure.
const liveness = 10 * time.Second

// waitFor polls cond until it holds, failing the test if it does not.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// call is one write the recorder sent.
type call struct {
	verb, namespace, name string
	body                  map[string]any
}

// server is a dynamic/fake client that records the Event writes it is sent
// and fails those its fail function says.
type server struct {
	*fake.Client

	mu    sync.Mutex
	calls []call
	// fail, if set, is asked before each write; an error is returned
	// instead of writing.
	fail func(c call, n int) error
	// block, if set, makes every write wait until its context is done.
	block bool
}

func newServer() *server { return &server{Client: fake.NewClient()} }

func (s *server) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return serverNR{s.Client.Resource(gvr), s}
}

func (s *server) before(ctx context.Context, c call) error {
	if s.block {
		<-ctx.Done()
		return ctx.Err()
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	n, fail := len(s.calls), s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail(c, n)
	}
	return nil
}

// writes returns the writes so far.
func (s *server) writes() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]call(nil), s.calls...)
}

// verbs returns the verbs of the writes so far, in order.
func (s *server) verbs() []string {
	var v []string
	for _, c := range s.writes() {
		v = append(v, c.verb)
	}
	return v
}

// stored returns the Events stored, by name.
func (s *server) stored() []*unstructured.Unstructured {
	evs := s.Objects(GVR)
	sort.Slice(evs, func(i, j int) bool { return evs[i].GetName() < evs[j].GetName() })
	return evs
}

type serverNR struct {
	dynamic.NamespaceableResourceInterface
	s *server
}

func (r serverNR) Namespace(ns string) dynamic.ResourceInterface {
	return serverRI{r.NamespaceableResourceInterface.Namespace(ns), r.s, ns}
}

type serverRI struct {
	dynamic.ResourceInterface
	s  *server
	ns string
}

func (r serverRI) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := r.s.before(ctx, call{"create", r.ns, obj.GetName(), obj.DeepCopy().Object}); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Create(ctx, obj, opts, sub...)
}

func (r serverRI) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	if pt != types.StrategicMergePatchType {
		body["patchType"] = string(pt)
	}
	if err := r.s.before(ctx, call{"patch", r.ns, name, body}); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...)
}

// countingMetrics counts Dropped calls by reason.
type countingMetrics struct {
	mu      sync.Mutex
	dropped map[string]int
}

func (m *countingMetrics) Dropped(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dropped == nil {
		m.dropped = map[string]int{}
	}
	m.dropped[reason]++
}

func (m *countingMetrics) get() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.dropped {
		out[k] = v
	}
	return out
}

// testRecorder is a recorder on a fake clock whose sleeps between attempts
// return at once, recorded in sleeps.
type testRecorder struct {
	*Recorder
	clock  *fakeClock
	server *server
	sleeps *[]time.Duration
}

func newTestRecorder(t *testing.T, opts Options) testRecorder {
	t.Helper()
	if opts.ReportingController == "" {
		opts.ReportingController = "example.com/test"
	}
	if opts.ReportingInstance == "" {
		opts.ReportingInstance = "test-1"
	}
	c, s := newFakeClock(), newServer()
	var sleeps []time.Duration
	var mu sync.Mutex
	r, err := newRecorder(s, opts, c, func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, d)
		mu.Unlock()
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return testRecorder{r, c, s, &sleeps}
}

// process writes what is queued, as Run would, in the test's goroutine.
func (r testRecorder) process(ctx context.Context) {
	for {
		select {
		case o := <-r.queue:
			r.writer.record(ctx, o)
		default:
			return
		}
	}
}

// step advances the clock and does what is due then, as Run would.
func (r testRecorder) step(ctx context.Context, d time.Duration) {
	r.clock.Step(d)
	r.writer.runDue(ctx)
}

func pod(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	u.SetResourceVersion("7")
	return u
}
