package fastjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Seed corpus files live in testdata/fuzz/FuzzDecode and FuzzScan (crashers
// found while fuzzing are kept there); f.Add adds the in-code corpora.

func addSeeds(f *testing.F) {
	for _, s := range handCorpus {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	for _, b := range k8sCorpus()[:6] {
		f.Add(b)
	}
}

// FuzzDecode checks Decode against k8s.io/apimachinery/pkg/util/json.Unmarshal:
// both must agree on success, and on the value when both succeed. DecodeList
// and Scan are exercised on the same input and must not panic.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	plain := NewDecoder(Options{})
	interning := NewDecoder(Options{InternKeys: true, InternValues: true})
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		wantErr := utiljson.Unmarshal(data, &want)
		for _, d := range []*Decoder{plain, interning} {
			got, err := d.Decode(data)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("fastjson error %v, util/json error %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("values differ:\nutil/json %#v\nfastjson  %#v", want, got)
			}
		}
		m, err := interning.DecodeObject(data)
		if _, isObj := want.(map[string]any); (err == nil) != (wantErr == nil && isObj) || err == nil && !reflect.DeepEqual(m, want) {
			t.Fatalf("DecodeObject = %v, %v; util/json %#v, %v", m, err, want, wantErr)
		}
		n := 0
		list, err := plain.DecodeList(data, func(int, map[string]any) error { n++; return nil })
		if err == nil {
			if wantErr != nil {
				t.Fatalf("DecodeList succeeded, util/json: %v", wantErr)
			}
			w := want.(map[string]any)
			items, _ := w["items"].([]any)
			delete(w, "items")
			if n != len(items) || !reflect.DeepEqual(list, w) {
				t.Fatalf("DecodeList = %v (%d items), want %v (%d items)", list, n, w, len(items))
			}
		}
		if err != nil && wantErr == nil {
			// Only the list-specific rules may reject valid JSON.
			ok := false
			for _, why := range []string{"list is not an object", `list "items" is not an array`, "is not an object", `duplicate "items" key`} {
				ok = ok || strings.Contains(err.Error(), why)
			}
			if !ok {
				t.Fatalf("DecodeList: %v, but util/json accepts the input", err)
			}
		}
		Scan(data)
	})
}

// FuzzScan checks Scan against json.Valid (see checkScan) and that framing a
// value followed by more input finds the same value.
func FuzzScan(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScan(t, data)
		if json.Valid(data) {
			stream := append(append(bytes.Clone(data), '\n'), data...)
			start, end, err := Scan(stream)
			if err != nil || !bytes.Equal(bytes.TrimSpace(stream[start:end]), bytes.TrimSpace(data)) {
				t.Fatalf("Scan(value + newline + value) = [%d:%d] %v", start, end, err)
			}
		}
	})
}
