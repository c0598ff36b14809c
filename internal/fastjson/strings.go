package fastjson

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports whether any of the 8 bytes of w needs attention inside a
// string: '"', '\\', a control character (< 0x20) or a non-ASCII byte.
// False positives are harmless (the caller then looks byte by byte); there
// are no false negatives.
func special(w uint64) bool {
	q := w ^ (lsb * '"')
	b := w ^ (lsb * '\\')
	return ((q-lsb)&^q|(b-lsb)&^b|(w-lsb*0x20)|w)&msb != 0
}

// plain[c] is true for bytes that stand for themselves inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str parses the string whose opening quote is at data[i-1]. It returns the
// decoded bytes, which alias either the input or d.scratch (valid until the
// next call), and the offset just past the closing quote.
func (d *Decoder) str(i int) ([]byte, int, error) {
	data := d.data
	start := i
	for {
		for i+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && plain[data[i]] {
			i++
		}
		if i >= len(data) {
			return nil, i, syntaxErr("unexpected end of JSON input", i)
		}
		c := data[i]
		if c == '"' {
			return data[start:i], i + 1, nil
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(data[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		// An escape, a control character or invalid UTF-8.
		return d.strSlow(start, i)
	}
}

// strSlow continues parsing a string that needs rewriting, from data[i]; the
// string started at data[start] and data[start:i] is plain.
func (d *Decoder) strSlow(start, i int) ([]byte, int, error) {
	data := d.data
	buf := append(d.scratch[:0], data[start:i]...)
	defer func() { d.scratch = buf[:0] }()
	for {
		j := i
		for j+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[j:])) {
			j += 8
		}
		for j < len(data) && plain[data[j]] {
			j++
		}
		buf = append(buf, data[i:j]...)
		i = j
		if i >= len(data) {
			return nil, i, syntaxErr("unexpected end of JSON input", i)
		}
		switch c := data[i]; {
		case c == '"':
			return buf, i + 1, nil
		case c == '\\':
			if i+1 >= len(data) {
				return nil, i + 1, syntaxErr("unexpected end of JSON input", i+1)
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := hex4(data, i+2)
				if err != nil {
					return nil, i, err
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// encoding/json: a valid pair decodes to one rune; anything
					// else turns the first half into U+FFFD and leaves what
					// follows to be decoded on its own.
					if i+6 <= len(data) && data[i] == '\\' && data[i+1] == 'u' {
						if r1, err := hex4(data, i+2); err == nil {
							if dec := utf16.DecodeRune(r, r1); dec != utf8.RuneError {
								buf = utf8.AppendRune(buf, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
				continue
			default:
				return nil, i + 1, syntaxErr("invalid character "+quoteChar(e)+" in string escape code", i+1)
			}
			i += 2
		case c < 0x20:
			return nil, i, syntaxErr("invalid character "+quoteChar(c)+" in string literal", i)
		default: // non-ASCII
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, "\uFFFD"...)
			} else {
				buf = append(buf, data[i:i+size]...)
			}
			i += size
		}
	}
}

// hex4 decodes the 4 hex digits at data[i:i+4] of a \u escape.
func hex4(data []byte, i int) (rune, error) {
	var r rune
	for k := i; k < i+4; k++ {
		if k >= len(data) {
			return 0, syntaxErr("unexpected end of JSON input", k)
		}
		c := data[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, syntaxErr("invalid character "+quoteChar(c)+` in \u hexadecimal character escape`, k)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}
