package fastjson

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// handCorpus holds hand-written inputs, valid and invalid, that exercise
// every feature and error path.
var handCorpus = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `nulx`, `truE`, `0`, `-0`, `-0.0`, `1`, `-1`, `01`, `1.`, `.1`, `1e`, `1e+`, `1E-2`,
	`1.5e+300`, `1e309`, `-1e309`, `1e-400`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`,
	`-9223372036854775809`, `18446744073709551616`, `123456789012345678`, `1234567890123456789`, `12345678901234567890`,
	`0.000000000000000000000000000001`, `100000000000000000000000000000000e-10`, `1.0e2`, `2e0`, `-`, `--1`, `+1`, `0x1`,
	`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0000\u001f\u007f\u0080\u07ff\u0800\uffff"`, `"\uD834\uDD1E"`,
	`"\uD834"`, `"\uDD1E"`, `"\uD834\uD834"`, `"\uD834\u0020"`, `"\uD834x"`, `"\uD834\"`, `"\uD834\\"`, `"\u"`, `"\u12"`, `"\u12G4"`,
	`"\x"`, `"\'"`, `"\a"`, "\"\x01\"", "\"\t\"", "\"\x7f\"", "\"\xff\"", "\"\xc3\"", "\"\xc3\xa9\"", "\"\xe2\x82\"", "\"\xf0\x9f\x98\x80\"",
	"\"\xf0\x9f\x98\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xc0\x80\"", "\"abcdefgh\xffabcdefgh\"", "\"abcdefg\\u00e9hij\xe9\"",
	`"unterminated`, `"`, `[]`, `[`, `]`, `[1,]`, `[,]`, `[1 2]`, `[1,2`, `[[]`, `[]]`, `[[[]]]`, `[null,true,false,"",0,{}]`,
	`{}`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1 "b":2}`, `{"a":1,"a":2}`, `{"a":{"b":{"c":[]}}}`, `{1:2}`,
	`{'a':1}`, `{"a":1}x`, `{"a":1} `, " \t\n\r{\"a\" \t\n\r: \t\n\r1 \t\n\r} \t\n\r", "\v1", "\f1", "\u00a01", "\xef\xbb\xbf{}",
	`{"\u0061":1,"a":2}`, "{\"\xff\":1}", `{"":""}`, `[1e400]`, `{"a":1e400}`, `[-1e400,1]`, `[1]]`, `{"a":[1,{"b":[2,{"c":3}]}]}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + `0` + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + `0` + strings.Repeat("}", 10001),
	strings.Repeat("[", 10001),
}

// k8sCorpus returns real-looking Kubernetes objects as JSON.
func k8sCorpus() [][]byte {
	r := rand.New(rand.NewPCG(7, 7))
	var out [][]byte
	for i := 0; i < 20; i++ {
		for _, obj := range []map[string]any{configMap(r, i), deployment(r, i)} {
			b, err := json.Marshal(obj)
			if err != nil {
				panic(err)
			}
			out = append(out, b)
			ind, _ := json.MarshalIndent(obj, "", "\t")
			out = append(out, ind)
		}
	}
	out = append(out, genList(5, 3))
	return out
}

func checkAgainstUtilJSON(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := utiljson.Unmarshal(data, &want)
	for _, opts := range []Options{{}, {InternKeys: true, InternValues: true}} {
		got, err := NewDecoder(opts).Decode(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("input %.80q: fastjson error %v, util/json error %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("input %.80q: values differ (-util/json +fastjson):\n%s", data, cmp.Diff(want, got))
		}
	}
}

func TestDifferentialHandCorpus(t *testing.T) {
	for _, s := range handCorpus {
		checkAgainstUtilJSON(t, []byte(s))
		// Also inside containers, where different code paths apply.
		checkAgainstUtilJSON(t, []byte("["+s+"]"))
		checkAgainstUtilJSON(t, []byte(`{"k":`+s+`}`))
		checkAgainstUtilJSON(t, []byte(`{"k":[`+s+`,1],"l":2}`))
	}
}

func TestDifferentialKubernetes(t *testing.T) {
	for _, data := range k8sCorpus() {
		checkAgainstUtilJSON(t, data)

		// Objects against unstructured.Unstructured.
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(data); err == nil {
			m, err := DecodeObject(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m, u.Object) {
				t.Fatalf("differs from Unstructured:\n%s", cmp.Diff(u.Object, m))
			}
		}
	}
}

// TestDifferentialMutations corrupts real objects byte by byte and checks
// that errors and values still agree.
func TestDifferentialMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	corpus := k8sCorpus()
	interesting := []byte("{}[]\",:\\ntfue0123456789.-+Ee \t\n\xff\xc3\x80u")
	n := 3000
	if testing.Short() {
		n = 300
	}
	for k := 0; k < n; k++ {
		src := corpus[r.IntN(len(corpus))]
		data := append([]byte(nil), src...)
		for m := 1 + r.IntN(3); m > 0; m-- {
			p := r.IntN(len(data))
			switch r.IntN(4) {
			case 0:
				data[p] = interesting[r.IntN(len(interesting))]
			case 1:
				data = append(data[:p], data[p+1:]...)
			case 2:
				data = append(data[:p], append([]byte{interesting[r.IntN(len(interesting))]}, data[p:]...)...)
			case 3:
				data = data[:p]
			}
			if len(data) == 0 {
				break
			}
		}
		checkAgainstUtilJSON(t, data)
	}
}

// TestDifferentialList compares DecodeList with apimachinery's
// UnstructuredJSONScheme decoding into an UnstructuredList.
func TestDifferentialList(t *testing.T) {
	bodies := [][]byte{genList(50, 9)}
	r := rand.New(rand.NewPCG(3, 4))
	var items []any
	for i := 0; i < 10; i++ {
		items = append(items, deployment(r, i))
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": map[string]any{"continue": "x", "remainingItemCount": 5}, "items": items})
	bodies = append(bodies, b)
	// Items without apiVersion and kind, as the server sends typed lists.
	for _, it := range items {
		delete(it.(map[string]any), "apiVersion")
		delete(it.(map[string]any), "kind")
	}
	b, _ = json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": map[string]any{}, "items": items})
	bodies = append(bodies, b)

	for _, body := range bodies {
		want := &unstructured.UnstructuredList{}
		if _, _, err := unstructured.UnstructuredJSONScheme.Decode(body, nil, want); err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(Options{InternKeys: true, InternValues: true})
		var got []map[string]any
		list, err := d.DecodeList(body, func(i int, obj map[string]any) error {
			if i != len(got) {
				return fmt.Errorf("index %d, want %d", i, len(got))
			}
			got = append(got, obj)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(list, want.Object) {
			t.Fatalf("list fields differ:\n%s", cmp.Diff(want.Object, list))
		}
		if len(got) != len(want.Items) {
			t.Fatalf("%d items, want %d", len(got), len(want.Items))
		}
		for i, obj := range got {
			// apimachinery fills in apiVersion and kind of items lacking both.
			if obj["apiVersion"] == nil && obj["kind"] == nil {
				obj["apiVersion"] = list["apiVersion"]
				obj["kind"] = strings.TrimSuffix(list["kind"].(string), "List")
			}
			if !reflect.DeepEqual(obj, want.Items[i].Object) {
				t.Fatalf("item %d differs:\n%s", i, cmp.Diff(want.Items[i].Object, obj))
			}
		}
	}
}
