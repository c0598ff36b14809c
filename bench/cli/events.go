package cli

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
)

// EventsNamespace holds the fixed Events that `kdyn events` and
// `kubectl events` print for the output comparison.
const EventsNamespace = "clibench-events"

var (
	coreEventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	eventsGVR     = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
)

// eventsCompared are the `events` command lines compared byte for byte.
var eventsCompared = [][]string{
	{"events", "-n", EventsNamespace},
	{"events", "-n", EventsNamespace, "-o", "json"},
	{"events", "-n", EventsNamespace, "-o", "yaml"},
	{"events", "-n", EventsNamespace, "--for", "pod/web", "--types=Warning"},
	{"events", "-n", EventsNamespace, "--no-headers", "--types=normal"},
}

// Events returns the fixed Events of namespace ns, for the output
// comparison: both APIs (events.k8s.io/v1 Events with and without a
// series, core/v1 Events with a count), two Events seen at the same time
// (the sort's ties), labels and annotations, and notes with HTML
// characters, trailing blanks, a tab, an escape character, a newline and
// non-ASCII text. Their times are whole days and twelve hours before now,
// so that LAST SEEN ("10d") is the same for both tools however long apart
// they run within a few hours.
func Events(ns string, now time.Time) []*unstructured.Unstructured {
	base := now.UTC().Truncate(time.Second).Add(-(10*24 + 12) * time.Hour)
	day := 24 * time.Hour
	micro := func(t time.Time) string { return t.Format(metav1.RFC3339Micro) }
	sec := func(t time.Time) string { return t.Format(time.RFC3339) }
	pod := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name, "uid": "uid-" + name}
	}
	newer := func(name string, fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event",
			"metadata":            map[string]any{"name": name, "namespace": ns},
			"reportingController": "example.com/clibench", "reportingInstance": "clibench-0"}
		for k, v := range fields {
			obj[k] = v
		}
		return &unstructured.Unstructured{Object: obj}
	}
	older := func(name string, fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"apiVersion": "v1", "kind": "Event",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"source":   map[string]any{"component": "deployment-controller"}}
		for k, v := range fields {
			obj[k] = v
		}
		return &unstructured.Unstructured{Object: obj}
	}
	deploy := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": "db"}
	return []*unstructured.Unstructured{
		newer("web.1", map[string]any{
			"metadata":  map[string]any{"name": "web.1", "namespace": ns, "labels": map[string]any{"b": "2", "a": "1"}, "annotations": map[string]any{"z": "<1>"}},
			"eventTime": micro(base.Add(123456 * time.Microsecond)), "action": "Pull", "reason": "Pulled", "type": "Normal",
			"note": "pulled image <nginx> & \"ok\"  ", "regarding": pod("web"),
		}),
		newer("web.2", map[string]any{
			"eventTime": micro(base.Add(-day)), "series": map[string]any{"count": int64(5), "lastObservedTime": micro(base.Add(day))},
			"action": "Restart", "reason": "BackOff", "type": "Warning", "note": "back-off\trestarting \x1b[31mfailed\x1b[0m container",
			"regarding": pod("web"), "related": map[string]any{"apiVersion": "v1", "kind": "Node", "name": "node-1"},
		}),
		newer("web.3", map[string]any{
			"eventTime": micro(base.Add(2 * time.Hour)), "action": "Check", "reason": "Unhealthy", "type": "Warning",
			"note": "probe failed:\nconnection refused", "regarding": pod("web"),
		}),
		newer("api.1", map[string]any{
			"eventTime": micro(base.Add(-3 * time.Hour)), "action": "Sync", "reason": "Synced", "type": "Normal",
			"note": "héllo wörld — 日本語 ✓", "regarding": pod("api"),
		}),
		older("db.1", map[string]any{
			"involvedObject": deploy, "reason": "ScalingReplicaSet", "message": "Scaled up replica set db-7c9 to 3", "type": "Normal",
			"firstTimestamp": sec(base.Add(-2 * day)), "lastTimestamp": sec(base), "count": int64(3),
		}),
		older("db.2", map[string]any{
			"involvedObject": deploy, "reason": "Tie", "message": "seen when db.1 was last", "type": "Warning",
			"firstTimestamp": sec(base), "lastTimestamp": sec(base), "count": int64(1),
		}),
	}
}

// SeedEvents creates namespace ns and the Events of Events(ns, now) in it.
func SeedEvents(ctx context.Context, client dynamic.Interface, ns string, now time.Time) error {
	nsObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
	}}
	if _, err := client.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	for _, ev := range Events(ns, now) {
		gvr := coreEventsGVR
		if ev.GetAPIVersion() == eventsGVR.GroupVersion().String() {
			gvr = eventsGVR
		}
		if _, err := client.Resource(gvr).Namespace(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create event %s: %w", ev.GetName(), err)
		}
	}
	return nil
}
