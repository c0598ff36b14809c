package fastjson

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// chunked reads at most n bytes per Read.
type chunked struct {
	r io.Reader
	n int
}

func (c chunked) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// readers returns the ways a body can arrive: whole, byte by byte, in odd
// chunks, and with the final data returned together with io.EOF.
func readers(body string) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(body) },
		"bytes":   func() io.Reader { return iotest.OneByteReader(strings.NewReader(body)) },
		"chunk7":  func() io.Reader { return chunked{strings.NewReader(body), 7} },
		"dataEOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(body)) },
	}
}

// streamList runs a ListStream over r, decoding each item.
func streamList(r io.Reader) (map[string]any, []map[string]any, error) {
	s := NewListStream(r)
	var items []map[string]any
	err := s.Items(func(raw []byte) error {
		m, err := DecodeObject(raw)
		if err != nil {
			return err
		}
		items = append(items, m)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	fields, err := s.Fields()
	return fields, items, err
}

func TestListStreamMatchesDecodeList(t *testing.T) {
	bodies := []string{
		` {"kind":"PodList","items":[{"metadata":{"name":"a"}} , {"metadata":{"name":"b"},"n":1.5}],"apiVersion":"v1","metadata":{"resourceVersion":"7"}} `,
		`{}`,
		`{"kind":"List"}`,
		`{"items":null,"kind":"List"}`,
		`{"items":[]}`,
		`{"items":[{},{},{}]}`,
		`{"metadata":{"items":[1]},"items":[{"items":[2]}]}`,
		`{"kind":"A","kind":"B","items":[{}]}`,
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"x"},"items":[` +
			strings.Repeat(`{"metadata":{"name":"big","labels":{"a":"b"}},"data":{"k":"`+strings.Repeat("v", 70000)+`"}},`, 3) +
			`{"n":[1,2,3e5,-0.5,true,false,null,"\u00e9\""]}]}`,
	}
	for _, body := range bodies {
		d := NewDecoder(Options{})
		var want []map[string]any
		wantList, err := d.DecodeList([]byte(body), func(_ int, m map[string]any) error { want = append(want, m); return nil })
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range readers(body) {
			list, got, err := streamList(r())
			if err != nil {
				t.Fatalf("%s %.60s: %v", name, body, err)
			}
			if !reflect.DeepEqual(list, wantList) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %.60s: list %v items %d, want %v items %d", name, body, list, len(got), wantList, len(want))
			}
		}
	}
}

func TestListStreamFieldsBeforeItems(t *testing.T) {
	body := `{"kind":"ConfigMapList","apiVersion":"v1","items":[{"a":1},{"a":2}],"metadata":{"resourceVersion":"5"}}`
	s := NewListStream(iotest.OneByteReader(strings.NewReader(body)))
	var seen []string
	err := s.Items(func([]byte) error {
		k, _ := s.Field("kind")
		_, hasMeta := s.Field("metadata")
		seen = append(seen, string(k)+" "+map[bool]string{true: "meta", false: "nometa"}[hasMeta])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`"ConfigMapList" nometa`, `"ConfigMapList" nometa`}; !reflect.DeepEqual(seen, want) {
		t.Errorf("fields during items = %v, want %v", seen, want)
	}
	if m, _ := s.Field("metadata"); string(m) != `{"resourceVersion":"5"}` {
		t.Errorf("metadata after the list = %s", m)
	}
}

func TestListStreamErrors(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{``, "ends early, after 0 bytes"},
		{`[]`, "invalid character '[' looking for beginning of the list object at offset 0"},
		{`null`, "looking for beginning of the list object"},
		{`{"items":{}}`, `list "items" is not an array at offset 9`},
		{`{"items":"x"}`, `list "items" is not an array`},
		{`{"items":nul}`, `invalid character '}' in literal null`},
		{`{"items":[{},1]}`, "list item 1 is not an object at offset 13"},
		{`{"items":[null]}`, "list item 0 is not an object at offset 10"},
		{`{"items":[[]]}`, "list item 0 is not an object"},
		{`{"items":[{}],"items":[{}]}`, `duplicate "items" key in list at offset 22`},
		{`{"items":[{}] x`, "invalid character 'x' after object key:value pair at offset 14"},
		{`{"items":[{} {}]}`, "after array element"},
		{`{"items":[{"a":}]}`, "looking for beginning of value"},
		{`{"items":[{}]} {}`, "after top-level value at offset 15"},
		{`{"items":[{}`, "ends early"},
		{`{"items":[`, "ends early"},
		{`{"items":`, "ends early"},
		{`{"items":x}`, "invalid character 'x' looking for beginning of value at offset 9"},
		{`{"items" [`, "after object key"},
		{`{1:2}`, "looking for beginning of object key string"},
		{`{"items":[` + strings.Repeat("{\"a\":", maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1) + `]}`, "exceeded max depth"},
	}
	for _, tt := range tests {
		for name, r := range readers(tt.in) {
			err := NewListStream(r()).Items(func([]byte) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: Items(%.50s) = %v, want error %q", name, tt.in, err, tt.err)
			}
			if strings.Contains(tt.err, "ends early") && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: Items(%.50s) = %v, want io.ErrUnexpectedEOF", name, tt.in, err)
			}
		}
	}

	// A field that cannot be decoded fails Fields, not Items.
	s := NewListStream(strings.NewReader(`{"kind":1e999,"items":[]}`))
	if err := s.Items(func([]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fields(); err == nil || !strings.Contains(err.Error(), "out of float64 range") {
		t.Errorf("Fields = %v", err)
	}

	// The callback's error stops reading and is returned unchanged.
	stop := errors.New("stop")
	calls := 0
	err := NewListStream(strings.NewReader(`{"items":[{},{},{}]}`)).Items(func([]byte) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("callback error: got %v after %d calls", err, calls)
	}

	// A read error is returned as it is.
	boom := errors.New("connection reset")
	err = NewListStream(io.MultiReader(strings.NewReader(`{"items":[{}`), iotest.ErrReader(boom))).Items(func([]byte) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("read error: got %v", err)
	}
}

// FuzzListStream checks ListStream against DecodeList on any input: both
// accept it with the same items and fields, or both reject it.
func FuzzListStream(f *testing.F) {
	for _, s := range []string{`{"items":[{"a":1}],"kind":"X"}`, `{}`, `{"items":null}`, `{"items":[{},{"b":[1,{"c":"d"}]}]}`, `{"a":1,"items":[{}],"b":"\u00e9"}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		d := NewDecoder(Options{})
		var want []map[string]any
		wantList, wantErr := d.DecodeList(data, func(_ int, m map[string]any) error { want = append(want, m); return nil })
		n := int(chunk%16) + 1
		list, got, err := streamList(chunked{bytes.NewReader(data), n})
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("ListStream err %v, DecodeList err %v", err, wantErr)
		}
		if err == nil && (!reflect.DeepEqual(list, wantList) || !reflect.DeepEqual(got, want)) {
			t.Fatalf("ListStream %v %v, DecodeList %v %v", list, got, wantList, want)
		}
	})
}
