package events

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/zapr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestEventContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := newTestRecorder(t, Options{})
		p, node := pod("prod", "web"), pod("", "node-1")
		node.SetAPIVersion("v1")
		node.SetKind("Node")
		r.Eventf(p, node, Normal, "Scheduled", "Binding", "assigned %s to %s", "prod/web", "node-1")
		r.process(ctx)
		evs := r.server.stored()
		if len(evs) != 1 {
			t.Fatalf("%d Events, want 1", len(evs))
		}
		got := evs[0].Object
		md := got["metadata"].(map[string]any)
		name := md["name"].(string)
		// The fake adds uid, resourceVersion, creationTimestamp; keep what the
		// recorder sent.
		got["metadata"] = map[string]any{"name": name, "namespace": md["namespace"]}
		want := map[string]any{
			"apiVersion":          "events.k8s.io/v1",
			"kind":                "Event",
			"metadata":            map[string]any{"name": name, "namespace": "prod"},
			"eventTime":           "2000-01-01T00:00:00.000000Z", // the bubble's clock starts then
			"reportingController": "example.com/test",
			"reportingInstance":   "test-1",
			"action":              "Binding",
			"reason":              "Scheduled",
			"type":                "Normal",
			"note":                "assigned prod/web to node-1",
			"regarding":           map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": "prod", "name": "web", "uid": "uid-web", "resourceVersion": "7"},
			"related":             map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "uid-node-1", "resourceVersion": "7"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Event (-want +got):\n%s", diff)
		}
		if wantName := fmt.Sprintf("web.%x", time.Now().UnixNano()); name != wantName {
			t.Fatalf("name %q, want %q", name, wantName)
		}
	})
}

func TestNamesAndNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		r := newTestRecorder(t, Options{})
		role := pod("", "system:controller:gc")
		role.SetAPIVersion("rbac.authorization.k8s.io/v1")
		role.SetKind("ClusterRole")
		node := pod("", "node-1")
		node.SetKind("Node")
		long := pod("prod", strings.Repeat("a", 250))
		// The same object and time many times over: names stay unique.
		for i := range 3 {
			r.Eventf(pod("prod", "web"), nil, Normal, "Synced", "Sync", "n%d", i)
		}
		r.Eventf(node, nil, Normal, "Ready", "Check", "ready")
		r.Eventf(role, nil, Normal, "Bound", "Bind", "bound")
		r.Eventf(long, nil, Normal, "Synced", "Sync", "long name")
		r.process(ctx)

		uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
		nano := time.Now().UnixNano()
		var got []string
		for _, c := range r.server.writes() {
			name := c.name
			if uuid.MatchString(name) {
				name = "<uuid>"
			}
			got = append(got, c.namespace+"/"+name)
		}
		want := []string{
			fmt.Sprintf("prod/web.%x", nano),
			fmt.Sprintf("prod/web.%x", nano+1),
			fmt.Sprintf("prod/web.%x", nano+2),
			fmt.Sprintf("default/node-1.%x", nano+3), // cluster-scoped: default, as client-go
			"default/<uuid>",                         // "system:controller:gc.…" is not a valid name
			"prod/<uuid>",                            // too long
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("namespace/name (-want +got):\n%s", diff)
		}
		if n := len(r.server.stored()); n != 6 {
			t.Fatalf("%d Events stored, want 6", n)
		}
	})
}

func TestObjectKinds(t *testing.T) {
	ctx := t.Context()
	r := newTestRecorder(t, Options{})
	meta := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "api", UID: "u1"},
	}
	typed := &metav1.ObjectMeta{Namespace: "prod", Name: "cfg", UID: "u2"} // a metav1.Object without a kind
	r.Eventf(meta, nil, Normal, "Scaled", "Scale", "to 3")
	r.Eventf(ReferenceFor(typed, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}), nil, Normal, "Read", "Read", "")
	r.Eventf(&Reference{APIVersion: "v1", Kind: "Pod", Namespace: "prod", Name: "web", FieldPath: "spec.containers{app}"}, nil, Warning, "Failed", "Start", "crash")
	r.process(ctx)
	var got []map[string]any
	for _, c := range r.server.writes() {
		got = append(got, c.body["regarding"].(map[string]any))
	}
	want := []map[string]any{
		{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "api", "uid": "u1"},
		{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "prod", "name": "cfg", "uid": "u2"},
		{"apiVersion": "v1", "kind": "Pod", "namespace": "prod", "name": "web", "fieldPath": "spec.containers{app}"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("regarding (-want +got):\n%s", diff)
	}
	if _, ok := r.server.writes()[1].body["note"]; ok {
		t.Fatal("an empty note was written")
	}
}

func TestInvalidEvents(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	m := &countingMetrics{}
	r := newTestRecorder(t, Options{Metrics: m, Logger: zapr.NewLogger(zap.New(core))})
	p := pod("prod", "web")
	noKind := pod("prod", "x")
	noKind.SetKind("")
	var nilPod *unstructuredPod
	for _, tc := range []struct {
		name           string
		regarding      Object
		typ, reason, a string
	}{
		{"nil", nil, Normal, "R", "A"},
		{"typed nil", nilPod, Normal, "R", "A"},
		{"no kind", noKind, Normal, "R", "A"},
		{"no name", Reference{APIVersion: "v1", Kind: "Pod"}, Normal, "R", "A"},
		{"bad type", p, "Error", "R", "A"},
		{"no reason", p, Normal, "", "A"},
		{"long reason", p, Normal, strings.Repeat("r", 129), "A"},
		{"no action", p, Normal, "R", ""},
		{"long action", p, Normal, "R", strings.Repeat("a", 129)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := r.Stats().Dropped[DropInvalid]
			r.Eventf(tc.regarding, nil, tc.typ, tc.reason, tc.a, "note")
			if got := r.Stats().Dropped[DropInvalid]; got != before+1 {
				t.Fatalf("invalid drops %d, want %d", got, before+1)
			}
		})
	}
	if s := r.Stats(); s.Queued != 0 {
		t.Fatalf("%d queued", s.Queued)
	}
	if got := m.get()[DropInvalid]; got != 9 {
		t.Fatalf("Metrics.Dropped(invalid) %d times, want 9", got)
	}
	if n := logs.FilterMessage("events: event dropped").Len(); n != 9 {
		t.Fatalf("%d error logs, want 9", n)
	}

	// A related object without a kind is left out, as client-go does.
	r.Eventf(p, noKind, Normal, "R", "A", "note")
	r.process(t.Context())
	if _, ok := r.server.writes()[0].body["related"]; ok {
		t.Fatal("related written without a kind")
	}
}

// unstructuredPod is a pointer type for the typed-nil case.
type unstructuredPod struct{ Reference }

func TestNoteTruncated(t *testing.T) {
	r := newTestRecorder(t, Options{})
	r.Eventf(pod("prod", "web"), nil, Normal, "R", "A", "%s", strings.Repeat("é", 600)) // 1200 bytes
	r.process(t.Context())
	note := r.server.writes()[0].body["note"].(string)
	if len(note) != 1024 || note != strings.Repeat("é", 512) {
		t.Fatalf("note of %d bytes, want 1024 (512 runes)", len(note))
	}
}

func TestSpamFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &countingMetrics{}
		r := newTestRecorder(t, Options{Metrics: m})
		web, db := pod("prod", "web"), pod("prod", "db")
		for i := range 30 {
			r.Eventf(web, nil, Normal, "Synced", "Sync", "n%d", i)
		}
		if s := r.Stats(); s.Queued != 25 || s.Dropped[DropSpamFilter] != 5 {
			t.Fatalf("30 events on one object: %+v, want 25 queued and 5 filtered", s)
		}
		// Another object, and another type on the same object, have buckets of
		// their own.
		r.Eventf(db, nil, Normal, "Synced", "Sync", "db")
		r.Eventf(web, nil, Warning, "Failed", "Sync", "web")
		if s := r.Stats(); s.Queued != 27 {
			t.Fatalf("queued %d, want 27", s.Queued)
		}
		// One token per 5 minutes.
		time.Sleep(4 * time.Minute)
		r.Eventf(web, nil, Normal, "Synced", "Sync", "later")
		time.Sleep(time.Minute)
		r.Eventf(web, nil, Normal, "Synced", "Sync", "later")
		r.Eventf(web, nil, Normal, "Synced", "Sync", "later")
		if s := r.Stats(); s.Queued != 28 || s.Dropped[DropSpamFilter] != 7 {
			t.Fatalf("after 5 minutes: %+v, want 28 queued, 7 filtered", s)
		}
		if got := m.get()[DropSpamFilter]; got != 7 {
			t.Fatalf("Metrics.Dropped(spam-filter) %d times, want 7", got)
		}
		// A filtered occurrence is not counted in a series either.
		r.process(t.Context())
		if s := r.Stats(); s.Created != 28 || s.Aggregated != 0 {
			t.Fatalf("%+v", s)
		}
	})
}

func TestSpamFilterOffAndLRU(t *testing.T) {
	r := newTestRecorder(t, Options{SpamBurst: -1, QueueSize: 100})
	for range 50 {
		r.Eventf(pod("prod", "web"), nil, Normal, "Synced", "Sync", "x")
	}
	if s := r.Stats(); s.Queued != 50 {
		t.Fatalf("spam filter off: %d queued, want 50", s.Queued)
	}

	f := newSpamFilter(1, time.Hour, 2)
	now := time.Now()
	k := func(name string) spamKey { return spamKey{name: name} }
	if !f.allow(k("a"), now) || !f.allow(k("b"), now) || f.allow(k("a"), now) {
		t.Fatal("first tokens")
	}
	f.allow(k("c"), now) // evicts b, the least recently seen
	if !f.allow(k("b"), now) {
		t.Fatal("an evicted key starts with a full bucket")
	}
	if f.allow(k("c"), now) {
		t.Fatal("c was evicted instead of b")
	}
}

func TestQueueFull(t *testing.T) {
	m := &countingMetrics{}
	r := newTestRecorder(t, Options{QueueSize: 3, Metrics: m})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 5 {
			r.Eventf(pod("prod", fmt.Sprint("p", i)), nil, Normal, "R", "A", "x")
		}
	}()
	select {
	case <-done:
	case <-time.After(liveness):
		t.Fatal("Eventf blocked on a full queue")
	}
	if s := r.Stats(); s.Queued != 3 || s.Dropped[DropQueueFull] != 2 {
		t.Fatalf("%+v, want 3 queued and 2 dropped", s)
	}
	if got := m.get(); !cmp.Equal(got, map[string]int{DropQueueFull: 2}) {
		t.Fatalf("metrics %v", got)
	}
}

func TestRetries(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "x", errors.New("modified"))
	for _, tc := range []struct {
		name       string
		errs       []error // returned by the first writes
		wantWrite  bool
		wantCalls  int
		wantSleep  int
		retryAfter time.Duration // the server's Retry-After, if any: the wait
	}{
		{"conflict then ok", []error{conflict}, true, 2, 1, 0},
		{"5xx twice then ok", []error{apierrors.NewInternalError(errors.New("etcd")), apierrors.NewServiceUnavailable("x")}, true, 3, 2, 0},
		{"429", []error{apierrors.NewTooManyRequests("slow down", 3)}, true, 2, 1, 3 * time.Second},
		{"transport", []error{errors.New("connection reset")}, true, 2, 1, 0},
		{"always 503", []error{
			apierrors.NewServiceUnavailable("1"), apierrors.NewServiceUnavailable("2"), apierrors.NewServiceUnavailable("3"),
			apierrors.NewServiceUnavailable("4"), apierrors.NewServiceUnavailable("5")}, false, 5, 4, 0},
		{"invalid", []error{apierrors.NewBadRequest("no")}, false, 1, 0, 0},
		{"forbidden", []error{apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "x", errors.New("no"))}, false, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				core, logs := observer.New(zap.InfoLevel)
				m := &countingMetrics{}
				r := newTestRecorder(t, Options{Metrics: m, Logger: zapr.NewLogger(zap.New(core))})
				r.server.fail = func(_ call, n int) error {
					if n <= len(tc.errs) {
						return tc.errs[n-1]
					}
					return nil
				}
				r.Eventf(pod("prod", "web"), nil, Normal, "R", "A", "x")
				start := time.Now()
				r.process(t.Context())
				w := r.server.writes()
				if got := len(w); got != tc.wantCalls {
					t.Fatalf("%d attempts, want %d", got, tc.wantCalls)
				}
				// The recorder sleeps between attempts only, each time its
				// backoff: from 250 ms doubling, up to a quarter more, or
				// the server's Retry-After.
				if !w[0].at.Equal(start) || time.Since(w[len(w)-1].at) != 0 {
					t.Fatalf("attempts from %v to %v after the start, process returned %v after it: a sleep before the first or after the last",
						w[0].at.Sub(start), w[len(w)-1].at.Sub(start), time.Since(start))
				}
				sleeps := 0
				for i := 1; i < len(w); i++ {
					lo := 250 * time.Millisecond << (i - 1)
					hi := lo + lo/4
					if tc.retryAfter > 0 {
						lo, hi = tc.retryAfter, tc.retryAfter
					}
					if d := w[i].at.Sub(w[i-1].at); d < lo || d > hi {
						t.Errorf("sleep before attempt %d: %v, want %v to %v", i+1, d, lo, hi)
					}
					sleeps++
				}
				if sleeps != tc.wantSleep {
					t.Fatalf("%d sleeps, want %d", sleeps, tc.wantSleep)
				}
				s := r.Stats()
				if written := len(r.server.stored()) == 1; written != tc.wantWrite {
					t.Fatalf("written %v, want %v", written, tc.wantWrite)
				}
				if s.Retries != int64(tc.wantSleep) {
					t.Fatalf("Retries %d, want %d", s.Retries, tc.wantSleep)
				}
				wantDrops := map[string]int{}
				if !tc.wantWrite {
					wantDrops[DropWriteFailed] = 1
					if logs.FilterMessage("events: giving up writing an Event").Len() != 1 {
						t.Fatalf("no warning logged: %v", logs.All())
					}
				}
				if got := m.get(); !cmp.Equal(got, wantDrops) {
					t.Fatalf("drops %v, want %v", got, wantDrops)
				}
			})
		})
	}
}

func TestBackoff(t *testing.T) {
	w := &writes{backoffBase: 250 * time.Millisecond, backoffMax: 5 * time.Second}
	for attempt, want := range map[int]time.Duration{1: 250 * time.Millisecond, 2: 500 * time.Millisecond, 3: time.Second, 5: 4 * time.Second, 9: 5 * time.Second} {
		if d := w.backoff(attempt, errors.New("x")); d < want || d > want*5/4 {
			t.Errorf("backoff(%d) = %v, want %v to %v", attempt, d, want, want*5/4)
		}
	}
	if d := w.backoff(1, apierrors.NewTooManyRequests("x", 7)); d != 7*time.Second {
		t.Errorf("Retry-After 7: backoff %v", d)
	}
}

func TestNameCollision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRecorder(t, Options{})
		nano := time.Now().UnixNano()
		taken := pod("prod", fmt.Sprintf("web.%x", nano))
		taken.SetAPIVersion("events.k8s.io/v1")
		taken.SetKind("Event")
		taken.SetResourceVersion("")
		if _, err := r.server.Resource(GVR).Namespace("prod").Create(t.Context(), taken, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r.server.calls = nil
		r.Eventf(pod("prod", "web"), nil, Normal, "R", "A", "x")
		r.process(t.Context())
		w := r.server.writes()
		if len(w) != 2 || w[1].name != fmt.Sprintf("web.%x", nano+1) {
			t.Fatalf("writes %+v, want a second create under the next name", w)
		}
		if s := r.Stats(); s.Created != 1 || len(s.Dropped) != 0 {
			t.Fatalf("%+v", s)
		}
	})
}

func TestCreateLandedBeforeTransportError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRecorder(t, Options{})
		// The first create reaches the server, but its answer is lost.
		r.server.fail = func(c call, n int) error {
			if n == 1 {
				_, err := r.server.Client.Resource(GVR).Namespace(c.namespace).Create(context.Background(), &unstructured.Unstructured{Object: c.body}, metav1.CreateOptions{})
				if err != nil {
					t.Error(err)
				}
				return errors.New("connection reset by peer")
			}
			return nil
		}
		r.Eventf(pod("prod", "web"), nil, Normal, "R", "A", "x")
		r.process(t.Context())
		if n := len(r.server.stored()); n != 1 {
			t.Fatalf("%d Events, want 1", n)
		}
		if s := r.Stats(); s.Created != 1 || len(s.Dropped) != 0 {
			t.Fatalf("%+v", s)
		}
	})
}

func TestNewOptions(t *testing.T) {
	s := newServer()
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no controller", Options{}, "ReportingController is required"},
		{"bad controller", Options{ReportingController: "not a name!"}, `ReportingController "not a name!"`},
		{"long instance", Options{ReportingController: "c", ReportingInstance: strings.Repeat("i", 129)}, "ReportingInstance is 129 bytes"},
		{"negative", Options{ReportingController: "c", QueueSize: -1}, "QueueSize is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(s, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(nil, Options{ReportingController: "c"}); err == nil {
		t.Fatal("nil client accepted")
	}
	r, err := New(s, Options{ReportingController: "example.com/gc"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.writer.instance; !strings.HasPrefix(got, "example.com/gc-") {
		t.Fatalf("default instance %q, want example.com/gc-<host>", got)
	}
	if cap(r.queue) != DefaultQueueSize || r.spam == nil || r.writer.window != DefaultSeriesWindow || r.writer.interval != DefaultSeriesUpdateInterval {
		t.Fatal("defaults not applied")
	}
}

func TestRunWritesAndFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRecorder(t, Options{})
		p := pod("prod", "web")
		// Recorded before Run: queued.
		r.Eventf(p, nil, Normal, "Early", "A", "x")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		// settled waits until Run is blocked, and checks a counter.
		settled := func(what string, counter func(Stats) int64, want int64) {
			t.Helper()
			synctest.Wait()
			if got := counter(r.Stats()); got != want {
				t.Fatalf("%s: %d, want %d (%+v)", what, got, want, r.Stats())
			}
		}
		created := func(s Stats) int64 { return s.Created }
		settled("the early event created", created, 1)

		// A series: created, then patched by Run's timer 30 s after the create.
		r.Eventf(p, nil, Normal, "Loop", "A", "x")
		settled("the series created", created, 2)
		r.Eventf(p, nil, Normal, "Loop", "A", "x")
		settled("occurrences aggregated", func(s Stats) int64 { return s.Aggregated }, 1)
		seriesUpdates := func(s Stats) int64 { return s.SeriesUpdates }
		time.Sleep(30*time.Second - time.Nanosecond)
		settled("series patches 1ns before the interval", seriesUpdates, 0)
		time.Sleep(time.Nanosecond)
		settled("series patches at the interval", seriesUpdates, 1)

		// More occurrences, not due yet: the flush writes them.
		r.Eventf(p, nil, Normal, "Loop", "A", "x")
		r.Eventf(p, nil, Normal, "Loop", "A", "x")
		r.Eventf(p, nil, Normal, "Other", "A", "x")
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		s := r.Stats()
		if s.Created != 3 || s.SeriesUpdates != 2 || len(s.Dropped) != 0 {
			t.Fatalf("after the flush: %+v, want 3 created, 2 series updates", s)
		}
		for _, ev := range r.server.stored() {
			if reason, _, _ := unstructured.NestedString(ev.Object, "reason"); reason == "Loop" {
				if count, _ := seriesOf(t, ev); count != 4 {
					t.Fatalf("flushed series.count %d, want 4", count)
				}
			}
		}

		r.Eventf(p, nil, Normal, "Late", "A", "x")
		if s := r.Stats(); s.Dropped[DropShutdown] != 1 {
			t.Fatalf("an event after Run returned: %+v, want it dropped (shutdown)", s)
		}
		if err := r.Run(t.Context()); err == nil {
			t.Fatal("Run ran twice")
		}
	})
}

func TestFlushTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRecorder(t, Options{FlushTimeout: 50 * time.Millisecond})
		r.server.block = true // every write hangs until its context ends
		for i := range 3 {
			r.Eventf(pod("prod", fmt.Sprint("p", i)), nil, Normal, "R", "A", "x")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait() // the first write has started and hangs
		start := time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 50*time.Millisecond {
			t.Fatalf("Run returned %v after cancel, want FlushTimeout (50ms)", d)
		}
		if s := r.Stats(); s.Dropped[DropShutdown] != 3 {
			t.Fatalf("%+v, want the 3 events dropped (shutdown)", s)
		}
	})
}

func TestConcurrentEventf(t *testing.T) {
	r := newTestRecorder(t, Options{SpamBurst: -1, QueueSize: 10000})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r.Eventf(pod("prod", fmt.Sprint("p", g)), nil, Normal, "R", "A", "n%d", i%5)
			}
		})
	}
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := r.Stats()
	if s.Queued != 400 || s.Created != 40 || s.Aggregated != 360 || len(s.Dropped) != 0 {
		t.Fatalf("%+v, want 400 queued, 40 created, 360 aggregated", s)
	}
	var total int64
	for _, ev := range r.server.stored() {
		count, _ := seriesOf(t, ev)
		total += max(count, 1)
	}
	if total != 400 {
		t.Fatalf("series counts add to %d, want 400", total)
	}
}
