package fastjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeList(t *testing.T) {
	body := []byte(` {"kind":"PodList","items":[{"metadata":{"name":"a"}} , {"metadata":{"name":"b"},"n":1.5}],"apiVersion":"v1","metadata":{"resourceVersion":"7"}} `)
	for _, opts := range []Options{{}, {InternKeys: true, InternValues: true}} {
		d := NewDecoder(opts)
		var got []map[string]any
		var idx []int
		list, err := d.DecodeList(body, func(i int, obj map[string]any) error {
			idx = append(idx, i)
			got = append(got, obj)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantList := map[string]any{"kind": "PodList", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "7"}}
		if !reflect.DeepEqual(list, wantList) {
			t.Errorf("list = %v, want %v", list, wantList)
		}
		wantItems := []map[string]any{{"metadata": map[string]any{"name": "a"}}, {"metadata": map[string]any{"name": "b"}, "n": 1.5}}
		if !reflect.DeepEqual(got, wantItems) || !reflect.DeepEqual(idx, []int{0, 1}) {
			t.Errorf("items = %v %v, want %v", idx, got, wantItems)
		}

		// nil callback: items collected like encoding/json would.
		list, err = d.DecodeList(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		full, _ := Decode(body)
		if !reflect.DeepEqual(list, full) {
			t.Errorf("DecodeList(nil) = %v, want %v", list, full)
		}
	}
}

func TestDecodeListShapes(t *testing.T) {
	tests := []struct {
		in        string
		wantList  map[string]any
		wantItems int
	}{
		{`{}`, map[string]any{}, 0},
		{`{"kind":"List"}`, map[string]any{"kind": "List"}, 0},
		{`{"items":null,"kind":"List"}`, map[string]any{"kind": "List"}, 0},
		{`{"items":[]}`, map[string]any{}, 0},
		{`{"items":[{},{},{}]}`, map[string]any{}, 3},
		{`{"metadata":{"items":[1]},"items":[{"items":[2]}]}`, map[string]any{"metadata": map[string]any{"items": []any{int64(1)}}}, 1},
		{`{"kind":"A","kind":"B","items":[{}]}`, map[string]any{"kind": "B"}, 1},
	}
	d := NewDecoder(Options{})
	for _, tt := range tests {
		n := 0
		list, err := d.DecodeList([]byte(tt.in), func(int, map[string]any) error { n++; return nil })
		if err != nil || !reflect.DeepEqual(list, tt.wantList) || n != tt.wantItems {
			t.Errorf("DecodeList(%s) = %v, %d items, %v; want %v, %d items", tt.in, list, n, err, tt.wantList, tt.wantItems)
		}
	}
	// With a nil callback, "items": null is kept as encoding/json keeps it.
	list, err := d.DecodeList([]byte(`{"items":null}`), nil)
	if err != nil || !reflect.DeepEqual(list, map[string]any{"items": nil}) {
		t.Errorf("DecodeList(items null, nil) = %#v, %v", list, err)
	}
	list, err = d.DecodeList([]byte(`{"items":[]}`), nil)
	if err != nil || !reflect.DeepEqual(list, map[string]any{"items": []any{}}) {
		t.Errorf("DecodeList(items [], nil) = %#v, %v", list, err)
	}
}

func TestDecodeListErrors(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{``, "unexpected end of JSON input at offset 0"},
		{`[]`, "list is not an object at offset 0"},
		{`null`, "list is not an object"},
		{`{"items":{}}`, `list "items" is not an array at offset 9`},
		{`{"items":"x"}`, `list "items" is not an array`},
		{`{"items":[{},1]}`, "list item 1 is not an object at offset 13"},
		{`{"items":[null]}`, "list item 0 is not an object at offset 10"},
		{`{"items":[[]]}`, "list item 0 is not an object"},
		{`{"items":[{}],"items":[{}]}`, `duplicate "items" key in list at offset 14`},
		{`{"items":[{}] x`, "invalid character 'x' after object key:value pair"},
		{`{"items":[{} {}]}`, "after array element"},
		{`{"items":[{"a":}]}`, "looking for beginning of value"},
		{`{"items":[{}]} {}`, "after top-level value"},
		{`{"items":[{}`, "unexpected end of JSON input"},
		{`{"items":[`, "unexpected end of JSON input"},
		{`{"items":`, "unexpected end of JSON input"},
		{`{"items":x}`, "invalid character 'x' looking for beginning of value"},
		{`{"items" [`, "after object key"},
		{`{"kind":1e999,"items":[]}`, "out of float64 range"},
		{`{"items":[` + strings.Repeat("{\"a\":", maxDepth) + strings.Repeat("}", maxDepth) + `]}`, "exceeded max depth"},
	}
	d := NewDecoder(Options{})
	for _, tt := range tests {
		for _, cb := range []func(int, map[string]any) error{nil, func(int, map[string]any) error { return nil }} {
			list, err := d.DecodeList([]byte(tt.in), cb)
			if err == nil || !strings.Contains(err.Error(), tt.err) || list != nil {
				t.Errorf("DecodeList(%.50s) = %v, %v; want error %q", tt.in, list, err, tt.err)
			}
		}
	}

	// The callback's error stops decoding and is returned unchanged.
	stop := errors.New("stop")
	calls := 0
	_, err := d.DecodeList([]byte(`{"items":[{},{},{}]}`), func(i int, _ map[string]any) error {
		calls++
		if i == 1 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("callback error: got %v after %d calls", err, calls)
	}
}
