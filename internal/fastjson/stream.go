package fastjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ListStream reads a Kubernetes list ({"kind":..., "metadata":{...},
// "items":[...]}) from a reader and hands out each element of "items" as
// soon as it has arrived whole, so that decoding overlaps the transfer and
// the whole body is never held at once. Only the element being handed out
// and the part of the stream not yet consumed are buffered.
//
// The list's other top-level fields are kept (as raw JSON) and can be read
// with [ListStream.Field] at any time: fields that precede "items" — as
// kube-apiserver writes kind, apiVersion and metadata — are available while
// the items are handed out.
type ListStream struct {
	r      io.Reader
	buf    []byte
	pos    int // next unread byte of buf
	eof    bool
	readN  int64 // bytes consumed before buf[0]
	fields map[string][]byte
	keys   []string // in order
	rawKey map[string][]byte
}

// NewListStream returns a ListStream reading from r.
func NewListStream(r io.Reader) *ListStream {
	return &ListStream{r: r, buf: make([]byte, 0, 64<<10), fields: map[string][]byte{}, rawKey: map[string][]byte{}}
}

// Field returns the raw JSON of a top-level field other than "items" seen
// so far.
func (s *ListStream) Field(name string) ([]byte, bool) {
	v, ok := s.fields[name]
	return v, ok
}

// Fields decodes the top-level fields other than "items" seen so far.
func (s *ListStream) Fields() (map[string]any, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(s.rawKey[k])
		b.WriteByte(':')
		b.Write(s.fields[k])
	}
	b.WriteByte('}')
	return DecodeObject(b.Bytes())
}

// offset is the stream offset of buf[s.pos], for error messages.
func (s *ListStream) offset() int64 { return s.readN + int64(s.pos) }

// fill reads more of the stream, keeping buf[s.pos:]. It reports io.EOF
// when the stream has ended and returns read errors as they are.
func (s *ListStream) fill() error {
	if s.eof {
		return io.EOF
	}
	if s.pos > 0 && s.pos >= len(s.buf)/2 {
		n := copy(s.buf, s.buf[s.pos:])
		s.readN += int64(s.pos)
		s.buf, s.pos = s.buf[:n], 0
	}
	if len(s.buf) == cap(s.buf) {
		nb := make([]byte, len(s.buf), 2*cap(s.buf))
		copy(nb, s.buf)
		s.buf = nb
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if errors.Is(err, io.EOF) {
			s.eof = true
			if n > 0 {
				return nil
			}
			return io.EOF
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// truncated is the error for a stream that ended inside the list.
func (s *ListStream) truncated(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("the list ends early, after %d bytes: %w", s.offset(), io.ErrUnexpectedEOF)
	}
	return err
}

// peek skips whitespace and returns the next byte without consuming it.
func (s *ListStream) peek() (byte, error) {
	for {
		s.pos = skipWS(s.buf, s.pos)
		if s.pos < len(s.buf) {
			return s.buf[s.pos], nil
		}
		if err := s.fill(); err != nil {
			return 0, s.truncated(err)
		}
	}
}

// expect consumes byte c (after whitespace) or fails naming what it found.
func (s *ListStream) expect(c byte, context string) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return s.bad(context)
	}
	s.pos++
	return nil
}

func (s *ListStream) bad(context string) error {
	err := badChar(s.buf, s.pos, context)
	var se *SyntaxError
	if errors.As(err, &se) {
		se.Offset = s.offset()
	}
	return err
}

// value consumes one whole JSON value and returns its bytes, which stay
// valid until the next call.
func (s *ListStream) value() ([]byte, error) {
	for {
		start, end, err := Scan(s.buf[s.pos:])
		if err == nil {
			v := s.buf[s.pos+start : s.pos+end]
			s.pos += end
			return v, nil
		}
		if !errors.Is(err, ErrIncomplete) {
			var se *SyntaxError
			if errors.As(err, &se) {
				se.Offset += s.offset()
			}
			return nil, err
		}
		// Read until the pending bytes have doubled, so that a value
		// arriving in small pieces is rescanned O(log n) times, not O(n).
		have := len(s.buf) - s.pos
		want := max(2*have, 4<<10)
		for len(s.buf)-s.pos < want {
			if err := s.fill(); err != nil {
				if errors.Is(err, io.EOF) && len(s.buf)-s.pos > have {
					break // scan what there is; it may be complete
				}
				return nil, s.truncated(err)
			}
		}
	}
}

// Items reads the whole list, calling item with the raw JSON of each
// element of "items" in order; raw is valid only during the call. An
// element that is not an object, a syntax error, a stream that ends early
// or an error from item stops reading; item's error is returned as is.
// "items" may be absent or null. Only whitespace may follow the list.
func (s *ListStream) Items(item func(raw []byte) error) error {
	if err := s.expect('{', "looking for beginning of the list object"); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		s.pos++
		return s.end()
	}
	seenItems := false
	for {
		if c, err = s.peek(); err != nil {
			return err
		}
		if c != '"' {
			return s.bad("looking for beginning of object key string")
		}
		rawKey, err := s.value()
		if err != nil {
			return err
		}
		rawKey = bytes.Clone(rawKey) // buf may move before it is stored
		key, err := unquoteKey(rawKey)
		if err != nil {
			return err
		}
		if err := s.expect(':', "after object key"); err != nil {
			return err
		}
		if key == "items" {
			if seenItems {
				return syntaxErr(`duplicate "items" key in list`, int(s.offset()))
			}
			seenItems = true
			if err := s.items(item); err != nil {
				return err
			}
		} else {
			v, err := s.value()
			if err != nil {
				return err
			}
			if _, dup := s.fields[key]; !dup {
				s.keys = append(s.keys, key)
				s.rawKey[key] = rawKey
			}
			s.fields[key] = bytes.Clone(v)
		}
		more, err := s.separator('}', "after object key:value pair")
		if err != nil || !more {
			if err == nil {
				err = s.end()
			}
			return err
		}
	}
}

func unquoteKey(raw []byte) (string, error) {
	v, err := Decode(raw)
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

func (s *ListStream) items(item func([]byte) error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		v, err := s.value()
		if err != nil {
			return err
		}
		if string(v) != "null" {
			return syntaxErr(`list "items" is not an array`, int(s.offset()))
		}
		return nil
	}
	if c != '[' {
		if isValueStart(c) {
			return syntaxErr(`list "items" is not an array`, int(s.offset()))
		}
		return s.bad("looking for beginning of value")
	}
	s.pos++
	if c, err = s.peek(); err != nil {
		return err
	}
	if c == ']' {
		s.pos++
		return nil
	}
	for n := 0; ; n++ {
		if c, err = s.peek(); err != nil {
			return err
		}
		if c != '{' {
			if isValueStart(c) {
				return syntaxErr("list item "+strconv.Itoa(n)+" is not an object", int(s.offset()))
			}
			return s.bad("looking for beginning of value")
		}
		raw, err := s.value()
		if err != nil {
			return err
		}
		if err := item(raw); err != nil {
			return err
		}
		more, err := s.separator(']', "after array element")
		if err != nil || !more {
			return err
		}
	}
}

// separator consumes the ',' before another member (more is true) or the
// closer that ends the container.
func (s *ListStream) separator(closer byte, context string) (more bool, err error) {
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	if c != ',' && c != closer {
		return false, s.bad(context)
	}
	s.pos++
	return c == ',', nil
}

// end checks that only whitespace follows the list.
func (s *ListStream) end() error {
	for {
		s.pos = skipWS(s.buf, s.pos)
		if s.pos < len(s.buf) {
			return s.bad("after top-level value")
		}
		err := s.fill()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
