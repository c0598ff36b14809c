package events_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/events"
)

func configMap(name string) *unstructured.Unstructured {
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("prod")
	cm.SetName(name)
	return cm
}

// The fake keeps events as a Recorder would record them, formats them as
// client-go's FakeRecorder does, and marks what a Recorder would refuse.
func TestFakeRecorder(t *testing.T) {
	f := events.NewFakeRecorder(10)
	var rec events.EventRecorder = f
	rec.Eventf(configMap("a"), configMap("b"), events.Normal, "Synced", "Sync", "%d keys", 3)
	rec.Eventf(configMap("a"), &unstructured.Unstructured{}, events.Warning, "Failed", "Sync", "related without a kind is left out")
	rec.Eventf(configMap("a"), nil, "Odd", "Failed", "Sync", "bad type")
	rec.Eventf(nil, nil, events.Normal, "Synced", "Sync", "no object")
	rec.Eventf(configMap("a"), nil, events.Normal, "Long", "Sync", "%s", strings.Repeat("x", 2000))

	var got []string
	for range 5 {
		got = append(got, <-f.Events)
	}
	want := []string{
		"Normal Synced 3 keys",
		"Warning Failed related without a kind is left out",
		"Invalid: Odd Failed bad type",
		"Invalid: Normal Synced no object",
		"Normal Long " + strings.Repeat("x", 1024),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	r := f.Recorded()
	if len(r) != 5 {
		t.Fatalf("%d recorded", len(r))
	}
	if r[0].Regarding.Name != "a" || r[0].Related.Name != "b" || r[0].Action != "Sync" || r[1].Related.Name != "" {
		t.Errorf("references: %+v, %+v", r[0], r[1])
	}
}

// Discard takes anything and keeps nothing.
func TestDiscard(t *testing.T) {
	events.Discard.Eventf(configMap("a"), nil, events.Normal, "Synced", "Sync", "ignored")
	events.Discard.Eventf(nil, nil, "", "", "", "")
}
