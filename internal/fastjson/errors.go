package fastjson

import (
	"errors"
	"strconv"
)

// ErrIncomplete is returned by [Scan] when data holds only a prefix of a JSON
// value (or nothing but whitespace): more input is needed to finish it.
var ErrIncomplete = errors.New("fastjson: incomplete JSON value")

// SyntaxError describes malformed input, or input that is well-formed JSON
// but cannot be represented (a number out of float64 range, nesting deeper
// than the limit). Its message has the form "fastjson: <what> at offset N".
type SyntaxError struct {
	// Msg describes the problem, without the "fastjson: " prefix and offset.
	Msg string
	// Offset is the byte offset in the input at which the problem was found.
	Offset int64
}

// Error implements the error interface.
func (e *SyntaxError) Error() string {
	return "fastjson: " + e.Msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

func syntaxErr(msg string, off int) error {
	return &SyntaxError{Msg: msg, Offset: int64(off)}
}

// quoteChar formats a byte for an error message the way encoding/json does.
func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c >= 0x20 && c < 0x7f:
		return "'" + string(rune(c)) + "'"
	default:
		return "byte 0x" + strconv.FormatUint(uint64(c), 16)
	}
}

// badChar reports an unexpected byte at data[i] (or the end of input).
func badChar(data []byte, i int, context string) error {
	if i >= len(data) {
		return syntaxErr("unexpected end of JSON input", i)
	}
	return syntaxErr("invalid character "+quoteChar(data[i])+" "+context, i)
}

const maxDepth = 10000 // same nesting limit as encoding/json

func depthErr(off int) error {
	return syntaxErr("exceeded max depth of "+strconv.Itoa(maxDepth), off)
}
