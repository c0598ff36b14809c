package informer

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/rest"
)

// fakeClock is a manual clock: timers fire when Step moves time past them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  map[time.Duration]int // NewTimer and Reset calls by duration
	added  chan struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), armed: map[time.Duration]int{}, added: make(chan struct{}, 1000)}
}

type fakeTimer struct {
	clock    *fakeClock
	c        chan time.Time
	deadline time.Time
	d        time.Duration
	stopped  bool
	fired    bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.stopped && !t.fired
	t.stopped = true
	return was
}

func (t *fakeTimer) Reset(d time.Duration) {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-t.c:
	default:
	}
	t.deadline, t.d, t.stopped, t.fired = c.now.Add(d), d, false, false
	c.armed[d]++
	c.added <- struct{}{}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, c: make(chan time.Time, 1), deadline: c.now.Add(d), d: d}
	c.timers = append(c.timers, t)
	c.armed[d]++
	c.added <- struct{}{}
	return t
}

// Step advances time and fires due timers.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		if !t.stopped && !t.fired && !t.deadline.After(c.now) {
			t.fired = true
			t.c <- c.now
		}
	}
}

// armedTimers counts the timers of duration d ever created or reset.
func (c *fakeClock) armedTimers(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed[d]
}

// activeTimers returns the durations of timers not stopped or fired.
func (c *fakeClock) activeTimers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if !t.stopped && !t.fired {
			out = append(out, t.d)
		}
	}
	return out
}

// listResult is one scripted List answer.
type listResult struct {
	items []*unstructured.Unstructured
	rv    string
	cont  string
	err   error
}

// watchResult is one scripted Watch answer: an error, or a fake watcher the
// test drives.
type watchResult struct {
	err  error
	w    watch.Interface
	open func(context.Context) (watch.Interface, error) // instead of w
}

// scriptedSource answers List and Watch from scripts and records the
// options of every call. A call beyond the script blocks until ctx ends.
type scriptedSource struct {
	mu         sync.Mutex
	lists      []listResult
	watches    []watchResult
	listCalls  []metav1.ListOptions
	watchCalls []metav1.ListOptions
	called     chan string
}

func newScriptedSource() *scriptedSource { return &scriptedSource{called: make(chan string, 1000)} }

func (s *scriptedSource) addList(rv, cont string, err error, items ...*unstructured.Unstructured) {
	s.mu.Lock()
	s.lists = append(s.lists, listResult{items: items, rv: rv, cont: cont, err: err})
	s.mu.Unlock()
}

func (s *scriptedSource) addWatch(err error) *watch.FakeWatcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *watch.FakeWatcher
	if err == nil {
		w = watch.NewFakeWithChanSize(100, false)
	}
	s.watches = append(s.watches, watchResult{err: err, w: w})
	return w
}

// addStream scripts a watch answered by kdyn's own HTTP watch (a
// wire.EventReader, which the reflector reads in its goroutine) from a
// test server: the test sends the server's frames on the returned
// channel and closes it to end the stream; gone is closed when the client
// has closed the connection.
func (s *scriptedSource) addStream(t *testing.T) (frames chan<- []byte, gone <-chan struct{}) {
	ch := make(chan []byte)
	closed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(closed)
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush()
		for {
			select {
			case f, ok := <-ch:
				if !ok {
					return
				}
				_, _ = w.Write(f)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	rc, err := rest.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches = append(s.watches, watchResult{open: func(ctx context.Context) (watch.Interface, error) {
		return rc.Get().AbsPath("/watch").Param("watch", "true").Watch(ctx)
	}})
	return ch, closed
}

func (s *scriptedSource) List(ctx context.Context, opts metav1.ListOptions, each func(*unstructured.Unstructured) error) (ListPage, error) {
	s.mu.Lock()
	s.listCalls = append(s.listCalls, opts)
	if len(s.lists) == 0 {
		s.mu.Unlock()
		s.called <- "list(blocked)"
		<-ctx.Done()
		return ListPage{}, ctx.Err()
	}
	r := s.lists[0]
	s.lists = s.lists[1:]
	s.mu.Unlock()
	s.called <- "list"
	if r.err != nil {
		return ListPage{}, r.err
	}
	for _, it := range r.items {
		if err := each(it.DeepCopy()); err != nil {
			return ListPage{}, err
		}
	}
	return ListPage{ResourceVersion: r.rv, Continue: r.cont}, nil
}

func (s *scriptedSource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	s.watchCalls = append(s.watchCalls, opts)
	if len(s.watches) == 0 {
		s.mu.Unlock()
		s.called <- "watch(blocked)"
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r := s.watches[0]
	s.watches = s.watches[1:]
	s.mu.Unlock()
	s.called <- "watch"
	if r.err != nil {
		return nil, r.err
	}
	if r.open != nil {
		return r.open(ctx)
	}
	return r.w, nil
}

func (s *scriptedSource) lastWatch() metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watchCalls[len(s.watchCalls)-1]
}

// waitCall waits for the next call to be made (or blocked).
func (s *scriptedSource) waitCall(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.called:
		if got != want {
			t.Fatalf("next call = %s, want %s", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s call", want)
	}
}

func cm(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}}}
}

func bookmark(rv string, end bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"resourceVersion": rv}}}
	if end {
		u.SetAnnotations(map[string]string{InitialEventsEndAnnotation: "true"})
	}
	return u
}

// recorder is a handler that records events as strings.
type recorder struct {
	mu     sync.Mutex
	events []string
	ch     chan string
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 1000)} }

func (r *recorder) rec(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
	r.ch <- s
}

func (r *recorder) OnAdd(obj *unstructured.Unstructured, initial bool) {
	r.rec(fmt.Sprintf("add %s@%s initial=%v", obj.GetName(), obj.GetResourceVersion(), initial))
}
func (r *recorder) OnUpdate(old, obj *unstructured.Unstructured) {
	r.rec(fmt.Sprintf("update %s %s->%s", obj.GetName(), old.GetResourceVersion(), obj.GetResourceVersion()))
}
func (r *recorder) OnDelete(d Deleted[*unstructured.Unstructured]) {
	if d.ShardMove {
		r.rec(fmt.Sprintf("delete %s@%s unknown=%v move=true", d.Obj.GetName(), d.Obj.GetResourceVersion(), d.FinalStateUnknown))
		return
	}
	r.rec(fmt.Sprintf("delete %s@%s unknown=%v", d.Obj.GetName(), d.Obj.GetResourceVersion(), d.FinalStateUnknown))
}

// expect waits for exactly these next events.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-r.ch:
			if got != w {
				t.Fatalf("event %q, want %q", got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event, want %q", w)
		}
	}
}

// expectSet waits for these events in any order.
func (r *recorder) expectSet(t *testing.T, want ...string) {
	t.Helper()
	need := map[string]int{}
	for _, w := range want {
		need[w]++
	}
	for range want {
		select {
		case got := <-r.ch:
			if need[got] == 0 {
				t.Fatalf("unexpected event %q (want %v)", got, want)
			}
			need[got]--
		case <-time.After(5 * time.Second):
			t.Fatalf("missing events %v", need)
		}
	}
}

// waitClosed fails the test with msg unless ch is closed within 5 s.
func waitClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

// runInformer runs inf until cancel; done is closed when Run returned.
func runInformer(inf *Informer[*unstructured.Unstructured]) (cancel context.CancelFunc, done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		_ = inf.Run(ctx)
	}()
	return cancel, ch
}

// startInformer runs an informer on src with a fake clock until the test
// ends.
func startInformer(t *testing.T, src Source[*unstructured.Unstructured], opts Options[*unstructured.Unstructured], h Handler[*unstructured.Unstructured]) (*Informer[*unstructured.Unstructured], *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	opts.clock = clk
	inf := New(src, opts)
	if h != nil {
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	cancel, done := runInformer(inf)
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return inf, clk
}
