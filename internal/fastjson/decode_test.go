package fastjson

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		// literals and whitespace
		{`null`, nil},
		{`true`, true},
		{`false`, false},
		{" \t\r\n true \t\r\n", true},
		// numbers: apimachinery's int64-or-float64 rule
		{`0`, int64(0)},
		{`-0`, int64(0)},
		{`7`, int64(7)},
		{`-7`, int64(-7)},
		{`255`, int64(255)},
		{`256`, int64(256)},
		{`123456789012345678`, int64(123456789012345678)},
		{`1234567890123456789`, int64(1234567890123456789)},
		{`9223372036854775807`, int64(math.MaxInt64)},
		{`-9223372036854775808`, int64(math.MinInt64)},
		{`9223372036854775808`, float64(9223372036854775808)},
		{`-9223372036854775809`, float64(-9223372036854775809)},
		{`99999999999999999999`, 1e20},
		{`00000000000000000000`[:1], int64(0)},
		{`1.0`, 1.0},
		{`-0.0`, math.Copysign(0, -1)},
		{`0.5`, 0.5},
		{`1e3`, 1000.0},
		{`1E3`, 1000.0},
		{`1e+3`, 1000.0},
		{`1e-3`, 0.001},
		{`-1.5e-3`, -0.0015},
		{`1e-400`, 0.0},
		{`1.7976931348623157e308`, math.MaxFloat64},
		{`4.9406564584124654e-324`, 5e-324},
		{`0.1`, 0.1},
		{`123456789012345678901234567890`, 1.2345678901234568e29},
		// strings and escapes
		{`""`, ""},
		{`"abc"`, "abc"},
		{`"a\"b\\c\/d\be\ff\ng\rh\ti"`, "a\"b\\c/d\be\ff\ng\rh\ti"},
		{`"\u0041\u00e9\u20AC\uffff"`, "Aé€\uffff"},
		{`"\u0000"`, "\x00"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00x"`, "😀x"},
		{`"\ud83d"`, "\uFFFD"},
		{`"\ude00"`, "\uFFFD"},
		{`"\ud83dx"`, "\uFFFDx"},
		{`"\ud83d\u0041"`, "\uFFFDA"},
		{`"\ud83d\ud83d\ude00"`, "\uFFFD😀"},
		{`"\ude00\ud83d"`, "\uFFFD\uFFFD"},
		{`"\ud83d\n"`, "\uFFFD\n"},
		{"\"h\u00e9llo w\u00f6rld \u65e5\u672c \U0001F600\"", "héllo wörld 日本 😀"},
		{"\"\xff\"", "\uFFFD"},
		{"\"a\xffb\xfe\"", "a\uFFFDb\uFFFD"},
		{"\"\xe6\x97\"", "\uFFFD\uFFFD"},           // truncated sequence: one U+FFFD per byte
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"}, // UTF-8 encoded surrogate
		{"\"\xc0\xaf\"", "\uFFFD\uFFFD"},           // overlong
		{"\"\x7f\"", "\x7f"},
		{"\"\xff\\n\"", "\uFFFD\n"},
		{`"` + strings.Repeat("x", 1000) + `\n` + strings.Repeat("é", 300) + `"`, strings.Repeat("x", 1000) + "\n" + strings.Repeat("é", 300)},
		{`"` + strings.Repeat("abcdefgh", 20) + `"`, strings.Repeat("abcdefgh", 20)},
		// containers
		{`[]`, []any{}},
		{`{}`, map[string]any{}},
		{` [ 1 , "a" , [ ] , { } , null ] `, []any{int64(1), "a", []any{}, map[string]any{}, nil}},
		{`{"a":1,"b":{"c":[true,false]}}`, map[string]any{"a": int64(1), "b": map[string]any{"c": []any{true, false}}}},
		{`{"a":1,"a":2}`, map[string]any{"a": int64(2)}},
		{`{"a":{"x":1},"a":"s"}`, map[string]any{"a": "s"}},
		{`{"":0}`, map[string]any{"": int64(0)}},
		{`{"\u00e9\n":1, "é\n":2}`, map[string]any{"é\n": int64(2)}},
		{"{\"k\xff\":1}", map[string]any{"k\uFFFD": int64(1)}},
		{`{"a" : 1 , "b" : 2 }`, map[string]any{"a": int64(1), "b": int64(2)}},
		{`[[[[[]]]]]`, []any{[]any{[]any{[]any{[]any{}}}}}},
		{strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), nested(maxDepth)},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`, map[string]any{"a": int64(1), "b": int64(2), "c": int64(3), "d": int64(4), "e": int64(5), "f": int64(6), "g": int64(7), "h": int64(8), "i": int64(9), "j": int64(10)}},
	}
	for _, d := range []*Decoder{NewDecoder(Options{}), NewDecoder(Options{InternKeys: true}), NewDecoder(Options{InternKeys: true, InternValues: true})} {
		for _, tt := range tests {
			got, err := d.Decode([]byte(tt.in))
			if err != nil {
				t.Errorf("Decode(%.40q): %v", tt.in, err)
				continue
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode(%.40q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if f, ok := tt.want.(float64); ok && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Errorf("Decode(%q): sign of zero lost", tt.in)
			}
		}
	}
}

func nested(n int) any {
	var v any = []any{}
	for i := 1; i < n; i++ {
		v = []any{v}
	}
	return v
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{``, "unexpected end of JSON input at offset 0"},
		{`   `, "unexpected end of JSON input at offset 3"},
		{`x`, "invalid character 'x' looking for beginning of value at offset 0"},
		{"\xef\xbb\xbf{}", "invalid character byte 0xef looking for beginning of value at offset 0"},
		{`nul`, "unexpected end of JSON input at offset 3"},
		{`nulL`, "invalid character 'L' in literal null (expecting 'l') at offset 3"},
		{`tru`, "unexpected end of JSON input"},
		{`trUe`, "in literal true (expecting 'u') at offset 2"},
		{`fals`, "unexpected end of JSON input"},
		{`falsy`, "in literal false (expecting 'e') at offset 4"},
		{`True`, "invalid character 'T' looking for beginning of value"},
		{`truex`, "invalid character 'x' after top-level value at offset 4"},
		{`1 2`, "invalid character '2' after top-level value at offset 2"},
		{`{} {}`, "after top-level value at offset 3"},
		{`-`, "unexpected end of JSON input at offset 1"},
		{`-a`, "invalid character 'a' in numeric literal at offset 1"},
		{`+1`, "invalid character '+' looking for beginning of value"},
		{`01`, "invalid character '1' after top-level value at offset 1"},
		{`-01`, "after top-level value at offset 2"},
		{`1.`, "unexpected end of JSON input at offset 2"},
		{`1.e5`, "invalid character 'e' after decimal point in numeric literal at offset 2"},
		{`.5`, "invalid character '.' looking for beginning of value"},
		{`1e`, "unexpected end of JSON input at offset 2"},
		{`1e+`, "unexpected end of JSON input at offset 3"},
		{`1ex`, "invalid character 'x' in exponent of numeric literal at offset 2"},
		{`0x10`, "invalid character 'x' after top-level value"},
		{`NaN`, "invalid character 'N' looking for beginning of value"},
		{`Infinity`, "invalid character 'I'"},
		{`1e400`, "number 1e400 out of float64 range at offset 0"},
		{`[1,-1e400]`, "number -1e400 out of float64 range at offset 3"},
		{`"abc`, "unexpected end of JSON input at offset 4"},
		{`"abc\`, "unexpected end of JSON input at offset 5"},
		{`"\x"`, `invalid character 'x' in string escape code at offset 2`},
		{`"\'"`, `invalid character '\'' in string escape code at offset 2`},
		{`"\u12"`, `invalid character '"' in \u hexadecimal character escape at offset 5`},
		{`"\u12`, "unexpected end of JSON input at offset 5"},
		{`"\uZZZZ"`, `invalid character 'Z' in \u hexadecimal character escape at offset 3`},
		{`"\ud83d\uZZZZ"`, `invalid character 'Z' in \u hexadecimal character escape at offset 9`},
		{"\"a\tb\"", "invalid character byte 0x9 in string literal at offset 2"},
		{"\"a\nb\"", "in string literal at offset 2"},
		{"\"a\x00b\"", "in string literal at offset 2"},
		{"\"\\n\x1f\"", "in string literal at offset 3"},
		{`[`, "unexpected end of JSON input at offset 1"},
		{`[1`, "unexpected end of JSON input at offset 2"},
		{`[1,`, "unexpected end of JSON input at offset 3"},
		{`[1,]`, "invalid character ']' looking for beginning of value at offset 3"},
		{`[,1]`, "invalid character ','"},
		{`[1 2]`, "invalid character '2' after array element at offset 3"},
		{`[1}`, "invalid character '}' after array element"},
		{`{`, "unexpected end of JSON input at offset 1"},
		{`{"a"`, "unexpected end of JSON input at offset 4"},
		{`{"a":`, "unexpected end of JSON input at offset 5"},
		{`{"a":1`, "unexpected end of JSON input at offset 6"},
		{`{"a":1,`, "unexpected end of JSON input at offset 7"},
		{`{"a":1,}`, "invalid character '}' looking for beginning of object key string at offset 7"},
		{`{"a" 1}`, "invalid character '1' after object key at offset 5"},
		{`{"a":1 "b":2}`, "invalid character '\"' after object key:value pair at offset 7"},
		{`{"a":1]`, "after object key:value pair"},
		{`{a:1}`, "invalid character 'a' looking for beginning of object key string at offset 1"},
		{`{1:1}`, "looking for beginning of object key string"},
		{`{"a\x":1}`, "in string escape code"},
		{`{,}`, "looking for beginning of object key string"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "exceeded max depth of 10000 at offset 10000"},
		{strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1), "exceeded max depth"},
		{strings.Repeat("[", 1<<20), "exceeded max depth"},
	}
	for _, tt := range tests {
		for _, opts := range []Options{{}, {InternKeys: true, InternValues: true}} {
			v, err := NewDecoder(opts).Decode([]byte(tt.in))
			if err == nil {
				t.Errorf("Decode(%.40q) = %#v, want error %q", tt.in, v, tt.err)
				continue
			}
			if !strings.HasPrefix(err.Error(), "fastjson: ") || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Decode(%.40q) error %q, want %q", tt.in, err, tt.err)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("Decode(%.40q) error %T, want *SyntaxError", tt.in, err)
			}
			if v != nil {
				t.Errorf("Decode(%.40q) returned value %#v with error", tt.in, v)
			}
		}
	}
}

func TestDecodeObject(t *testing.T) {
	m, err := DecodeObject([]byte(` {"kind":"Pod","spec":{"n":1}} `))
	if err != nil || !reflect.DeepEqual(m, map[string]any{"kind": "Pod", "spec": map[string]any{"n": int64(1)}}) {
		t.Fatalf("DecodeObject = %v, %v", m, err)
	}
	for _, in := range []string{`[]`, `null`, `"x"`, `1`, `true`, ``, `x`, `{`, `{} x`} {
		if m, err := DecodeObject([]byte(in)); err == nil || m != nil {
			t.Errorf("DecodeObject(%q) = %v, %v; want error", in, m, err)
		}
	}
	if _, err := DecodeObject([]byte(`[1]`)); err == nil || !strings.Contains(err.Error(), "not an object at offset 0") {
		t.Errorf("DecodeObject([1]) error = %v", err)
	}
}

func TestDecoderReuse(t *testing.T) {
	d := NewDecoder(Options{InternKeys: true, InternValues: true})
	// A failed decode must not leave state behind for the next one.
	for _, bad := range []string{`{"a":[1,2,{"b":"c\n`, `[[[[{"x":1,`, `{"a":1,"a":`} {
		if _, err := d.Decode([]byte(bad)); err == nil {
			t.Fatalf("Decode(%q) succeeded", bad)
		}
		v, err := d.Decode([]byte(`{"k":[1,"v\u00e9"]}`))
		if err != nil || !reflect.DeepEqual(v, map[string]any{"k": []any{int64(1), "vé"}}) {
			t.Fatalf("after %q: %v, %v", bad, v, err)
		}
		if len(d.keys) != 0 || len(d.vals) != 0 || d.data != nil {
			t.Fatalf("state left behind after %q", bad)
		}
	}
	// The input may be modified after the call: results must not alias it.
	in := []byte(`{"key":"value","esc":"a\nb","list":["x"]}`)
	v, _ := d.Decode(in)
	for i := range in {
		in[i] = 'X'
	}
	if !reflect.DeepEqual(v, map[string]any{"key": "value", "esc": "a\nb", "list": []any{"x"}}) {
		t.Fatalf("result aliases input: %v", v)
	}
}

func TestInterningShares(t *testing.T) {
	body := []byte(`[{"apiVersion":"v1","labels":{"app":"web"},"long":"` + strings.Repeat("z", 70) + `"},{"apiVersion":"v1","labels":{"app":"web"},"long":"` + strings.Repeat("z", 70) + `"}]`)
	ptr := func(s string) *byte { return unsafe.StringData(s) }
	keyOf := func(m map[string]any, want string) string {
		for k := range m {
			if k == want {
				return k
			}
		}
		t.Fatalf("no key %q", want)
		return ""
	}
	decode := func(opts Options) (a, b map[string]any) {
		v, err := NewDecoder(opts).Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		return v.([]any)[0].(map[string]any), v.([]any)[1].(map[string]any)
	}

	a, b := decode(Options{})
	if ptr(keyOf(a, "apiVersion")) == ptr(keyOf(b, "apiVersion")) || ptr(a["apiVersion"].(string)) == ptr(b["apiVersion"].(string)) {
		t.Error("strings shared without interning")
	}
	a, b = decode(Options{InternKeys: true})
	if ptr(keyOf(a, "apiVersion")) != ptr(keyOf(b, "apiVersion")) {
		t.Error("keys not shared with InternKeys")
	}
	if ptr(a["apiVersion"].(string)) == ptr(b["apiVersion"].(string)) {
		t.Error("values shared without InternValues")
	}
	a, b = decode(Options{InternKeys: true, InternValues: true})
	if ptr(a["apiVersion"].(string)) != ptr(b["apiVersion"].(string)) {
		t.Error("values not shared with InternValues")
	}
	la, lb := a["labels"].(map[string]any), b["labels"].(map[string]any)
	if ptr(keyOf(la, "app")) != ptr(keyOf(lb, "app")) || ptr(la["app"].(string)) != ptr(lb["app"].(string)) {
		t.Error("label not shared")
	}
	if ptr(a["long"].(string)) == ptr(b["long"].(string)) {
		t.Error("value longer than the limit was interned")
	}

	// Two decoders sharing one Interner share strings across them.
	in := NewInterner(1024, 128)
	v1, _ := NewDecoder(Options{InternKeys: true, InternValues: true, Interner: in}).Decode(body)
	v2, _ := NewDecoder(Options{InternKeys: true, InternValues: true, Interner: in}).Decode(body)
	if ptr(v1.([]any)[0].(map[string]any)["long"].(string)) != ptr(v2.([]any)[1].(map[string]any)["long"].(string)) {
		t.Error("shared Interner not used")
	}
}

func TestNoAllocForPooledValues(t *testing.T) {
	d := NewDecoder(Options{InternKeys: true, InternValues: true})
	body := []byte(`["v1","ConfigMap","default",true,null,7]`)
	var out any
	d.Decode(body)
	allocs := testing.AllocsPerRun(100, func() { out, _ = d.Decode(body) })
	// Only the []any and its interface box.
	if allocs > 2 {
		t.Errorf("%v allocs per Decode of pooled values, want <= 2", allocs)
	}
	_ = out
}

func TestDecodeNeverAliasesScratch(t *testing.T) {
	// Escaped strings are built in a scratch buffer: each must be copied.
	v, err := Decode([]byte(`["a\nb","c\td","\u00e9\u00e9"]`))
	if err != nil || !reflect.DeepEqual(v, []any{"a\nb", "c\td", "éé"}) {
		t.Fatalf("%#v %v", v, err)
	}
	m, err := NewDecoder(Options{InternKeys: true}).DecodeObject([]byte(`{"a\nb":1,"c\td":2}`))
	if err != nil || !reflect.DeepEqual(m, map[string]any{"a\nb": int64(1), "c\td": int64(2)}) {
		t.Fatalf("%#v %v", m, err)
	}
}
