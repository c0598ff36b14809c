package fastjson

import "encoding/binary"

// Scan finds the first complete JSON value in data, for framing a stream of
// concatenated or newline-separated values such as a watch stream. Leading
// whitespace is skipped; the value is data[start:end]. Bytes after end are
// not examined.
//
// If data holds only whitespace or a proper prefix of a value, Scan returns
// [ErrIncomplete] and the caller should retry with more data. A top-level
// number that runs to the end of data is also reported as incomplete, since
// more digits may follow; at the end of a stream, a caller can append a
// newline to settle it. Otherwise malformed input yields a *[SyntaxError].
// Scan validates the syntax the way [encoding/json.Valid] does (including the
// nesting limit of 10000) but does not decode or validate UTF-8, and it does
// not allocate for nesting up to 64 levels.
func Scan(data []byte) (start, end int, err error) {
	i := skipWS(data, 0)
	start = i
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' for each open container
	for {
		// A value starts at data[i] (whitespace skipped).
		if i >= len(data) {
			return start, 0, ErrIncomplete
		}
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return start, 0, depthErr(i)
			}
			stack = append(stack, c)
			i = skipWS(data, i+1)
			if i >= len(data) {
				return start, 0, ErrIncomplete
			}
			if c == '{' {
				if data[i] == '}' {
					stack = stack[:len(stack)-1]
					i++
					break
				}
				if i, err = scanKey(data, i); err != nil {
					return start, 0, err
				}
				continue
			}
			if data[i] == ']' {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			continue
		case '"':
			if i, err = scanString(data, i+1); err != nil {
				return start, 0, err
			}
		case 't':
			if i, err = scanLiteral(data, i, "true"); err != nil {
				return start, 0, err
			}
		case 'f':
			if i, err = scanLiteral(data, i, "false"); err != nil {
				return start, 0, err
			}
		case 'n':
			if i, err = scanLiteral(data, i, "null"); err != nil {
				return start, 0, err
			}
		default:
			if c != '-' && c-'0' > 9 {
				return start, 0, badChar(data, i, "looking for beginning of value")
			}
			if i, err = scanNumber(data, i); err != nil {
				return start, 0, err
			}
		}
		// A value ended at data[i]; close containers as far as possible.
		for {
			if len(stack) == 0 {
				return start, i, nil
			}
			i = skipWS(data, i)
			if i >= len(data) {
				return start, 0, ErrIncomplete
			}
			top := stack[len(stack)-1]
			c := data[i]
			if c == ',' {
				i = skipWS(data, i+1)
				if top == '{' {
					if i, err = scanKey(data, i); err != nil {
						return start, 0, err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if top == '{' {
				return start, 0, badChar(data, i, "after object key:value pair")
			}
			return start, 0, badChar(data, i, "after array element")
		}
		i = skipWS(data, i)
	}
}

// scanKey scans `"key" :` and the whitespace after it, from data[i].
func scanKey(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, ErrIncomplete
	}
	if data[i] != '"' {
		return i, badChar(data, i, "looking for beginning of object key string")
	}
	i, err := scanString(data, i+1)
	if err != nil {
		return i, err
	}
	i = skipWS(data, i)
	if i >= len(data) {
		return i, ErrIncomplete
	}
	if data[i] != ':' {
		return i, badChar(data, i, "after object key")
	}
	return skipWS(data, i+1), nil
}

// scanString scans a string whose opening quote is at data[i-1] and returns
// the offset past its closing quote.
func scanString(data []byte, i int) (int, error) {
	for {
		for i+8 <= len(data) && !special(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && (plain[data[i]] || data[i] >= 0x80) {
			i++
		}
		if i >= len(data) {
			return i, ErrIncomplete
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(data) {
				return i, ErrIncomplete
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, err := hex4(data, i+2); err != nil {
					if i+6 > len(data) && validHexPrefix(data[i+2:]) {
						return i, ErrIncomplete
					}
					return i, err
				}
				i += 6
			default:
				return i, syntaxErr("invalid character "+quoteChar(e)+" in string escape code", i+1)
			}
		default: // control character
			return i, syntaxErr("invalid character "+quoteChar(c)+" in string literal", i)
		}
	}
}

func validHexPrefix(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 1; k < len(lit); k++ {
		if i+k >= len(data) {
			return i, ErrIncomplete
		}
		if data[i+k] != lit[k] {
			return i, literalErr(data, i, lit)
		}
	}
	return i + len(lit), nil
}

// scanNumber scans a number starting at data[i]. Reaching the end of data
// is ErrIncomplete: the number may continue.
func scanNumber(data []byte, i int) (int, error) {
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return i, ErrIncomplete
	}
	if c := data[i]; c == '0' {
		i++
	} else if c-'1' <= 8 {
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
	} else {
		return i, syntaxErr("invalid character "+quoteChar(c)+" in numeric literal", i)
	}
	if i < len(data) && data[i] == '.' {
		i++
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		if i == j {
			if i >= len(data) {
				return i, ErrIncomplete
			}
			return i, badChar(data, i, "after decimal point in numeric literal")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		if i == j {
			if i >= len(data) {
				return i, ErrIncomplete
			}
			return i, badChar(data, i, "in exponent of numeric literal")
		}
	}
	if i >= len(data) {
		return i, ErrIncomplete
	}
	return i, nil
}
