package unstructured

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testPod returns a fresh object in unstructured form.
func testPod() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name": "web",
			"labels": map[string]any{
				"app.kubernetes.io/name": "web",
				"tier":                   "front",
			},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"ratio":    1.5,
			"paused":   false,
			"args":     []any{"a", "b"},
			"mixed":    []any{"a", int64(1)},
			"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1"},
				map[string]any{"name": "side", "image": "envoy:2"},
			},
			"nothing": nil,
		},
		"data": map[string]any{"0": "zero", "a.b": "dotted", `back\slash`: "bs", "[x]": "brackets"},
	}
}

func TestGet(t *testing.T) {
	tests := []struct {
		path      string
		want      any
		wantFound bool
		wantErr   string
	}{
		{path: "metadata.name", want: "web", wantFound: true},
		{path: ".metadata.name", want: "web", wantFound: true},
		{path: `metadata.labels.app\.kubernetes\.io/name`, want: "web", wantFound: true},
		{path: "spec.containers[0].image", want: "nginx:1", wantFound: true},
		{path: "spec.containers.1.image", want: "envoy:2", wantFound: true},
		{path: "spec.containers[1]", want: map[string]any{"name": "side", "image": "envoy:2"}, wantFound: true},
		{path: "spec.args[1]", want: "b", wantFound: true},
		{path: "data.0", want: "zero", wantFound: true},
		{path: `data.a\.b`, want: "dotted", wantFound: true},
		{path: `data.back\\slash`, want: "bs", wantFound: true},
		{path: `data.\[x\]`, want: "brackets", wantFound: true},
		{path: "spec.nothing", want: nil, wantFound: true},
		{path: "spec.nothing.deeper"},
		{path: "metadata.missing"},
		{path: "missing.deeper.still"},
		{path: "spec.containers[2].image"},
		{path: "spec.containers.9"},
		{path: "spec.replicas.max", wantErr: `unstructured: .spec.replicas.max: expected map at "spec.replicas", found int64`},
		{path: "metadata.name[0]", wantErr: `unstructured: .metadata.name[0]: expected list at "metadata.name", found string`},
		{path: "metadata.labels[0]", wantErr: `unstructured: .metadata.labels[0]: expected list at "metadata.labels", found map`},
		{path: "spec.containers.name", wantErr: `unstructured: .spec.containers.name: expected map at "spec.containers", found list`},
		{path: "spec.replicas.0", wantErr: `unstructured: .spec.replicas.0: expected map or list at "spec.replicas", found int64`},
		{path: "[0]", wantErr: `unstructured: .[0]: expected list at the root, found map`},
		{path: "", wantErr: `unstructured: invalid path "": empty path`},
		{path: ".", wantErr: `unstructured: invalid path ".": empty path`},
		{path: "a..b", wantErr: `unstructured: invalid path "a..b": empty field name at offset 2`},
		{path: "a.", wantErr: `unstructured: invalid path "a.": empty field name at offset 2`},
		{path: `a\`, wantErr: `unstructured: invalid path "a\\": trailing backslash`},
		{path: "a[0", wantErr: `unstructured: invalid path "a[0": unclosed '[' at offset 1`},
		{path: "a[x]", wantErr: `unstructured: invalid path "a[x]": list index "x" at offset 1 is not a non-negative integer`},
		{path: "a[-1]", wantErr: `unstructured: invalid path "a[-1]": list index "-1" at offset 1 is not a non-negative integer`},
		{path: "a[0]b", wantErr: `unstructured: invalid path "a[0]b": expected '.' or '[' after ']' at offset 4`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, found, err := Get(testPod(), tt.path)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if found != tt.wantFound {
				t.Errorf("found = %v, want %v", found, tt.wantFound)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSet(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		value   any
		check   string // path to read back; defaults to path
		want    any
		wantErr string
	}{
		{name: "existing", path: "metadata.name", value: "api", want: "api"},
		{name: "escaped key", path: `metadata.labels.app\.kubernetes\.io/version`, value: "1.0", want: "1.0"},
		{name: "creates maps", path: "metadata.annotations.note", value: "x", want: "x"},
		{name: "replaces null", path: "spec.nothing.inner", value: "x", want: "x"},
		{name: "list element", path: "spec.containers[1].image", value: "envoy:3", want: "envoy:3"},
		{name: "dotted index", path: "spec.containers.0.image", value: "nginx:2", want: "nginx:2"},
		{name: "append", path: "spec.args[2]", value: "c", check: "spec.args", want: []any{"a", "b", "c"}},
		{name: "append map", path: "spec.containers[2].name", value: "third", check: "spec.containers[2]", want: map[string]any{"name": "third"}},
		{name: "new list", path: "spec.volumes[0].name", value: "data", check: "spec.volumes", want: []any{map[string]any{"name": "data"}}},
		{name: "int becomes int64", path: "spec.replicas", value: 5, want: int64(5)},
		{name: "uint32", path: "spec.replicas", value: uint32(7), want: int64(7)},
		{name: "float32", path: "spec.ratio", value: float32(0.5), want: 0.5},
		{name: "string slice", path: "spec.args", value: []string{"x"}, want: []any{"x"}},
		{name: "string map", path: "metadata.labels", value: map[string]string{"a": "b"}, want: map[string]any{"a": "b"}},
		{name: "struct via JSON", path: "spec.thing", value: struct {
			N int    `json:"n"`
			S string `json:"s"`
		}{N: 1, S: "x"}, want: map[string]any{"n": int64(1), "s": "x"}},
		{name: "nested int in map", path: "spec.limits", value: map[string]any{"cpu": 2}, want: map[string]any{"cpu": int64(2)}},
		{name: "index out of range", path: "spec.args[5]", value: "x", wantErr: `unstructured: .spec.args[5]: index 5 out of range for "spec.args" (length 2)`},
		{name: "through a string", path: "metadata.name.first", value: "x", wantErr: `unstructured: .metadata.name.first: expected map at "metadata.name", found string`},
		{name: "bracket on map", path: "metadata[0]", value: "x", wantErr: `unstructured: .metadata[0]: expected list at "metadata", found map`},
		{name: "key on list", path: "spec.args.x", value: "x", wantErr: `unstructured: .spec.args.x: expected map at "spec.args", found list`},
		{name: "NaN", path: "spec.ratio", value: nan(), wantErr: `unstructured: set .spec.ratio: NaN is not a JSON number`},
		{name: "uint64 overflow", path: "spec.replicas", value: uint64(1 << 63), wantErr: `unstructured: set .spec.replicas: 9223372036854775808 overflows int64`},
		{name: "channel", path: "spec.ch", value: make(chan int), wantErr: `unstructured: set .spec.ch: json: unsupported type: chan int`},
		{name: "bad path", path: "a..b", value: "x", wantErr: `unstructured: invalid path "a..b": empty field name at offset 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := testPod()
			err := Set(obj, tt.path, tt.value)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			check := tt.check
			if check == "" {
				check = tt.path
			}
			got, found, err := Get(obj, check)
			if err != nil || !found {
				t.Fatalf("Get(%q) = %v, %v, %v", check, got, found, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			// The object must stay valid for apimachinery's DeepCopy.
			(&apiunstructured.Unstructured{Object: obj}).DeepCopy()
		})
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestSetCopiesValue(t *testing.T) {
	obj := map[string]any{}
	v := map[string]any{"a": "b"}
	if err := Set(obj, "x", v); err != nil {
		t.Fatal(err)
	}
	v["a"] = "changed"
	if got := obj["x"].(map[string]any)["a"]; got != "b" {
		t.Errorf("stored value changed with the caller's map: %v", got)
	}
	if err := Set(nil, "x", 1); err == nil {
		t.Error("Set on a nil map: no error")
	}
}

func TestRemove(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		wantRemoved bool
		wantErr     string
		check       string
		want        any
	}{
		{name: "key", path: "metadata.name", wantRemoved: true, check: "metadata", want: map[string]any{
			"labels": map[string]any{"app.kubernetes.io/name": "web", "tier": "front"},
		}},
		{name: "escaped key", path: `metadata.labels.app\.kubernetes\.io/name`, wantRemoved: true, check: "metadata.labels", want: map[string]any{"tier": "front"}},
		{name: "list element", path: "spec.containers[0]", wantRemoved: true, check: "spec.containers", want: []any{
			map[string]any{"name": "side", "image": "envoy:2"},
		}},
		{name: "last list element", path: "spec.args.1", wantRemoved: true, check: "spec.args", want: []any{"a"}},
		{name: "inside list element", path: "spec.containers[1].image", wantRemoved: true, check: "spec.containers[1]", want: map[string]any{"name": "side"}},
		{name: "missing key", path: "metadata.nope"},
		{name: "missing parent", path: "nope.nope"},
		{name: "null parent", path: "spec.nothing.x"},
		{name: "index out of range", path: "spec.args[7]"},
		{name: "type error", path: "metadata.name.x", wantErr: `unstructured: .metadata.name.x: expected map at "metadata.name", found string`},
		{name: "type error on parent path", path: "metadata.name.x.y", wantErr: `unstructured: .metadata.name.x.y: expected map at "metadata.name", found string`},
		{name: "key on list", path: "spec.args.x", wantErr: `unstructured: .spec.args.x: expected map at "spec.args", found list`},
		{name: "bad path", path: "", wantErr: `unstructured: invalid path "": empty path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := testPod()
			removed, err := Remove(obj, tt.path)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if removed != tt.wantRemoved {
				t.Errorf("removed = %v, want %v", removed, tt.wantRemoved)
			}
			if tt.check == "" {
				if diff := cmp.Diff(testPod(), obj); diff != "" {
					t.Errorf("object changed (-want +got):\n%s", diff)
				}
				return
			}
			got, _, _ := Get(obj, tt.check)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("after remove (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemoveDoesNotShiftSharedSlice(t *testing.T) {
	obj := testPod()
	before, _, _ := GetSlice(obj, "spec.args")
	if _, err := Remove(obj, "spec.args[0]"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"a", "b"}, before); diff != "" {
		t.Errorf("old slice changed (-want +got):\n%s", diff)
	}
}

func TestTypedGetters(t *testing.T) {
	obj := testPod()
	obj["num"] = map[string]any{
		"float":    2.0,
		"frac":     2.5,
		"number":   json.Number("12"),
		"int":      7,
		"bignum":   1e300,
		"notanint": json.Number("1.5"),
	}
	type result struct {
		Value any
		Found bool
		Err   string
	}
	wrap := func(v any, found bool, err error) result { return result{v, found, errString(err)} }
	tests := []struct {
		name string
		got  result
		want result
	}{
		{"string", wrap(GetString(obj, "metadata.name")), result{"web", true, ""}},
		{"string missing", wrap(GetString(obj, "metadata.nope")), result{"", false, ""}},
		{"string null", wrap(GetString(obj, "spec.nothing")), result{"", false, ""}},
		{"string wrong", wrap(GetString(obj, "spec.replicas")), result{"", false, "unstructured: .spec.replicas: expected string, found int64"}},
		{"string bad path", wrap(GetString(obj, "a..b")), result{"", false, `unstructured: invalid path "a..b": empty field name at offset 2`}},
		{"bool", wrap(GetBool(obj, "spec.paused")), result{false, true, ""}},
		{"bool wrong", wrap(GetBool(obj, "metadata.name")), result{false, false, "unstructured: .metadata.name: expected bool, found string"}},
		{"int64", wrap(GetInt64(obj, "spec.replicas")), result{int64(3), true, ""}},
		{"int64 from integral float", wrap(GetInt64(obj, "num.float")), result{int64(2), true, ""}},
		{"int64 from json.Number", wrap(GetInt64(obj, "num.number")), result{int64(12), true, ""}},
		{"int64 from int", wrap(GetInt64(obj, "num.int")), result{int64(7), true, ""}},
		{"int64 fraction", wrap(GetInt64(obj, "num.frac")), result{int64(0), false, "unstructured: .num.frac: expected integer, found float64"}},
		{"int64 huge", wrap(GetInt64(obj, "num.bignum")), result{int64(0), false, "unstructured: .num.bignum: expected integer, found float64"}},
		{"int64 json fraction", wrap(GetInt64(obj, "num.notanint")), result{int64(0), false, "unstructured: .num.notanint: expected integer, found number"}},
		{"float64", wrap(GetFloat64(obj, "spec.ratio")), result{1.5, true, ""}},
		{"float64 from int64", wrap(GetFloat64(obj, "spec.replicas")), result{3.0, true, ""}},
		{"float64 from json.Number", wrap(GetFloat64(obj, "num.notanint")), result{1.5, true, ""}},
		{"float64 wrong", wrap(GetFloat64(obj, "metadata.name")), result{0.0, false, "unstructured: .metadata.name: expected number, found string"}},
		{"map", wrap(GetMap(obj, "spec.containers[0]")), result{map[string]any{"name": "app", "image": "nginx:1"}, true, ""}},
		{"map wrong", wrap(GetMap(obj, "spec.args")), result{map[string]any(nil), false, "unstructured: .spec.args: expected map, found list"}},
		{"slice", wrap(GetSlice(obj, "spec.args")), result{[]any{"a", "b"}, true, ""}},
		{"slice wrong", wrap(GetSlice(obj, "metadata")), result{[]any(nil), false, "unstructured: .metadata: expected list, found map"}},
		{"string slice", wrap(GetStringSlice(obj, "spec.args")), result{[]string{"a", "b"}, true, ""}},
		{"string slice mixed", wrap(GetStringSlice(obj, "spec.mixed")), result{[]string(nil), false, "unstructured: .spec.mixed[1]: expected string, found int64"}},
		{"string slice missing", wrap(GetStringSlice(obj, "spec.none")), result{[]string(nil), false, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
