package informer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/rest"
)

// Tests that run informers do so in a testing/synctest bubble: time stands
// still there until the test sleeps, or until every goroutine of the bubble
// is blocked on it, so "at once" and "after exactly d" can be told apart.
// The helpers that wait for a call, an event or a close check that it has
// happened by the time the bubble's other goroutines are all blocked
// (synctest.Wait), without letting time pass.

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
// wire.EventReader, which the reflector reads in its goroutine) from an
// HTTP server on an in-memory network (net.Pipe, whose reads block on
// channels of the bubble, so synctest sees the reflector blocked in one):
// the test sends the server's frames on the returned channel and closes it
// to end the stream; gone is closed when the client has closed the
// connection.
func (s *scriptedSource) addStream(t *testing.T) (frames chan<- []byte, gone <-chan struct{}) {
	ch := make(chan []byte)
	closed := make(chan struct{})
	rc := pipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches = append(s.watches, watchResult{open: func(ctx context.Context) (watch.Interface, error) {
		return rc.Get().AbsPath("/watch").Param("watch", "true").Watch(ctx)
	}})
	return ch, closed
}

// pipeServer serves h on an in-memory network until the test ends and
// returns a client of it.
func pipeServer(t *testing.T, h http.Handler) *rest.Client {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-served
	})
	rc, err := rest.NewForConfig(&rest.Config{Host: "http://pipe", Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case l.conns <- server:
			return client, nil
		case <-l.done:
			return nil, net.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// pipeListener hands the server ends of the pipes the client dials.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

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

// waitCall checks that the next call has been made (or has blocked) by the
// time every other goroutine of the bubble is blocked.
func (s *scriptedSource) waitCall(t *testing.T, want string) {
	t.Helper()
	synctest.Wait()
	select {
	case got := <-s.called:
		if got != want {
			t.Fatalf("next call = %s, want %s", got, want)
		}
	default:
		t.Fatalf("no %s call", want)
	}
}

// noCall checks that no call has been made by the time every other
// goroutine of the bubble is blocked.
func (s *scriptedSource) noCall(t *testing.T) {
	t.Helper()
	synctest.Wait()
	select {
	case got := <-s.called:
		t.Fatalf("unexpected %s call", got)
	default:
	}
}

// nextCall waits, letting time pass, for the next call, and returns how
// long it took to come.
func (s *scriptedSource) nextCall(t *testing.T, want string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case got := <-s.called:
		if got != want {
			t.Fatalf("next call = %s, want %s", got, want)
		}
	case <-time.After(time.Hour):
		t.Fatalf("no %s call within an hour", want)
	}
	return time.Since(start)
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

// expect checks that exactly these events are the next ones, delivered by
// the time every other goroutine of the bubble is blocked.
func (r *recorder) expect(t *testing.T, want ...string) {
	t.Helper()
	synctest.Wait()
	for _, w := range want {
		select {
		case got := <-r.ch:
			if got != w {
				t.Fatalf("event %q, want %q", got, w)
			}
		default:
			t.Fatalf("no event, want %q", w)
		}
	}
}

// expectSet is expect in any order.
func (r *recorder) expectSet(t *testing.T, want ...string) {
	t.Helper()
	synctest.Wait()
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
		default:
			t.Fatalf("missing events %v", need)
		}
	}
}

// waitClosed fails the test with msg unless ch is closed by the time every
// other goroutine of the bubble is blocked.
func waitClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	synctest.Wait()
	select {
	case <-ch:
	default:
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

// startInformer runs an informer on src until the test ends.
func startInformer(t *testing.T, src Source[*unstructured.Unstructured], opts Options[*unstructured.Unstructured], h Handler[*unstructured.Unstructured]) *Informer[*unstructured.Unstructured] {
	t.Helper()
	inf := New(src, opts)
	if h != nil {
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	cancel, done := runInformer(inf)
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return inf
}
