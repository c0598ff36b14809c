package fastjson

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Append appends the JSON of an unstructured value (maps, slices,
// strings, numbers, booleans, nil) to b. Keys are written in map order (the
// bytes are only ever decoded again, so sorting would be wasted work);
// strings are escaped as encoding/json does, except that <, > and & are not
// HTML-escaped.
func Append(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, t), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(t), 10), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("unsupported number %v", t)
		}
		return appendFloat(b, t), nil
	case map[string]any:
		b = append(b, '{')
		first := true
		for k, v := range t {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = Append(b, v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = Append(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("unsupported type %T in an unstructured object", v)
}

// appendFloat formats like encoding/json.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json does
// except that <, > and & are not HTML-escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
