package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/events"
	"github.com/kdyn/kdyn/integration/testenv"
)

// evRecord writes events with kdyn's recorder as record says, and returns
// once Run has flushed them.
func evRecord(t *testing.T, c dynamic.Interface, record func(rec *events.Recorder)) {
	t.Helper()
	rec, err := events.New(c, events.Options{ReportingController: "kdyn.test/cli", ReportingInstance: "cli-0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	record(rec)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := rec.Stats(); len(s.Dropped) > 0 {
		t.Fatalf("the recorder dropped events: %+v", s)
	}
}

// evConfigMap creates a ConfigMap to record events about.
func evConfigMap(t *testing.T, c dynamic.Interface, ns, name string) *unstructured.Unstructured {
	t.Helper()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}}}
	out, err := c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// evRows returns the table's lines split into cells of 2+ spaces.
func evRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var cells []string
		for _, c := range strings.Split(l, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestEvents: events written by kdyn's recorder, read back by kdyn events
// as a table (sorted, series shown as kubectl does), as JSON, and filtered
// by --for and --types.
func TestEvents(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	c := mfClient(t, env)
	cm := evConfigMap(t, c, ns, "settings")
	web := events.Reference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "web"}
	evRecord(t, c, func(rec *events.Recorder) {
		rec.Eventf(cm, nil, events.Warning, "Invalid", "Validate", "key %q is not allowed", "x")
		time.Sleep(10 * time.Millisecond) // distinct times, for the order
		for range 3 {
			rec.Eventf(web, nil, events.Normal, "Pulled", "Pull", "image pulled")
		}
	})

	r := kdyn(t, env, "events", "-n", ns).must(t)
	rows := evRows(r.stdout)
	want := [][]string{
		{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"},
		{"Warning", "Invalid", "ConfigMap/settings", `key "x" is not allowed`},
		{"Normal", "Pulled", "Pod/web", "image pulled"},
	}
	if len(rows) != len(want) {
		t.Fatalf("table:\n%s", r.stdout)
	}
	for i, w := range want {
		got := rows[i]
		if i > 0 {
			got = got[1:] // LAST SEEN depends on the time
		}
		if strings.Join(got, "|") != strings.Join(w, "|") {
			t.Fatalf("row %d = %q, want %q\n%s", i, got, w, r.stdout)
		}
	}
	if !strings.Contains(rows[2][0], "(x3 over ") {
		t.Fatalf("the series' LAST SEEN is %q, want (x3 over …)", rows[2][0])
	}

	r = kdyn(t, env, "events", "-n", ns, "-o", "json").must(t)
	var list struct {
		Kind, APIVersion string
		Items            []map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "EventList" || list.APIVersion != "v1" || len(list.Items) != 2 {
		t.Fatalf("-o json: kind %q apiVersion %q, %d items", list.Kind, list.APIVersion, len(list.Items))
	}
	for _, it := range list.Items {
		u := unstructured.Unstructured{Object: it}
		if u.GetKind() != "Event" || u.GetAPIVersion() != "v1" || len(u.GetManagedFields()) > 0 {
			t.Fatalf("-o json item: kind %q, apiVersion %q, %d managedFields", u.GetKind(), u.GetAPIVersion(), len(u.GetManagedFields()))
		}
		if rc, _, _ := unstructured.NestedString(it, "reportingComponent"); rc != "kdyn.test/cli" {
			t.Fatalf("reportingComponent %q", rc)
		}
	}
	if count, _, _ := unstructured.NestedFloat64(list.Items[1], "series", "count"); count != 3 {
		t.Fatalf("series.count %v, want 3", count)
	}

	r = kdyn(t, env, "events", "-n", ns, "--for", "configmap/settings", "-o", "jsonl").must(t)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"reason":"Invalid"`) {
		t.Fatalf("--for configmap/settings -o jsonl:\n%s", r.stdout)
	}
	r = kdyn(t, env, "events", "-n", ns, "--types", "normal", "--no-headers").must(t)
	if rows := evRows(r.stdout); len(rows) != 1 || rows[0][2] != "Pulled" {
		t.Fatalf("--types normal --no-headers:\n%s", r.stdout)
	}
	r = kdyn(t, env, "events", "-A").must(t)
	found := 0
	for _, row := range evRows(r.stdout)[1:] {
		if row[0] == ns {
			found++
		}
	}
	if !strings.HasPrefix(r.stdout, "NAMESPACE") || found != 2 {
		t.Fatalf("-A: %d rows of %s\n%s", found, ns, r.stdout)
	}
	r = kdyn(t, env, "events", "-n", ns, "--for", "pod/nothing")
	if r.code != 0 || r.stdout != "" || r.stderr != "No events found in "+ns+" namespace.\n" {
		t.Fatalf("no events: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestEventsWatch: -w prints the list, then the events recorded after it,
// of the types asked for.
func TestEventsWatch(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	c := mfClient(t, env)
	cm := evConfigMap(t, c, ns, "watched")
	evRecord(t, c, func(rec *events.Recorder) {
		rec.Eventf(cm, nil, events.Warning, "Before", "Check", "before the watch")
	})

	out, errOut := startKdyn(t, env, "events", "-n", ns, "-w", "--types=Warning")
	out.wait(t, "Before")

	evRecord(t, c, func(rec *events.Recorder) {
		rec.Eventf(cm, nil, events.Normal, "Quiet", "Check", "not a warning")
		rec.Eventf(cm, nil, events.Warning, "After", "Check", "after the list")
	})
	out.wait(t, "after the list")
	rows := evRows(out.String())
	if len(rows) != 3 || rows[0][0] != "LAST SEEN" || rows[1][2] != "Before" || rows[2][2] != "After" {
		t.Fatalf("kdyn events -w printed:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if strings.Contains(out.String(), "Quiet") {
		t.Fatalf("--types=Warning printed a Normal event:\n%s", out.String())
	}
}

// TestEventsWatchRequestTimeout: --request-timeout ends events -w, without
// an error, after printing the list (kubectl's scripts bound a watch so).
func TestEventsWatchRequestTimeout(t *testing.T) {
	env := testenv.Shared(t)
	ns := mfNamespace(t, env)
	c := mfClient(t, env)
	cm := evConfigMap(t, c, ns, "bounded")
	evRecord(t, c, func(rec *events.Recorder) {
		rec.Eventf(cm, nil, events.Warning, "Bounded", "Check", "listed before the watch")
	})
	// It returns (a watch that ignored the timeout would hang here), with
	// exit code 0 and the list printed.
	r := kdyn(t, env, "events", "-n", ns, "--for=configmap/bounded", "--watch", "--request-timeout=1").must(t)
	if !strings.Contains(r.stdout, "Bounded") {
		t.Fatalf("events -w --request-timeout=1 printed %q", r.stdout)
	}
}
