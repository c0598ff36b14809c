package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
)

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// opTimeout bounds every write.
const opTimeout = 15 * time.Second

// payload is ~1 KiB of data per ConfigMap.
var payload = func() string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 1000)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}()

func configMap(ns, name string, gen int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": "kdyn-soak"}},
		"data":       map[string]any{"payload": payload, "gen": fmt.Sprint(gen)},
	}}
}

func splitKey(key string) (ns, name string) {
	ns, name, _ = strings.Cut(key, "/")
	return ns, name
}

// writeStats counts writes, shared by all writers.
type writeStats struct {
	creates, patches, deletes atomic.Int64
	behind                    atomic.Int64 // ops that waited for a free worker
	inflight                  atomic.Int64

	mu      sync.Mutex
	errs    map[string]int64
	example map[string]string
	latency []time.Duration // current interval, successful writes
}

func newWriteStats() *writeStats {
	return &writeStats{errs: map[string]int64{}, example: map[string]string{}}
}

func (s *writeStats) ok(d time.Duration) {
	s.mu.Lock()
	s.latency = append(s.latency, d)
	s.mu.Unlock()
}

func (s *writeStats) fail(err error) string {
	k := errKind(err)
	s.mu.Lock()
	s.errs[k]++
	if _, ok := s.example[k]; !ok {
		msg := err.Error()
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		s.example[k] = msg
	}
	s.mu.Unlock()
	return k
}

func (s *writeStats) done() int64 { return s.creates.Load() + s.patches.Load() + s.deletes.Load() }

func (s *writeStats) errCounts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.errs))
	for k, v := range s.errs {
		out[k] = v
	}
	return out
}

// examples returns the first message of each error kind.
func (s *writeStats) examples() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.example))
	for k, v := range s.example {
		out[k] = v
	}
	return out
}

func (s *writeStats) takeLatency() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.latency
	s.latency = nil
	return l
}

type opKind int

const (
	opCreate opKind = iota
	opPatch
	opDelete
)

type op struct {
	kind opKind
	key  string
	gen  int
}

// writer owns a set of objects: only it changes them, and never two
// changes of one object at once, so there are no conflicts by design and
// every completed write has a resourceVersion the handler must reach.
type writer struct {
	id       int
	client   dynamic.Interface
	ns       []string
	target   int
	inflight int
	tr       *tracker
	st       *writeStats

	mu   sync.Mutex
	live []string
	seq  int
	gen  int
}

func (w *writer) addLive(key string) {
	w.mu.Lock()
	w.live = append(w.live, key)
	w.mu.Unlock()
}

// pick chooses the next change, keeping the object count near target:
// 60% merge patches, 20% creates, 20% deletes, skewed toward creates or
// deletes when the count drifts more than 2% away.
func (w *writer) pick() op {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.live)
	pc, pd := 0.2, 0.2
	switch {
	case float64(n) < 0.98*float64(w.target):
		pc, pd = 0.35, 0.05
	case float64(n) > 1.02*float64(w.target):
		pc, pd = 0.05, 0.35
	}
	r := rand.Float64()
	if n == 0 || r < pc {
		w.seq++
		ns := w.ns[w.seq%len(w.ns)]
		return op{kind: opCreate, key: fmt.Sprintf("%s/w%d-%07d", ns, w.id, w.seq)}
	}
	// Take the object out of the live set while the change is in flight.
	i := rand.IntN(n)
	key := w.live[i]
	w.live[i] = w.live[n-1]
	w.live = w.live[:n-1]
	w.gen++
	if r < pc+pd {
		return op{kind: opDelete, key: key}
	}
	return op{kind: opPatch, key: key, gen: w.gen}
}

// run makes perSecond changes a second until ctx is done, then lets the
// writes in flight finish (each bounded by opTimeout) and returns.
func (w *writer) run(ctx context.Context, perSecond float64) {
	ops := make(chan op)
	var wg sync.WaitGroup
	for range w.inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range ops {
				if kind := w.do(o); isConnErr(kind) {
					// The server is away (the restart): do not spin.
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(ops)
	lim := rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond/20)))
	for {
		if err := lim.Wait(ctx); err != nil {
			return
		}
		o := w.pick()
		select {
		case ops <- o:
			continue
		default:
		}
		w.st.behind.Add(1)
		select {
		case ops <- o:
		case <-ctx.Done():
			w.putBack(o)
			return
		}
	}
}

func (w *writer) putBack(o op) {
	if o.kind != opCreate {
		w.addLive(o.key)
	}
}

// do runs one change and returns the error kind ("" on success).
func (w *writer) do(o op) string {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	w.st.inflight.Add(1)
	defer w.st.inflight.Add(-1)
	ns, name := splitKey(o.key)
	rc := w.client.Resource(cmGVR).Namespace(ns)
	start := time.Now()
	var err error
	switch o.kind {
	case opCreate:
		var obj *unstructured.Unstructured
		obj, err = rc.Create(ctx, configMap(ns, name, 0), metav1.CreateOptions{})
		done := time.Now()
		if err == nil {
			w.st.creates.Add(1)
			w.st.ok(done.Sub(start))
			w.tr.wrote(o.key, obj.GetResourceVersion(), done)
			w.addLive(o.key)
			return ""
		}
		if apierrors.IsAlreadyExists(err) {
			w.addLive(o.key)
		}
	case opPatch:
		var obj *unstructured.Unstructured
		patch := fmt.Appendf(nil, `{"data":{"gen":"%d"}}`, o.gen)
		obj, err = rc.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		done := time.Now()
		if err == nil {
			w.st.patches.Add(1)
			w.st.ok(done.Sub(start))
			w.tr.wrote(o.key, obj.GetResourceVersion(), done)
			w.addLive(o.key)
			return ""
		}
		if !apierrors.IsNotFound(err) {
			w.addLive(o.key)
		}
	case opDelete:
		err = rc.Delete(ctx, name, metav1.DeleteOptions{})
		done := time.Now()
		if err == nil {
			w.st.deletes.Add(1)
			w.st.ok(done.Sub(start))
			w.tr.deleted(o.key, done)
			return ""
		}
		if !apierrors.IsNotFound(err) {
			w.addLive(o.key)
		}
	}
	return w.st.fail(err)
}

// seed creates n ConfigMaps spread over namespaces with parallel workers,
// retrying transient errors, and returns their keys.
func seed(ctx context.Context, c dynamic.Interface, namespaces []string, n, parallel int, progress func(done int)) ([]string, error) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/seed-%06d", namespaces[i%len(namespaces)], i)
	}
	idx := make(chan int)
	var done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				if err := createWithRetry(ctx, c, keys[i]); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					continue
				}
				done.Add(1)
			}
		}()
	}
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
feed:
	for i := range keys {
		for {
			select {
			case idx <- i:
				continue feed
			case <-ctx.Done():
				break feed
			case <-t.C:
				progress(int(done.Load()))
			}
		}
	}
	close(idx)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return keys, nil
}

func createWithRetry(ctx context.Context, c dynamic.Interface, key string) error {
	ns, name := splitKey(key)
	var err error
	for attempt := range 5 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		_, err = c.Resource(cmGVR).Namespace(ns).Create(octx, configMap(ns, name, 0), metav1.CreateOptions{})
		cancel()
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("create %s: %w", key, err)
}
