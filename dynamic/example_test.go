package dynamic_test

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/dynamic/fake"
)

// The same code runs against dynamic.NewForConfig(cfg) and a real server;
// here the in-memory fake stands in for it.
func Example() {
	var client dynamic.Interface = fake.NewClient()
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cms := client.Resource(gvr).Namespace("prod")

	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "labels": map[string]any{"app": "web"}},
		"data":     map[string]any{"color": "red"},
	}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	fmt.Println("create again:", apierrors.IsAlreadyExists(err))

	patched, err := cms.Patch(ctx, "settings", types.MergePatchType, []byte(`{"data":{"color":"blue"}}`), metav1.PatchOptions{})
	if err != nil {
		panic(err)
	}
	color, _, _ := unstructured.NestedString(patched.Object, "data", "color")
	fmt.Println("color:", color)

	for obj, err := range dynamic.Items(ctx, cms, metav1.ListOptions{LabelSelector: "app=web"}, dynamic.PageOptions{}) {
		if err != nil {
			panic(err)
		}
		fmt.Println("listed:", obj.GetName())
	}
	// Output:
	// create again: true
	// color: blue
	// listed: settings
}
