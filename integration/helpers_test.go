package integration_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kdyn/kdyn/dynamic"
	"github.com/kdyn/kdyn/integration/testenv"
)

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	cmGVR        = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployGVR    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	apiSvcGVR    = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	secretGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	randLetters  = "abcdefghijklmnopqrstuvwxyz0123456789"
	defaultWait  = 30 * time.Second
	pollInterval = 100 * time.Millisecond
)

func adminClient(t *testing.T, env *testenv.Env) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(env.RESTConfig(testenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randSuffix() string {
	b := make([]byte, 6)
	for i := range b {
		b[i] = randLetters[rand.IntN(len(randLetters))]
	}
	return string(b)
}

// newNamespace creates a namespace for one test (left behind).
func newNamespace(t *testing.T, c dynamic.Interface) string {
	t.Helper()
	return testenv.NewNamespace(t, c, "t")
}

// crdSpec describes a test CRD.
type crdSpec struct {
	group, kind, plural, singular string
	shortNames, categories        []string
	namespaced                    bool
	versions                      []string // first is the storage version
	subresources                  bool     // status and scale
	printerColumns                bool
}

func (s crdSpec) object() *unstructured.Unstructured {
	scope := "Cluster"
	if s.namespaced {
		scope = "Namespaced"
	}
	var versions []any
	for i, v := range s.versions {
		ver := map[string]any{
			"name": v, "served": true, "storage": i == 0,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
						"replicas": map[string]any{"type": "integer"}, "color": map[string]any{"type": "string", "description": "The widget's colour."}, "size": map[string]any{"type": "integer"},
					}},
					"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
						"replicas": map[string]any{"type": "integer"}, "observedGeneration": map[string]any{"type": "integer"},
					}},
				},
			}},
		}
		if s.subresources {
			ver["subresources"] = map[string]any{
				"status": map[string]any{},
				"scale":  map[string]any{"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
			}
		}
		if s.printerColumns {
			ver["additionalPrinterColumns"] = []any{
				map[string]any{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
				map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
			}
		}
		versions = append(versions, ver)
	}
	names := map[string]any{"plural": s.plural, "singular": s.singular, "kind": s.kind}
	if len(s.shortNames) > 0 {
		names["shortNames"] = toAnySlice(s.shortNames)
	}
	if len(s.categories) > 0 {
		names["categories"] = toAnySlice(s.categories)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": s.plural + "." + s.group},
		"spec":     map[string]any{"group": s.group, "scope": scope, "names": names, "versions": versions},
	}}
}

func toAnySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// createCRD creates the CRD, waits until it is Established, and deletes it
// when the test ends.
func createCRD(t *testing.T, c dynamic.Interface, s crdSpec) {
	t.Helper()
	obj := s.object()
	if _, err := c.Resource(crdGVR).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Resource(crdGVR).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
	})
	waitFor(t, "CRD "+obj.GetName()+" established", func() (bool, error) {
		got, err := c.Resource(crdGVR).Get(t.Context(), obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cd := range conds {
			m, _ := cd.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// deleteCRD deletes a CRD and waits until it is gone.
func deleteCRD(t *testing.T, c dynamic.Interface, name string) {
	t.Helper()
	if err := c.Resource(crdGVR).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "CRD "+name+" deleted", func() (bool, error) {
		_, err := c.Resource(crdGVR).Get(t.Context(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// waitFor polls cond until it holds, failing the test after defaultWait.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(defaultWait)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(pollInterval)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", defaultWait, what, lastErr)
}

func configMap(ns, name string, labels map[string]string, data map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "namespace": ns}}}
	if labels != nil {
		u.SetLabels(labels)
	}
	if data != nil {
		d := map[string]any{}
		for k, v := range data {
			d[k] = v
		}
		u.Object["data"] = d
	}
	return u
}

func uniqueGroup(prefix string) string { return fmt.Sprintf("%s-%s.kdyn.test", prefix, randSuffix()) }
