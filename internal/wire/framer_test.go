package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// splitReader returns data in pieces of the sizes in chunks (cycled), so
// frames, strings and escapes straddle reads.
type splitReader struct {
	data   []byte
	chunks []byte
	i      int
}

func (c *splitReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.chunks) > 0 {
		n = min(n, 1+int(c.chunks[c.i%len(c.chunks)]))
		c.i++
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// frames splits data with the framer, reading it in chunks.
func frames(data, chunks []byte) ([][]byte, error) {
	fr := &framer{r: &splitReader{data: data, chunks: chunks}, buf: make([]byte, 64)}
	var out [][]byte
	for {
		f, err := fr.next()
		if err != nil {
			return out, err
		}
		out = append(out, bytes.Clone(f))
	}
}

// FuzzFramerMatchesDecoder checks the framer's frame boundaries against
// encoding/json's Decoder on streams of JSON values: every value the
// Decoder reads is one frame, byte for byte, however the stream is split
// into reads.
func FuzzFramerMatchesDecoder(f *testing.F) {
	f.Add([]byte(`{"a":"x\"y","b":["}",{"c":"\\"}]}{"d":1}`), []byte{0, 1, 2})
	f.Add([]byte(`{"s":"a\\\"b\\\\"}`+"\n"+`{"t":"{[\u0041"}`), []byte{3})
	f.Add([]byte(`{"type":"ADDED","object":{"data":{"k":"line1\nline2\ttab \"q\" \\ end"}}}`+"\n"), []byte{})
	f.Add([]byte(`  {}  [] {"x":""}`), []byte{0})
	f.Fuzz(func(t *testing.T, data, chunks []byte) {
		if len(data) > 1<<16 || len(chunks) > 64 {
			t.Skip("input larger than the fuzz bounds")
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		var want [][]byte
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				break
			}
			if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
				return // top-level scalars are the decoder's business
			}
			want = append(want, raw)
		}
		got, err := frames(data, chunks)
		if len(got) < len(want) {
			t.Fatalf("%d frames (then %v), the decoder read %d values", len(got), err, len(want))
		}
		for i := range want {
			if !bytes.Equal(bytes.TrimSpace(got[i]), want[i]) {
				t.Fatalf("frame %d = %q, want %q", i, got[i], want[i])
			}
		}
		if len(got) == len(want) && err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			var syn *json.SyntaxError
			if !errors.As(err, &syn) {
				t.Fatalf("framer error %v", err)
			}
		}
	})
}

func TestFramerLongStringsWithEscapes(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"data":{"config":"`)
	for i := range 2000 {
		b.WriteString(`line \"`)
		b.WriteByte(byte('a' + i%26))
		b.WriteString(`\" \\ {[}]\n`)
	}
	b.WriteString(`"}}`)
	frame := b.Bytes()
	stream := bytes.Repeat(append(bytes.Clone(frame), '\n'), 3)
	for _, chunks := range [][]byte{nil, {0}, {6, 250, 1}} {
		got, err := frames(stream, chunks)
		if !errors.Is(err, io.EOF) || len(got) != 3 {
			t.Fatalf("chunks %v: %d frames, %v", chunks, len(got), err)
		}
		for i, g := range got {
			if !bytes.Equal(g, frame) {
				t.Fatalf("chunks %v: frame %d differs (%d vs %d bytes)", chunks, i, len(g), len(frame))
			}
		}
	}
}

// BenchmarkFramer splits a stream of ConfigMap watch events with 1 KiB of
// data each: plain values, and a configuration file with escaped quotes
// and newlines.
func BenchmarkFramer(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"plain", `abcdefghijklmnopqrstuvwxyz0123456789`},
		{"escaped", `option_1: \"value-1-abcdef\"\n`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ev bytes.Buffer
			ev.WriteString(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-00001","namespace":"bench","uid":"0b6c7e1e-4e4f-4a53-9e0c-3f1f8e7f0a11","resourceVersion":"123456","labels":{"app":"bench","tier":"a"}},"data":{"config":"`)
			for ev.Len() < 1300 {
				ev.WriteString(tc.line)
			}
			ev.WriteString("\"}}}\n")
			stream := bytes.Repeat(ev.Bytes(), 1000)
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				fr := &framer{r: bytes.NewReader(stream), buf: make([]byte, 64<<10)}
				for {
					if _, err := fr.next(); err != nil {
						break
					}
				}
			}
		})
	}
}
