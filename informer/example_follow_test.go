package informer_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic/fake"
	"github.com/kdyn/kdyn/informer"
)

// Wait until a ConfigMap says it is ready: Follow lists, then watches from
// the list, and ends when a func says done.
func ExampleFollow() {
	configMap := func(name, ready string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "prod"}, "data": map[string]any{"ready": ready}}}
	}
	client := fake.NewClient(configMap("web", "false"), configMap("db", "true"))
	cms := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("prod")
	ctx := context.Background()

	ready := func(obj *unstructured.Unstructured) bool {
		v, _, _ := unstructured.NestedString(obj.Object, "data", "ready")
		return obj.GetName() == "web" && v == "true"
	}
	err := informer.Follow(ctx, informer.NewResourceSource(cms, informer.SourceOptions{}), informer.FollowOptions{},
		informer.FollowFuncs[*unstructured.Unstructured]{
			Listed: func(items []*unstructured.Unstructured) (bool, error) {
				for _, obj := range items {
					fmt.Println("listed", obj.GetName(), "ready:", ready(obj))
				}
				// Someone makes web ready: the watch, from the list's
				// resourceVersion, delivers the change.
				_, err := cms.Update(ctx, configMap("web", "true"), metav1.UpdateOptions{})
				return false, err
			},
			Event: func(typ watch.EventType, obj *unstructured.Unstructured) (bool, error) {
				fmt.Println(typ, obj.GetName(), "ready:", ready(obj))
				return ready(obj), nil
			},
		})
	fmt.Println("Follow:", err)
	// Output:
	// listed db ready: false
	// listed web ready: false
	// MODIFIED web ready: true
	// Follow: <nil>
}
