package unstructured

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestQuery(t *testing.T) {
	pod := &apiunstructured.Unstructured{Object: testPod()}
	tests := []struct {
		path   string
		want   string // Result.Raw
		exists bool
	}{
		{path: "metadata.name", want: `"web"`, exists: true},
		{path: "spec.containers.#.image", want: `["nginx:1","envoy:2"]`, exists: true},
		{path: `spec.containers.#(name=="side").image`, want: `"envoy:2"`, exists: true},
		{path: `metadata.labels.app\.kubernetes\.io/name`, want: `"web"`, exists: true},
		{path: "spec.containers.#", want: `2`, exists: true},
		{path: "spec.replicas", want: `3`, exists: true},
		{path: "metadata.nope"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := Query(pod, tt.path)
			if got.Exists() != tt.exists {
				t.Errorf("Exists() = %v, want %v", got.Exists(), tt.exists)
			}
			if diff := cmp.Diff(tt.want, got.Raw); diff != "" {
				t.Errorf("Raw (-want +got):\n%s", diff)
			}
			raw, _ := pod.MarshalJSON()
			if diff := cmp.Diff(tt.want, QueryRaw(raw, tt.path).Raw); diff != "" {
				t.Errorf("QueryRaw (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueryMany(t *testing.T) {
	pod := &apiunstructured.Unstructured{Object: testPod()}
	res := QueryMany(pod, "metadata.name", "spec.replicas", "nope")
	var got []string
	for _, r := range res {
		got = append(got, r.Raw)
	}
	if diff := cmp.Diff([]string{`"web"`, `3`, ``}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestQueryUnusableObjects(t *testing.T) {
	bad := &apiunstructured.Unstructured{Object: map[string]any{"x": math.Inf(1)}}
	for name, obj := range map[string]*apiunstructured.Unstructured{
		"nil":        nil,
		"nil map":    {},
		"not JSON":   bad,
		"empty JSON": {Object: map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			if r := Query(obj, "x"); r.Exists() {
				t.Errorf("Query: got %q, want nothing", r.Raw)
			}
			res := QueryMany(obj, "x", "y")
			if len(res) != 2 || res[0].Exists() || res[1].Exists() {
				t.Errorf("QueryMany: got %v", res)
			}
		})
	}
	if r := QueryRaw([]byte(`{"a":`), "a"); r.Exists() {
		t.Errorf("QueryRaw on truncated JSON: got %q", r.Raw)
	}
}

func TestValidPath(t *testing.T) {
	tests := []struct {
		path    string
		wantErr string
	}{
		{path: "spec.containers.#.image"},
		{path: `status.conditions.#(type=="Ready").status`},
		{path: `items.#(metadata.name%"web*")#.metadata.name`},
		{path: `{name:metadata.name,images:spec.containers.#.image}`},
		{path: `[metadata.name,spec.replicas]`},
		{path: `#(name=="a)b")`},
		{path: `#(name=="a\"b")`},
		{path: `metadata.labels.app\.kubernetes\.io/name`},
		{path: `@reverse`},
		{path: "", wantErr: "unstructured: invalid query path: empty"},
		{path: `#(name=="a"`, wantErr: `unstructured: invalid query path "#(name==\"a\"": unclosed '(' at offset 1`},
		{path: `a)`, wantErr: `unstructured: invalid query path "a)": unbalanced ')' at offset 1`},
		{path: `[a,b}`, wantErr: `unstructured: invalid query path "[a,b}": '}' at offset 4 closes '[' at offset 0`},
		{path: `#(name=="a)`, wantErr: `unstructured: invalid query path "#(name==\"a)": unterminated string at offset 8`},
		{path: `a\`, wantErr: `unstructured: invalid query path "a\\": trailing backslash`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantErr, errString(ValidPath(tt.path))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
