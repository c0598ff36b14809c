package unstructured_test

import (
	"errors"
	"fmt"
	"strings"

	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/unstructured"
)

func examplePod() *apiunstructured.Unstructured {
	return &apiunstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":   "web",
			"labels": map[string]any{"app.kubernetes.io/name": "web"},
		},
		"spec": map[string]any{
			"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1.27"},
				map[string]any{"name": "proxy", "image": "envoy:1.31"},
			},
		},
		"status": map[string]any{
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True"},
			},
		},
	}}
}

func ExampleQuery() {
	pod := examplePod()
	fmt.Println(unstructured.Query(pod, "spec.containers.#.image"))
	fmt.Println(unstructured.Query(pod, `status.conditions.#(type=="Ready").status`))

	// Several paths, one encoding of the object.
	for _, r := range unstructured.QueryMany(pod, "metadata.name", "spec.containers.#") {
		fmt.Println(r.String())
	}
	// Output:
	// ["nginx:1.27","envoy:1.31"]
	// True
	// web
	// 2
}

func ExampleSet() {
	pod := examplePod()
	if err := unstructured.Set(pod.Object, "spec.containers[1].image", "envoy:1.32"); err != nil {
		panic(err)
	}
	if err := unstructured.Set(pod.Object, `metadata.labels.app\.kubernetes\.io/version`, "2"); err != nil {
		panic(err)
	}
	image, _, _ := unstructured.GetString(pod.Object, "spec.containers.1.image")
	version, _, _ := unstructured.GetString(pod.Object, `metadata.labels.app\.kubernetes\.io/version`)
	fmt.Println(image, version)

	// A type error names the path and the element that was wrong.
	_, _, err := unstructured.Get(pod.Object, "metadata.name.first")
	fmt.Println(err)
	// Output:
	// envoy:1.32 2
	// unstructured: .metadata.name.first: expected map at "metadata.name", found string
}

func ExampleNeat() {
	live := &apiunstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":              "settings",
			"uid":               "9f1c",
			"resourceVersion":   "812",
			"creationTimestamp": "2026-01-02T03:04:05Z",
			"managedFields":     []any{map[string]any{"manager": "kdyn"}},
			"annotations": map[string]any{
				unstructured.LastAppliedAnnotation: `{"kind":"ConfigMap"}`,
			},
		},
		"data": map[string]any{"mode": "fast"},
	}}
	clean := unstructured.Neat(live, unstructured.NeatOptions{})
	out, _ := clean.MarshalJSON()
	fmt.Print(string(out))
	// Output:
	// {"apiVersion":"v1","data":{"mode":"fast"},"kind":"ConfigMap","metadata":{"name":"settings"}}
}

func ExampleMergePatch() {
	original := []byte(`{"spec":{"replicas":1,"paused":true}}`)
	modified := []byte(`{"spec":{"replicas":3}}`)

	merge, _ := unstructured.MergePatch(original, modified)
	fmt.Println(string(merge))

	jsonPatch, _ := unstructured.JSONPatch(original, modified)
	fmt.Println(string(jsonPatch))

	// Applying either patch to original gives modified.
	result, _ := unstructured.ApplyJSONPatch(original, jsonPatch)
	fmt.Println(string(result))
	// Output:
	// {"spec":{"paused":null,"replicas":3}}
	// [{"op":"remove","path":"/spec/paused"},{"op":"replace","path":"/spec/replicas","value":3}]
	// {"spec":{"replicas":3}}
}

func ExampleThreeWayMergePatch() {
	lastApplied := []byte(`{"spec":{"size":3,"tier":"gold"}}`)
	modified := []byte(`{"spec":{"size":5}}`)
	live := []byte(`{"spec":{"size":3,"tier":"gold","defaulted":true},"status":{"ok":true}}`)

	patch, _ := unstructured.ThreeWayMergePatch(lastApplied, modified, live)
	fmt.Println(string(patch))
	// Output:
	// {"spec":{"size":5,"tier":null}}
}

func ExampleDecodeManifests() {
	manifest := `---
apiVersion: v1
kind: Namespace
metadata: {name: prod}
--- # the app's config
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: prod}
---
metadata: {name: no-type}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: web}}
`
	objs, err := unstructured.DecodeManifests(strings.NewReader(manifest), "manifest.yaml")
	for _, obj := range objs {
		fmt.Println(obj.GetKind(), obj.GetName())
	}
	var bad unstructured.DocumentErrors
	if errors.As(err, &bad) {
		for _, e := range bad {
			fmt.Println(e)
		}
	}
	// Output:
	// Namespace prod
	// ConfigMap web
	// Service web
	// manifest.yaml: document 3 (line 10): object has no apiVersion and no kind
}

func ExampleManifests() {
	manifest := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}
`
	for doc, err := range unstructured.Manifests(strings.NewReader(manifest), "stream.json") {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s document %d (line %d): %s\n", doc.Source, doc.Index, doc.Line, doc.Object.GetName())
	}
	// Output:
	// stream.json document 1 (line 1): a
	// stream.json document 2 (line 2): b
}
