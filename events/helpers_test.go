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

// Tests of time run in a testing/synctest bubble: there time.Now, the
// recorder's timer and its sleeps between attempts read a fake clock that
// moves only when every goroutine of the bubble is blocked, so times,
// intervals and backoffs are exact.

// liveness bounds how long a test outside a bubble waits for something that
// must happen promptly (a goroutine reacting); it never decides a measured
// figure.
const liveness = 10 * time.Second

// call is one write the recorder sent.
type call struct {
	verb, namespace, name string
	body                  map[string]any
	at                    time.Time // when it was sent
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
	c.at = time.Now()
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
	if err := r.s.before(ctx, call{verb: "create", namespace: r.ns, name: obj.GetName(), body: obj.DeepCopy().Object}); err != nil {
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
	if err := r.s.before(ctx, call{verb: "patch", namespace: r.ns, name: name, body: body}); err != nil {
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

// testRecorder is a recorder writing to a server the test reads.
type testRecorder struct {
	*Recorder
	server *server
}

func newTestRecorder(t *testing.T, opts Options) testRecorder {
	t.Helper()
	if opts.ReportingController == "" {
		opts.ReportingController = "example.com/test"
	}
	if opts.ReportingInstance == "" {
		opts.ReportingInstance = "test-1"
	}
	s := newServer()
	r, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return testRecorder{r, s}
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

// step lets d pass on the bubble's clock and does what is due then, as Run
// would.
func (r testRecorder) step(ctx context.Context, d time.Duration) {
	time.Sleep(d)
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
