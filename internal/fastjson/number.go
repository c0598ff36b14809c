package fastjson

import (
	"strconv"
	"unsafe"
)

// number parses the number starting at data[i] with apimachinery's rule: a
// literal without '.' that parses as an int64 is an int64, anything else
// (fraction, exponent, out of int64 range) a float64. A literal beyond
// float64's range is an error, as it is for encoding/json.
func number(data []byte, i int) (any, int, error) {
	start := i
	neg := false
	if data[i] == '-' {
		neg = true
		i++
	}
	if i >= len(data) {
		return nil, i, syntaxErr("unexpected end of JSON input", i)
	}
	var u uint64
	digits := 0
	if c := data[i]; c == '0' {
		i++
		digits = 1
	} else if c-'1' <= 8 {
		for i < len(data) && data[i]-'0' <= 9 {
			u = u*10 + uint64(data[i]-'0')
			i++
			digits++
		}
	} else {
		return nil, i, syntaxErr("invalid character "+quoteChar(c)+" in numeric literal", i)
	}
	dot, exp := false, false
	if i < len(data) && data[i] == '.' {
		dot = true
		i++
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		if i == j {
			return nil, i, badChar(data, i, "after decimal point in numeric literal")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		exp = true
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := i
		for i < len(data) && data[i]-'0' <= 9 {
			i++
		}
		if i == j {
			return nil, i, badChar(data, i, "in exponent of numeric literal")
		}
	}
	if !dot && !exp {
		if digits <= 18 { // < 10^18, cannot overflow int64
			if neg {
				return -int64(u), i, nil
			}
			return int64(u), i, nil
		}
		if n, err := strconv.ParseInt(unsafe.String(&data[start], i-start), 10, 64); err == nil {
			return n, i, nil
		}
	}
	s := unsafe.String(&data[start], i-start)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, i, syntaxErr("number "+s+" out of float64 range", start)
	}
	return f, i, nil
}
