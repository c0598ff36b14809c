// Package events_test proves the events recorder against a real
// kube-apiserver v1.37.2: what the server stores, series, re-creation of an
// expired series, and what it refuses.
package events_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/integration/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

var (
	nsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	cmGVR       = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	coreEvGVR   = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	defaultWait = 30 * time.Second
)

func client(t *testing.T, u testenv.User) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(testenv.Shared(t).RESTConfig(u))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one test (left behind).
func newNamespace(t *testing.T, c dynamic.Interface) string {
	t.Helper()
	return testenv.NewNamespace(t, c, "ev")
}

func createConfigMap(t *testing.T, c dynamic.Interface, ns, name string) *unstructured.Unstructured {
	t.Helper()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	out, err := c.Resource(cmGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// start runs rec until the test ends (or stop is called) and returns stop,
// which returns once Run has flushed.
func start(t *testing.T, rec *events.Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func newRecorder(t *testing.T, c dynamic.Interface, opts events.Options) *events.Recorder {
	t.Helper()
	if opts.ReportingController == "" {
		opts.ReportingController = "kdyn.test/events"
	}
	if opts.ReportingInstance == "" {
		opts.ReportingInstance = "events-test-0"
	}
	rec, err := events.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// listEvents lists the events.k8s.io Events of ns.
func listEvents(t *testing.T, c dynamic.Interface, ns string) []unstructured.Unstructured {
	t.Helper()
	l, err := c.Resource(events.GVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// eventually polls cond until it returns "" (done) or the wait is over,
// failing with the last thing cond said.
func eventually(t *testing.T, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(defaultWait)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func str(obj map[string]any, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}

func TestEventsAsStored(t *testing.T) {
	c := client(t, testenv.Admin)
	ns := newNamespace(t, c)
	cm := createConfigMap(t, c, ns, "settings")
	nsObj, err := c.Resource(nsGVR).Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, c, events.Options{})
	stop := start(t, rec)
	before := time.Now()
	rec.Eventf(cm, nsObj, events.Warning, "Invalid", "Validate", "key %q is not allowed", "x")
	// A cluster-scoped object whose name is not a valid Event name prefix.
	role := events.Reference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:kdyn:" + ns}
	rec.Eventf(role, nil, events.Normal, "Bound", "Bind", "")
	stop()
	if s := rec.Stats(); s.Created != 2 || len(s.Dropped) != 0 {
		t.Fatalf("stats %+v", s)
	}

	evs := listEvents(t, c, ns)
	if len(evs) != 1 {
		t.Fatalf("%d Events in %s, want 1", len(evs), ns)
	}
	ev := evs[0]
	if !strings.HasPrefix(ev.GetName(), "settings.") {
		t.Fatalf("name %q, want settings.<hex time>", ev.GetName())
	}
	eventTime, err := time.Parse(metav1.RFC3339Micro, str(ev.Object, "eventTime"))
	if err != nil || eventTime.Before(before.Truncate(time.Microsecond)) || eventTime.After(time.Now()) {
		t.Fatalf("eventTime %q (%v), want a microsecond time of the call", str(ev.Object, "eventTime"), err)
	}
	got := map[string]any{}
	for _, f := range []string{"reportingController", "reportingInstance", "action", "reason", "type", "note", "regarding", "related"} {
		got[f] = ev.Object[f]
	}
	want := map[string]any{
		"reportingController": "kdyn.test/events",
		"reportingInstance":   "events-test-0",
		"action":              "Validate",
		"reason":              "Invalid",
		"type":                "Warning",
		"note":                `key "x" is not allowed`,
		"regarding": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": "settings",
			"uid": string(cm.GetUID()), "resourceVersion": cm.GetResourceVersion()},
		"related": map[string]any{"apiVersion": "v1", "kind": "Namespace", "name": ns,
			"uid": string(nsObj.GetUID()), "resourceVersion": nsObj.GetResourceVersion()},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stored Event (-want +got):\n%s", diff)
	}
	if _, ok := ev.Object["series"]; ok {
		t.Fatal("a single event was stored with a series")
	}

	// The same Event in the core/v1 view, as kubectl reads it.
	core, err := c.Resource(coreEvGVR).Namespace(ns).Get(t.Context(), ev.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"message": want["note"].(string), "reason": "Invalid", "type": "Warning",
		"reportingComponent": "kdyn.test/events", "involvedObject.name": "settings", "involvedObject.kind": "ConfigMap"} {
		if got := str(core.Object, strings.Split(field, ".")...); got != want {
			t.Errorf("core/v1 %s = %q, want %q", field, got, want)
		}
	}

	// The cluster-scoped object's Event is in default, under a UUID.
	l, err := c.Resource(events.GVR).Namespace("default").List(t.Context(), metav1.ListOptions{FieldSelector: "regarding.name=" + role.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || strings.Contains(l.Items[0].GetName(), "system") || len(l.Items[0].GetName()) != 36 {
		t.Fatalf("ClusterRole events in default: %d, names %v; want one named by a UUID", len(l.Items), names(l.Items))
	}
}

func names(items []unstructured.Unstructured) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out
}

func seriesOf(ev map[string]any) (int64, string) {
	count, _, _ := unstructured.NestedInt64(ev, "series", "count")
	return count, str(ev, "series", "lastObservedTime")
}

func TestSeries(t *testing.T) {
	c := client(t, testenv.Admin)
	ns := newNamespace(t, c)
	cm := createConfigMap(t, c, ns, "loop")
	// A one-second update interval stands for the default 30 s.
	rec := newRecorder(t, c, events.Options{SeriesUpdateInterval: time.Second, SpamBurst: -1})
	stop := start(t, rec)
	emit := func() { rec.Eventf(cm, nil, events.Warning, "SyncFailed", "Sync", "conflict") }

	emit()
	eventually(t, func() string {
		if n := len(listEvents(t, c, ns)); n != 1 {
			return fmt.Sprintf("%d Events, want the first", n)
		}
		return ""
	})
	created := time.Now()
	for range 4 {
		emit()
	}
	// The patch comes one interval after the create, with all four.
	eventually(t, func() string {
		evs := listEvents(t, c, ns)
		if len(evs) != 1 {
			return fmt.Sprintf("%d Events, want 1", len(evs))
		}
		if count, last := seriesOf(evs[0].Object); count != 5 || last == "" {
			return fmt.Sprintf("series count %d, lastObservedTime %q; want 5 and a time", count, last)
		}
		return ""
	})
	if d := time.Since(created); d < 500*time.Millisecond {
		t.Errorf("the series patch came %v after the create, before the interval", d)
	}

	// The server expired the Event: the next update creates it again under
	// its name, series included.
	name := listEvents(t, c, ns)[0].GetName()
	if err := c.Resource(events.GVR).Namespace(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	emit()
	emit()
	stop() // the flush writes the count
	evs := listEvents(t, c, ns)
	if len(evs) != 1 || evs[0].GetName() != name {
		t.Fatalf("Events %v, want %s again", names(evs), name)
	}
	count, last := seriesOf(evs[0].Object)
	if count != 7 {
		t.Fatalf("series.count %d after re-creation, want 7", count)
	}
	lastTime, err := time.Parse(metav1.RFC3339Micro, last)
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := time.Parse(metav1.RFC3339Micro, str(evs[0].Object, "eventTime")); !lastTime.After(first) {
		t.Fatalf("lastObservedTime %s not after eventTime %s", last, str(evs[0].Object, "eventTime"))
	}
	s := rec.Stats()
	if s.Created != 2 || s.Aggregated != 6 || len(s.Dropped) != 0 {
		t.Fatalf("stats %+v, want 2 created (one re-creation), 6 aggregated", s)
	}

	// kubectl's view: the core/v1 Event has the series too.
	core, err := c.Resource(coreEvGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if count, _ := seriesOf(core.Object); count != 7 {
		t.Fatalf("core/v1 series.count %d, want 7", count)
	}
}

func TestRefusedWritesAreNotRetried(t *testing.T) {
	admin := client(t, testenv.Admin)
	ns := newNamespace(t, admin)
	cm := createConfigMap(t, admin, ns, "x")
	// Nobody may not create Events: a 403 is given up at once.
	rec := newRecorder(t, client(t, testenv.Nobody), events.Options{})
	stop := start(t, rec)
	rec.Eventf(cm, nil, events.Normal, "Synced", "Sync", "")
	stop()
	if s := rec.Stats(); s.Dropped[events.DropWriteFailed] != 1 || s.Retries != 0 || s.Created != 0 {
		t.Fatalf("forbidden: stats %+v, want 1 write failed, no retry", s)
	}
	// An Event in a namespace that does not exist: 404, not retried either.
	rec = newRecorder(t, admin, events.Options{})
	stop = start(t, rec)
	rec.Eventf(events.Reference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "no-such-" + ns, Name: "x"}, nil, events.Normal, "Synced", "Sync", "")
	stop()
	if s := rec.Stats(); s.Dropped[events.DropWriteFailed] != 1 || s.Retries != 0 || s.Created != 0 {
		t.Fatalf("no namespace: stats %+v, want 1 write failed, no retry", s)
	}
}
