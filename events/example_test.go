package events_test

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/events"
)

func Example() {
	client := fake.NewClient() // or dynamic.NewForConfig(cfg)
	rec, err := events.New(client, events.Options{ReportingController: "example.com/gc", ReportingInstance: "gc-0"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var g errgroup.Group
	g.Go(func() error { return rec.Run(ctx) })

	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("prod")
	cm.SetName("settings")
	rec.Eventf(cm, nil, events.Normal, "Deleted", "Delete", "orphan of %s", "deploy/web")
	for range 3 { // identical occurrences: one Event with a series
		rec.Eventf(cm, nil, events.Warning, "SyncFailed", "Sync", "conflict")
	}

	cancel()
	_ = g.Wait() // Run has flushed

	for _, ev := range client.Objects(events.GVR) {
		reason, _, _ := unstructured.NestedString(ev.Object, "reason")
		note, _, _ := unstructured.NestedString(ev.Object, "note")
		kind, _, _ := unstructured.NestedString(ev.Object, "regarding", "kind")
		count, _, _ := unstructured.NestedInt64(ev.Object, "series", "count")
		fmt.Printf("%s %s/%s %q count=%d\n", ev.GetNamespace(), kind, reason, note, max(count, 1))
	}
	fmt.Printf("%+v\n", rec.Stats())
	// Output:
	// prod ConfigMap/Deleted "orphan of deploy/web" count=1
	// prod ConfigMap/SyncFailed "conflict" count=3
	// {Queued:4 Created:2 Aggregated:2 SeriesUpdates:1 Retries:0 Dropped:map[]}
}

// A typed object (here only its metadata) gets its kind from ReferenceFor.
func ExampleReferenceFor() {
	client := fake.NewClient()
	rec, _ := events.New(client, events.Options{ReportingController: "example.com/nodes", ReportingInstance: "n-0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- rec.Run(ctx) }()

	node := &metav1.ObjectMeta{Name: "node-1", UID: "u-1"} // a metav1.Object without a kind
	nodeGVK := schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	rec.Eventf(events.ReferenceFor(node, nodeGVK), nil, events.Normal, "Ready", "Check", "kubelet is ready")
	cancel()
	<-done

	ev := client.Objects(events.GVR)[0]
	regarding, _, _ := unstructured.NestedStringMap(ev.Object, "regarding")
	fmt.Println(ev.GetNamespace(), regarding)
	// Output:
	// default map[apiVersion:v1 kind:Node name:node-1 uid:u-1]
}
