package fastjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeObjectSharedRaw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		data   string
		member string
		omit   bool
		want   string // the raw text; "" for nil
	}{
		{"object kept whole", `{"a":1,"metadata":{"name":"x","managedFields":[{"m":"k"}]}}`, "", false,
			`{"a":1,"metadata":{"name":"x","managedFields":[{"m":"k"}]}}`},
		{"managedFields last", `{"a":1,"metadata":{"name":"x","managedFields":[{"m":"k"}]}}`, "", true,
			`{"a":1,"metadata":{"name":"x"}}`},
		{"managedFields first", `{"metadata":{"managedFields":[],"name":"x","uid":"u"},"b":[1]}`, "", true,
			`{"metadata":{"name":"x","uid":"u"},"b":[1]}`},
		{"managedFields in the middle", `{"metadata":{"name":"x","managedFields":{"k":[1,"}"]},"uid":"u"}}`, "", true,
			`{"metadata":{"name":"x","uid":"u"}}`},
		{"managedFields alone", `{"metadata":{"managedFields":null}}`, "", true, `{"metadata":{}}`},
		{"whitespace", "{ \"metadata\" : { \"managedFields\" : [ ] ,\n \"name\" : \"x\" } }", "", true,
			"{ \"metadata\" : { \"name\" : \"x\" } }"},
		{"whitespace before the comma", "{\"metadata\":{\"name\":\"x\" ,\t\"managedFields\":[] }}", "", true,
			"{\"metadata\":{\"name\":\"x\" }}"},
		{"no managedFields", `{"metadata":{"name":"x"},"spec":{"managedFields":[1]}}`, "", true,
			`{"metadata":{"name":"x"},"spec":{"managedFields":[1]}}`},
		{"empty object", `  {}  `, "", true, `{}`},
		{"watch event", `{"type":"ADDED","object":{"kind":"K","metadata":{"name":"x","managedFields":[{"f":{}}]},"data":{"k":"v"}}}`, "object", true,
			`{"kind":"K","metadata":{"name":"x"},"data":{"k":"v"}}`},
		{"watch event, kept", `{"type":"ADDED","object":{"metadata":{"managedFields":[]}}}`, "object", false,
			`{"metadata":{"managedFields":[]}}`},
		{"watch event without an object", `{"type":"ADDED","object":"x"}`, "object", true, ""},
		{"duplicate managedFields", `{"metadata":{"managedFields":[],"name":"x","managedFields":[]}}`, "", true, ""},
		{"another object after the member", `{"object":{"metadata":{"name":"x"}},"other":{"metadata":{"managedFields":[]}}}`, "object", true,
			`{"metadata":{"name":"x"}}`},
		{"the member in an array is not the member", `{"list":[{"object":{"a":1}}],"object":{"b":2}}`, "object", true, `{"b":2}`},
		{"a later duplicate that is not an object", `{"object":{},"object":""}`, "object", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, raw, err := DecodeObjectSharedRaw([]byte(tc.data), tc.member, tc.omit)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if raw != nil {
					t.Fatalf("raw %q, want none", raw)
				}
				return
			}
			if string(raw) != tc.want {
				t.Fatalf("raw\n%s\nwant\n%s", raw, tc.want)
			}
			if cap(raw) != len(raw) {
				t.Fatalf("not sized to fit: len %d cap %d", len(raw), cap(raw))
			}
			// The raw text decodes to the decoded object.
			obj := m
			if tc.member != "" {
				obj = m[tc.member].(map[string]any)
			}
			back, err := DecodeObject(raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj, back); diff != "" {
				t.Fatalf("(-decoded +raw):\n%s", diff)
			}
		})
	}
	if _, raw, err := DecodeObjectSharedRaw([]byte(`{"metadata":{"managedFields":[}}`), "", true); err == nil || raw != nil {
		t.Fatalf("bad JSON: raw %q, err %v", raw, err)
	}
	// The pooled decoders are left as they were: a plain shared decode
	// afterwards reports nothing raw-related and omits nothing.
	m, err := DecodeObjectShared([]byte(`{"metadata":{"managedFields":[1]}}`))
	if err != nil || m["metadata"].(map[string]any)["managedFields"] == nil {
		t.Fatalf("%v %v", m, err)
	}
}

// TestDecodeObjectSharedRawGenerated checks generated ConfigMaps as a
// server encodes them: each one's raw text decodes to the decoded object
// and holds no managedFields.
func TestDecodeObjectSharedRawGenerated(t *testing.T) {
	list, err := DecodeObject(genList(50, 7))
	if err != nil {
		t.Fatal(err)
	}
	for i, item := range list["items"].([]any) {
		data, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		m, raw, err := DecodeObjectSharedRaw(data, "", true)
		if err != nil || raw == nil {
			t.Fatalf("item %d: raw %v, %v", i, raw != nil, err)
		}
		back, err := DecodeObject(raw)
		if err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("item %d (-decoded +raw):\n%s", i, diff)
		}
		if bytes.Contains(raw, []byte(`"managedFields"`)) || len(raw) >= len(data) {
			t.Fatalf("item %d: managedFields left in (%d of %d bytes)", i, len(raw), len(data))
		}
	}
}

func FuzzDecodeObjectSharedRaw(f *testing.F) {
	f.Add([]byte(`{"metadata":{"managedFields":[{"a":1}],"name":"x"}}`), uint8(0), true)
	f.Add([]byte(`{"object":{"metadata":{"name":"x","managedFields":[]}},"type":"ADDED"}`), uint8(1), true)
	f.Add([]byte(`{"a":{"metadata":{}},"b":{"metadata":{"managedFields":1}}}`), uint8(1), false)
	f.Add([]byte(`{"object":{},"x":{"metadata":{"managedFields":[]}},"object":""}`), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, d uint8, omit bool) {
		member := ""
		if d%2 == 1 {
			member = "object"
		}
		m, raw, err := DecodeObjectSharedRaw(data, member, omit)
		if err != nil || raw == nil {
			return
		}
		back, err := DecodeObject(raw)
		if err != nil {
			t.Fatalf("raw %q of %q does not decode: %v", raw, data, err)
		}
		want := any(m)
		if member != "" {
			want = m[member]
		}
		if !reflect.DeepEqual(want, back) {
			t.Fatalf("raw %q decodes to %v; the object is %v", raw, back, want)
		}
	})
}
