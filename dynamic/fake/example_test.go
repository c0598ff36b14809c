package fake_test

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kdyn/kdyn/dynamic/fake"
)

func Example() {
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	seed := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings", "namespace": "prod"},
		"data":       map[string]any{"mode": "fast"},
	}}
	c := fake.NewClient(seed)
	cms := c.Resource(gvr).Namespace("prod")

	// Watch from the current state, as a controller would after a list.
	list, _ := cms.List(ctx, metav1.ListOptions{})
	w, _ := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	defer w.Stop()

	stale, _ := cms.Get(ctx, "settings", metav1.GetOptions{})
	_, _ = cms.Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"mode":"safe"}}`), metav1.PatchOptions{})

	// An update from a stale copy conflicts, as on a real server.
	stale.Object["data"] = map[string]any{"mode": "lost"}
	_, err := cms.Update(ctx, stale, metav1.UpdateOptions{})
	fmt.Println("conflict:", apierrors.IsConflict(err))

	ev := <-w.ResultChan()
	fmt.Println("event:", ev.Type == watch.Modified, ev.Object.(*unstructured.Unstructured).GetResourceVersion())

	for _, o := range c.Objects(gvr) {
		mode, _, _ := unstructured.NestedString(o.Object, "data", "mode")
		fmt.Println(o.GetNamespace(), o.GetName(), mode, o.GetResourceVersion())
	}
	// Output:
	// conflict: true
	// event: true 2
	// prod settings safe 2
}

// Intercept stands for a server that fails: here every update of a Lease
// answers 500, and the caller sees the server's error.
func ExampleClient_Intercept() {
	ctx := context.Background()
	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	c := fake.NewClient()
	c.Intercept(func(_ context.Context, a fake.Action) error {
		if a.Verb == "update" && a.Resource == leases {
			return apierrors.NewInternalError(fmt.Errorf("etcd is unhappy"))
		}
		return nil
	})
	lease := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": "ctrl", "namespace": "kube-system"},
	}}
	created, err := c.Resource(leases).Namespace("kube-system").Create(ctx, lease, metav1.CreateOptions{})
	fmt.Println("create:", err)
	_, err = c.Resource(leases).Namespace("kube-system").Update(ctx, created, metav1.UpdateOptions{})
	fmt.Println("update:", apierrors.IsInternalError(err), err)
	// Output:
	// create: <nil>
	// update: true Internal error occurred: etcd is unhappy
}
