package unstructured

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// patchCases are pairs of documents that both patch builders must turn
// into each other. jsonPatch is the exact JSON patch expected, when given.
var patchCases = []struct {
	name       string
	original   string
	modified   string
	mergePatch string
	jsonPatch  string
}{
	{
		name:       "no change",
		original:   `{"a":1,"b":[1,2]}`,
		modified:   `{"b":[1,2],"a":1}`,
		mergePatch: `{}`,
		jsonPatch:  `[]`,
	},
	{
		name:       "scalar change",
		original:   `{"spec":{"replicas":1}}`,
		modified:   `{"spec":{"replicas":3}}`,
		mergePatch: `{"spec":{"replicas":3}}`,
		jsonPatch:  `[{"op":"replace","path":"/spec/replicas","value":3}]`,
	},
	{
		name:       "add and remove keys, sorted",
		original:   `{"b":1,"d":2}`,
		modified:   `{"a":0,"d":2,"c":{"x":true}}`,
		mergePatch: `{"a":0,"b":null,"c":{"x":true}}`,
		jsonPatch:  `[{"op":"add","path":"/a","value":0},{"op":"remove","path":"/b"},{"op":"add","path":"/c","value":{"x":true}}]`,
	},
	{
		name:       "pointer escaping",
		original:   `{"metadata":{"annotations":{"a/b":"1","t~x":"2","~1":"3"}}}`,
		modified:   `{"metadata":{"annotations":{"a/b":"9","t~x":"8","~1":"7"}}}`,
		mergePatch: `{"metadata":{"annotations":{"a/b":"9","t~x":"8","~1":"7"}}}`,
		jsonPatch:  `[{"op":"replace","path":"/metadata/annotations/a~1b","value":"9"},{"op":"replace","path":"/metadata/annotations/t~0x","value":"8"},{"op":"replace","path":"/metadata/annotations/~01","value":"7"}]`,
	},
	{
		name:       "list element changed",
		original:   `{"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y:1"}]}}`,
		modified:   `{"spec":{"containers":[{"name":"a","image":"x:2"},{"name":"b","image":"y:1"}]}}`,
		mergePatch: `{"spec":{"containers":[{"image":"x:2","name":"a"},{"image":"y:1","name":"b"}]}}`,
		jsonPatch:  `[{"op":"replace","path":"/spec/containers/0/image","value":"x:2"}]`,
	},
	{
		name:       "list grows",
		original:   `{"l":[1]}`,
		modified:   `{"l":[1,2,3]}`,
		mergePatch: `{"l":[1,2,3]}`,
		jsonPatch:  `[{"op":"add","path":"/l/1","value":2},{"op":"add","path":"/l/2","value":3}]`,
	},
	{
		name:       "list shrinks, removed from the end",
		original:   `{"l":[1,2,3,4]}`,
		modified:   `{"l":[0]}`,
		mergePatch: `{"l":[0]}`,
		jsonPatch:  `[{"op":"replace","path":"/l/0","value":0},{"op":"remove","path":"/l/3"},{"op":"remove","path":"/l/2"},{"op":"remove","path":"/l/1"}]`,
	},
	{
		name:       "type change",
		original:   `{"a":{"b":1},"c":[1],"d":"s"}`,
		modified:   `{"a":[1],"c":{"x":1},"d":null}`,
		mergePatch: `{"a":[1],"c":{"x":1},"d":null}`,
		jsonPatch:  `[{"op":"replace","path":"/a","value":[1]},{"op":"replace","path":"/c","value":{"x":1}},{"op":"replace","path":"/d","value":null}]`,
	},
	{
		name:       "numbers compared by value and kept as written",
		original:   `{"a":1,"b":1.5,"big":12345678901234567890}`,
		modified:   `{"a":1.0,"b":15e-1,"big":12345678901234567891}`,
		mergePatch: `{"a":1.0,"b":15e-1,"big":12345678901234567891}`, // json-patch compares numbers as text
		jsonPatch:  `[{"op":"replace","path":"/big","value":12345678901234567891}]`,
	},
	{
		name:       "empty key and unicode",
		original:   `{"":1,"ü":"a"}`,
		modified:   `{"":2,"ü":"b"}`,
		mergePatch: `{"":2,"ü":"b"}`,
		jsonPatch:  `[{"op":"replace","path":"/","value":2},{"op":"replace","path":"/ü","value":"b"}]`,
	},
	{
		name:      "root arrays",
		original:  `[1,{"a":1}]`,
		modified:  `[2,{"a":2},3]`,
		jsonPatch: `[{"op":"replace","path":"/0","value":2},{"op":"replace","path":"/1/a","value":2},{"op":"add","path":"/2","value":3}]`,
	},
	{
		name:      "root type change",
		original:  `{"a":1}`,
		modified:  `[1]`,
		jsonPatch: `[{"op":"replace","path":"","value":[1]}]`,
	},
	{
		name:       "null values",
		original:   `{"a":null,"b":[null]}`,
		modified:   `{"a":1,"b":[null,null]}`,
		mergePatch: `{"a":1,"b":[null,null]}`,
		jsonPatch:  `[{"op":"replace","path":"/a","value":1},{"op":"add","path":"/b/1","value":null}]`,
	},
}

func TestMergePatch(t *testing.T) {
	for _, tt := range patchCases {
		if tt.mergePatch == "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			p, err := MergePatch([]byte(tt.original), []byte(tt.modified))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.mergePatch, string(p)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			// json-patch's merge drops nulls inside added objects; compare
			// only where modified holds no null.
			if strings.Contains(tt.modified, "null") {
				return
			}
			got, err := ApplyMergePatch([]byte(tt.original), p)
			if err != nil {
				t.Fatal(err)
			}
			assertSameJSON(t, tt.modified, got)
		})
	}
}

func TestJSONPatch(t *testing.T) {
	for _, tt := range patchCases {
		t.Run(tt.name, func(t *testing.T) {
			p, err := JSONPatch([]byte(tt.original), []byte(tt.modified))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.jsonPatch, string(p)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			got, err := ApplyJSONPatch([]byte(tt.original), p)
			if err != nil {
				t.Fatalf("applying %s: %v", p, err)
			}
			assertSameJSON(t, tt.modified, got)
		})
	}
}

// assertSameJSON compares JSON documents by value.
func assertSameJSON(t *testing.T, want string, got []byte) {
	t.Helper()
	w, err := decodeExact([]byte(want))
	if err != nil {
		t.Fatalf("want: %v", err)
	}
	g, err := decodeExact(got)
	if err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if !jsonEqual(w, g) {
		t.Errorf("documents differ:\nwant %s\ngot  %s", want, got)
	}
}

// TestJSONPatchRoundTripRandom checks, on random documents, that applying
// JSONPatch(a, b) to a gives b.
func TestJSONPatchRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a := randomObject(r, 4)
		b := mutate(r, a, 4)
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		p, err := JSONPatch(aj, bj)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := ApplyJSONPatch(aj, p)
		if err != nil {
			t.Fatalf("case %d: applying %s to %s: %v", i, p, aj, err)
		}
		g, _ := decodeExact(got)
		w, _ := decodeExact(bj)
		if !jsonEqual(w, g) {
			t.Fatalf("case %d:\noriginal %s\nmodified %s\npatch    %s\ngot      %s", i, aj, bj, p, got)
		}
		again, _ := JSONPatch(aj, bj)
		if string(again) != string(p) {
			t.Fatalf("case %d: not deterministic:\n%s\n%s", i, p, again)
		}
	}
}

var randomKeys = []string{"a", "b", "a/b", "~", "~1", "", "spec", "x.y"}

func randomValue(r *rand.Rand, depth int) any {
	n := 6
	if depth <= 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return float64(r.IntN(5))
	case 3:
		return fmt.Sprint("s", r.IntN(3))
	case 4:
		return randomObject(r, depth-1)
	default:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	}
}

func randomObject(r *rand.Rand, depth int) map[string]any {
	m := map[string]any{}
	for range r.IntN(4) {
		m[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth-1)
	}
	return m
}

// mutate returns a changed deep copy of v.
func mutate(r *rand.Rand, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch r.IntN(4) {
			case 0: // drop
			case 1:
				out[k] = randomValue(r, depth-1)
			default:
				out[k] = mutate(r, e, depth-1)
			}
		}
		if r.IntN(3) == 0 {
			out[randomKeys[r.IntN(len(randomKeys))]] = randomValue(r, depth-1)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range x {
			if r.IntN(4) != 0 {
				out = append(out, mutate(r, e, depth-1))
			}
		}
		for range r.IntN(3) {
			out = append(out, randomValue(r, depth-1))
		}
		return out
	default:
		if r.IntN(2) == 0 {
			return randomValue(r, depth-1)
		}
		return v
	}
}

func TestPatchDocTypes(t *testing.T) {
	orig := &apiunstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "1"}}}
	mod := &apiunstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": map[string]any{"a": "2", "b": "3"}}}

	mp, err := MergePatch(orig, mod)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"data":{"a":"2","b":"3"}}`, string(mp)); diff != "" {
		t.Errorf("merge patch (-want +got):\n%s", diff)
	}
	got, err := ApplyMergePatch(orig, mp)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mod, got); diff != "" {
		t.Errorf("ApplyMergePatch(*Unstructured) (-want +got):\n%s", diff)
	}

	jp, err := JSONPatch(orig.Object, mod.Object)
	if err != nil {
		t.Fatal(err)
	}
	gotMap, err := ApplyJSONPatch(orig.Object, jp)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mod.Object, gotMap); diff != "" {
		t.Errorf("ApplyJSONPatch(map) (-want +got):\n%s", diff)
	}
	if orig.Object["data"].(map[string]any)["a"] != "1" {
		t.Error("apply changed its input")
	}

	// Integers come back as int64, as apimachinery's decoding gives them.
	withInt, err := ApplyMergePatch(map[string]any{"n": int64(1)}, []byte(`{"n":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"n": int64(2)}, withInt); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPatchErrors(t *testing.T) {
	var nilObj *apiunstructured.Unstructured
	tests := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"merge nil original", func() error {
			_, err := MergePatch(nilObj, &apiunstructured.Unstructured{Object: map[string]any{}})
			return err
		}, "unstructured: merge patch: original: nil object"},
		{"merge empty modified", func() error { _, err := MergePatch([]byte(`{}`), []byte(" ")); return err }, "unstructured: merge patch: modified: empty document"},
		{"merge invalid JSON", func() error { _, err := MergePatch([]byte(`{`), []byte(`{}`)); return err }, "unstructured: merge patch: original: invalid JSON"},
		{"merge arrays", func() error { _, err := MergePatch([]byte(`[1]`), []byte(`[2]`)); return err }, "unstructured: merge patch: original: expected a JSON object"},
		{"json patch invalid", func() error { _, err := JSONPatch([]byte(`{}`), []byte(`{"a":`)); return err }, "unstructured: JSON patch: modified: unexpected EOF"},
		{"json patch trailing data", func() error { _, err := JSONPatch([]byte(`{} {}`), []byte(`{}`)); return err }, "unstructured: JSON patch: original: unexpected data after the JSON value"},
		{"json patch unencodable", func() error {
			_, err := JSONPatch(map[string]any{}, map[string]any{"c": make(chan int)})
			return err
		}, "unstructured: JSON patch: modified: json: unsupported type: chan int"},
		{"apply json patch bad patch", func() error { _, err := ApplyJSONPatch([]byte(`{}`), []byte(`{"op":"add"}`)); return err }, "unstructured: apply JSON patch: json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
		{"apply json patch missing path", func() error {
			_, err := ApplyJSONPatch([]byte(`{}`), []byte(`[{"op":"remove","path":"/a"}]`))
			return err
		}, `unstructured: apply JSON patch: error in remove for path: '/a': unable to remove nonexistent key: a: missing value`},
		{"apply merge patch result not an object", func() error {
			_, err := ApplyMergePatch(map[string]any{}, []byte(`[1]`))
			return err
		}, "unstructured: apply merge patch: result: expected a JSON object, found list"},
		{"apply to nil map", func() error { _, err := ApplyMergePatch(map[string]any(nil), []byte(`{}`)); return err }, "unstructured: apply merge patch: document: nil object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantErr, errString(tt.run())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestThreeWayMergePatch(t *testing.T) {
	tests := []struct {
		name        string
		lastApplied string
		modified    string
		live        string
		want        string
	}{
		{
			name:     "first apply: only what modified sets and live lacks",
			modified: `{"spec":{"size":3,"mode":"fast"}}`,
			live:     `{"metadata":{"uid":"u"},"spec":{"size":3},"status":{"ok":true}}`,
			want:     `{"spec":{"mode":"fast"}}`,
		},
		{
			name:        "field dropped from the manifest is deleted",
			lastApplied: `{"spec":{"size":3,"mode":"fast"},"metadata":{"labels":{"a":"1","b":"2"}}}`,
			modified:    `{"spec":{"size":3},"metadata":{"labels":{"a":"1"}}}`,
			live:        `{"spec":{"size":3,"mode":"fast","defaulted":1},"metadata":{"labels":{"a":"1","b":"2","c":"3"}}}`,
			want:        `{"metadata":{"labels":{"b":null}},"spec":{"mode":null}}`,
		},
		{
			name:        "field never applied is kept",
			lastApplied: `{"spec":{"size":3}}`,
			modified:    `{"spec":{"size":3}}`,
			live:        `{"spec":{"size":3,"other":"set by someone else"}}`,
			want:        `{}`,
		},
		{
			name:        "drift in an applied field is overwritten",
			lastApplied: `{"spec":{"size":3}}`,
			modified:    `{"spec":{"size":3}}`,
			live:        `{"spec":{"size":5}}`,
			want:        `{"spec":{"size":3}}`,
		},
		{
			name:        "deleted field already gone from live",
			lastApplied: `{"spec":{"old":1}}`,
			modified:    `{"spec":{}}`,
			live:        `{"spec":{}}`,
			want:        `{}`,
		},
		{
			name:        "whole map dropped",
			lastApplied: `{"spec":{"tls":{"on":true}}}`,
			modified:    `{"spec":{}}`,
			live:        `{"spec":{"tls":{"on":true,"port":443}}}`,
			want:        `{"spec":{"tls":null}}`,
		},
		{
			name:        "lists are replaced whole",
			lastApplied: `{"spec":{"ports":[80]}}`,
			modified:    `{"spec":{"ports":[80,443]}}`,
			live:        `{"spec":{"ports":[80]}}`,
			want:        `{"spec":{"ports":[80,443]}}`,
		},
		{
			name:     "equal lists are left alone",
			modified: `{"spec":{"ports":[{"p":80}]}}`,
			live:     `{"spec":{"ports":[{"p":80}]}}`,
			want:     `{}`,
		},
		{
			name:     "map replaces a scalar",
			modified: `{"spec":{"a":{"b":1}}}`,
			live:     `{"spec":{"a":"x"}}`,
			want:     `{"spec":{"a":{"b":1}}}`,
		},
		{
			name:     "explicit null deletes",
			modified: `{"spec":{"a":null,"b":null}}`,
			live:     `{"spec":{"a":1}}`,
			want:     `{"spec":{"a":null}}`,
		},
		{
			name:        "numbers compared by value",
			lastApplied: `{"spec":{"n":1}}`,
			modified:    `{"spec":{"n":1.0}}`,
			live:        `{"spec":{"n":1}}`,
			want:        `{}`,
		},
		{
			name:        "last applied null",
			lastApplied: `null`,
			modified:    `{"a":1}`,
			live:        `{}`,
			want:        `{"a":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ThreeWayMergePatch([]byte(tt.lastApplied), []byte(tt.modified), []byte(tt.live))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(p)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			got, err := ApplyMergePatch([]byte(tt.live), p)
			if err != nil {
				t.Fatal(err)
			}
			checkApplied(t, tt.lastApplied, tt.modified, tt.live, got)
		})
	}
}

// checkApplied checks the result of applying a three-way patch to live:
// every field modified sets has modified's value, every field dropped
// since lastApplied is gone, and every other live field is unchanged.
func checkApplied(t *testing.T, lastApplied, modified, live string, result []byte) {
	t.Helper()
	dec := func(s string) map[string]any {
		if s == "" {
			return nil
		}
		v, err := decodeExact([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		m, _ := v.(map[string]any)
		return m
	}
	var walk func(path string, last, mod, live, got map[string]any)
	walk = func(path string, last, mod, live, got map[string]any) {
		for k, mv := range mod {
			gv, ok := got[k]
			if mv == nil {
				if ok {
					t.Errorf("%s/%s: want deleted (null in modified), got %v", path, k, gv)
				}
				continue
			}
			if mm, isMap := mv.(map[string]any); isMap {
				gm, _ := gv.(map[string]any)
				lm, _ := live[k].(map[string]any)
				lastm, _ := last[k].(map[string]any)
				if gm == nil {
					t.Errorf("%s/%s: want a map, got %v", path, k, gv)
					continue
				}
				walk(path+"/"+k, lastm, mm, lm, gm)
				continue
			}
			if !ok || !jsonEqual(mv, gv) {
				t.Errorf("%s/%s: got %v, want %v", path, k, gv, mv)
			}
		}
		for k, lv := range live {
			if _, inMod := mod[k]; inMod {
				continue
			}
			_, inLast := last[k]
			gv, inGot := got[k]
			switch {
			case inLast && inGot:
				t.Errorf("%s/%s: want deleted (dropped from the manifest), got %v", path, k, gv)
			case !inLast && (!inGot || !jsonEqual(lv, gv)):
				t.Errorf("%s/%s: live value %v changed to %v", path, k, lv, gv)
			}
		}
	}
	walk("", dec(lastApplied), dec(modified), dec(live), dec(string(result)))
}

func TestThreeWayMergePatchRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		last := randomObject(r, 4)
		mod := mutate(r, last, 4).(map[string]any)
		live := mutate(r, last, 4).(map[string]any)
		stripNulls(mod) // nulls in modified mean "delete", tested above
		lj, _ := json.Marshal(last)
		mj, _ := json.Marshal(mod)
		vj, _ := json.Marshal(live)
		p, err := ThreeWayMergePatch(lj, mj, vj)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := ApplyMergePatch(vj, p)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkApplied(t, string(lj), string(mj), string(vj), got)
			if t.Failed() {
				t.Logf("last %s\nmod  %s\nlive %s\npatch %s\ngot  %s", lj, mj, vj, p, got)
			}
		})
	}
}

// stripNulls removes null values from maps, recursively, lists included:
// json-patch drops them from maps inside lists when it applies a merge
// patch (RFC 7386 would keep them), as the API server does too.
func stripNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			stripNulls(e)
		}
	case []any:
		for _, e := range x {
			stripNulls(e)
		}
	}
}

func TestThreeWayMergePatchErrors(t *testing.T) {
	tests := []struct {
		name                   string
		lastApplied, mod, live string
		wantErr                string
	}{
		{"bad last applied", `{`, `{}`, `{}`, "unstructured: three-way merge patch: last applied: unexpected EOF"},
		{"last applied a list", `[1]`, `{}`, `{}`, "unstructured: three-way merge patch: last applied: expected a JSON object, found list"},
		{"empty modified", ``, ``, `{}`, "unstructured: three-way merge patch: modified: empty document"},
		{"modified a string", ``, `"x"`, `{}`, "unstructured: three-way merge patch: modified: expected a JSON object, found string"},
		{"bad live", ``, `{}`, `{"a"}`, "unstructured: three-way merge patch: live: invalid character '}' after object key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ThreeWayMergePatch([]byte(tt.lastApplied), []byte(tt.mod), []byte(tt.live))
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
