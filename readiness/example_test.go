package readiness_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/readiness"
)

func ExampleCompute() {
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "generation": int64(4)},
		"spec":       map[string]any{"replicas": int64(3)},
		"status": map[string]any{
			"observedGeneration": int64(4),
			"replicas":           int64(3),
			"updatedReplicas":    int64(3),
			"availableReplicas":  int64(1),
		},
	}}
	res, err := readiness.Compute(deploy)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Ready(), res.Reason)
	fmt.Println(res)
	// Output:
	// false LessAvailable
	// InProgress: Available: 1/3
}

func ExampleCompute_customResource() {
	// A custom resource is judged by kstatus's conventions: observedGeneration,
	// then Reconciling/Stalled, then Ready.
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w1", "generation": int64(2)},
		"status": map[string]any{
			"observedGeneration": int64(2),
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "Provisioned"},
			},
		},
	}}
	res, _ := readiness.Compute(widget)
	fmt.Println(res)
	// Output: Current: Resource is Ready
}

func ExampleNew() {
	// A rule for a kind whose status says "phase: Running" when done.
	c := readiness.New(readiness.Options{Rules: map[schema.GroupKind]readiness.Rule{
		{Group: "example.com", Kind: "Gadget"}: func(u *unstructured.Unstructured) (readiness.Result, error) {
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			if phase != "Running" {
				return readiness.Result{Status: readiness.InProgress, Reason: "NotRunning", Message: "phase is " + phase}, nil
			}
			return readiness.Result{Status: readiness.Current, Message: "running"}, nil
		},
	}})
	gadget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"},
		"status":   map[string]any{"phase": "Starting"},
	}}
	res, _ := c.Compute(gadget)
	fmt.Println(res.Status, res.Reason, res.Message)
	// Output: InProgress NotRunning phase is Starting
}
