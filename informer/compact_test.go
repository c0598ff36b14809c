package informer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kdyn/kdyn/internal/fastjson"
)

func TestCompactRoundTrip(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "resourceVersion": "5", "labels": map[string]any{"x": "y"}},
		"data":     map[string]any{"s": "quote\" back\\ tab\t nl\n ctl\x01 uni é \u2028 <&>", "empty": ""},
		"spec":     map[string]any{"i": int64(-42), "f": 1.5, "big": 1e300, "small": 1e-9, "t": true, "n": nil, "list": []any{int64(1), "two", []any{}, map[string]any{}}},
	}
	c := newCompactStorage()
	if err := c.put("ns/a", &unstructured.Unstructured{Object: obj}); err != nil {
		t.Fatal(err)
	}
	raw := c.m["ns/a"].raw
	if cap(raw) != len(raw) {
		t.Fatalf("entry not exactly sized: len %d cap %d", len(raw), cap(raw))
	}
	back, err := fastjson.DecodeObject(raw)
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if diff := cmp.Diff(obj, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if rv, ok := c.resourceVersion("ns/a"); !ok || rv != "5" {
		t.Fatalf("rv %q", rv)
	}
	got, ok := c.get("ns/a")
	if !ok || got.GetName() != "a" {
		t.Fatal("get")
	}
}
