package fastjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	tests := []struct {
		in         string
		start, end int
		err        string // "" ok, "incomplete", or a substring of the syntax error
	}{
		{`{}`, 0, 2, ""},
		{`  {"a":[1,2,{"b":null}]}  {"next":1}`, 2, 24, ""},
		{"\n\t[1, \"x\\\"]\"]\n", 2, 13, ""},
		{`"str"rest`, 0, 5, ""},
		{`true false`, 0, 4, ""},
		{`null`, 0, 4, ""},
		{`12 `, 0, 2, ""},
		{`-1.5e+3,`, 0, 7, ""},
		{`[12]`, 0, 4, ""},
		{`{"a":1}{"b":2}`, 0, 7, ""},
		{"{\"\xff\":\"\xfe\"}", 0, 9, ""}, // no UTF-8 validation, like json.Valid
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), 0, 20000, ""},
		// incomplete
		{``, 0, 0, "incomplete"},
		{"  \n", 3, 0, "incomplete"},
		{`{`, 0, 0, "incomplete"},
		{`{"a`, 0, 0, "incomplete"},
		{`{"a"`, 0, 0, "incomplete"},
		{`{"a":`, 0, 0, "incomplete"},
		{`{"a":1`, 0, 0, "incomplete"},
		{`{"a":1,`, 0, 0, "incomplete"},
		{`{"a":1, `, 0, 0, "incomplete"},
		{`[1,[2,{"x":"\u12`, 0, 0, "incomplete"},
		{`"\`, 0, 0, "incomplete"},
		{`tr`, 0, 0, "incomplete"},
		{`[fals`, 0, 0, "incomplete"},
		{`12`, 0, 0, "incomplete"}, // more digits may follow
		{`-`, 0, 0, "incomplete"},
		{`1.`, 0, 0, "incomplete"},
		{`1e-`, 0, 0, "incomplete"},
		{strings.Repeat("[", 200), 0, 0, "incomplete"},
		// syntax errors
		{`x`, 0, 0, "invalid character 'x' looking for beginning of value at offset 0"},
		{`  }`, 2, 0, "looking for beginning of value at offset 2"},
		{`[1 2]`, 0, 0, "after array element at offset 3"},
		{`{"a" 1}`, 0, 0, "after object key at offset 5"},
		{`{"a":1 2}`, 0, 0, "after object key:value pair at offset 7"},
		{`{1:1}`, 0, 0, "looking for beginning of object key string"},
		{`{"a":1,}`, 0, 0, "looking for beginning of object key string"},
		{`[1,]`, 0, 0, "looking for beginning of value"},
		{`"\q"`, 0, 0, "in string escape code"},
		{`"\u12x4"`, 0, 0, `in \u hexadecimal character escape`},
		{"\"a\nb\"", 0, 0, "in string literal"},
		{`trux`, 0, 0, "in literal true (expecting 'e')"},
		{`-x`, 0, 0, "in numeric literal"},
		{`1.x`, 0, 0, "after decimal point"},
		{`1ex`, 0, 0, "in exponent"},
		{`[01]`, 0, 0, "after array element"},
		{strings.Repeat("[", 10001), 0, 0, "exceeded max depth of 10000 at offset 10000"},
	}
	for _, tt := range tests {
		start, end, err := Scan([]byte(tt.in))
		switch {
		case tt.err == "":
			if err != nil || start != tt.start || end != tt.end {
				t.Errorf("Scan(%.40q) = %d, %d, %v; want %d, %d", tt.in, start, end, err, tt.start, tt.end)
			}
		case tt.err == "incomplete":
			if err != ErrIncomplete || start != tt.start {
				t.Errorf("Scan(%.40q) = %d, %d, %v; want ErrIncomplete", tt.in, start, end, err)
			}
		default:
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.err) || start != tt.start {
				t.Errorf("Scan(%.40q) = %d, %d, %v; want error %q", tt.in, start, end, err, tt.err)
			}
		}
	}
}

// TestScanStream frames a watch-like stream fed in small chunks.
func TestScanStream(t *testing.T) {
	var stream bytes.Buffer
	var want []string
	for _, obj := range k8sCorpus() {
		var c bytes.Buffer
		json.Compact(&c, obj)
		frame := `{"type":"MODIFIED","object":` + c.String() + `}`
		want = append(want, frame)
		stream.WriteString(frame)
		stream.WriteString("\n")
	}
	src := stream.Bytes()
	var buf []byte
	var got []string
	for off := 0; off < len(src); {
		n := min(37, len(src)-off)
		buf = append(buf, src[off:off+n]...)
		off += n
		for {
			start, end, err := Scan(buf)
			if err == ErrIncomplete {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(buf[start:end]))
			buf = buf[end:]
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("frame %d differs", i)
		}
		if _, err := DecodeObject([]byte(got[i])); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScanAgreesWithValid(t *testing.T) {
	for _, s := range handCorpus {
		checkScan(t, []byte(s))
	}
	for _, b := range k8sCorpus() {
		checkScan(t, b)
	}
}

func TestScanNoAlloc(t *testing.T) {
	data := k8sCorpus()[3]
	if n := testing.AllocsPerRun(100, func() { Scan(data) }); n != 0 {
		t.Errorf("Scan allocates %v times", n)
	}
}

// checkScan checks Scan's result on data against json.Valid.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	start, end, err := Scan(data)
	valid := json.Valid(data)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if start != len(data)-len(trimmed) {
		t.Fatalf("Scan(%.60q): start %d, want %d", data, start, len(data)-len(trimmed))
	}
	switch {
	case err == nil:
		if end <= start || end > len(data) || !json.Valid(data[start:end]) {
			t.Fatalf("Scan(%.60q) = [%d:%d], not a valid value", data, start, end)
		}
		if valid && len(bytes.TrimRight(data[end:], " \t\r\n")) != 0 {
			t.Fatalf("Scan(%.60q) = [%d:%d], but the whole input is one value", data, start, end)
		}
	case err == ErrIncomplete:
		// Only a prefix of a value, or a number running to the end.
		if valid {
			if c := trimmed[0]; c != '-' && (c < '0' || c > '9') || len(bytes.TrimRight(data, " \t\r\n")) != len(data) {
				t.Fatalf("Scan(%.60q) incomplete, but input is a complete value", data)
			}
		}
	default:
		if valid {
			t.Fatalf("Scan(%.60q) error %v, but json.Valid accepts it", data, err)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Scan(%.60q) error %T", data, err)
		}
	}
	// encoding/json's streaming Decoder frames the same way, except that at
	// the end of its input it settles a trailing number that Scan leaves
	// incomplete.
	var raw json.RawMessage
	decErr := json.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	var jsonSyntax *json.SyntaxError
	switch {
	case decErr == nil:
		trailingNumber := err == ErrIncomplete && len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') &&
			bytes.HasSuffix(data, raw)
		if !trailingNumber && (err != nil || !bytes.Equal(data[start:end], raw)) {
			t.Fatalf("Scan(%.60q) = [%d:%d] %v; json.Decoder read %.60q", data, start, end, err, raw)
		}
	case decErr == io.EOF || decErr == io.ErrUnexpectedEOF:
		if err != ErrIncomplete {
			t.Fatalf("Scan(%.60q) = %v; json.Decoder: %v", data, err, decErr)
		}
	case errors.As(decErr, &jsonSyntax):
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Scan(%.60q) = %v; json.Decoder: %v", data, err, decErr)
		}
	default:
		t.Fatalf("json.Decoder: unexpected error %v", decErr)
	}
	if valid {
		// With a delimiter after it, a valid value is always framed whole.
		withNL := append(append([]byte(nil), data...), '\n')
		_, end, err := Scan(withNL)
		if err != nil || len(bytes.TrimRight(withNL[end:], " \t\r\n")) != 0 {
			t.Fatalf("Scan(%.60q + newline) = %d, %v", data, end, err)
		}
	}
}
