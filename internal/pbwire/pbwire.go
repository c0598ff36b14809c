// Package pbwire reads fields of protobuf-encoded messages without
// decoding them, for peeking at a few fields of Kubernetes protobuf
// objects (an object's name, namespace and resourceVersion in a watch
// frame) before deciding whether to decode the whole object. Varints are
// read with encoding/binary, which uses protobuf's encoding.
package pbwire

import "encoding/binary"

// Wire types of protobuf fields.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Each calls fn for every length-delimited field of the message b, in
// order, with the field number and its bytes (sharing b's memory), until fn
// returns false. Fields of other wire types are skipped. It reports false
// if b is not a well-formed message.
func Each(b []byte, fn func(num int, v []byte) bool) bool {
	for len(b) > 0 {
		num, typ, v, n, ok := field(b)
		if !ok {
			return false
		}
		b = b[n:]
		if typ == wireBytes && !fn(num, v) {
			return true
		}
	}
	return true
}

// Bytes returns the first length-delimited field number num of message b.
func Bytes(b []byte, num int) ([]byte, bool) {
	var out []byte
	found := false
	ok := Each(b, func(n int, v []byte) bool {
		if n == num {
			out, found = v, true
			return false
		}
		return true
	})
	return out, ok && found
}

// Path follows nested length-delimited fields: Path(b, 2, 1) is field 1 of
// the message in field 2 of b.
func Path(b []byte, nums ...int) ([]byte, bool) {
	for _, num := range nums {
		var ok bool
		if b, ok = Bytes(b, num); !ok {
			return nil, false
		}
	}
	return b, true
}

// AppendWithout appends the message b to dst without the fields number
// drop of the messages nested at path: AppendWithout(dst, b, 17, 1) drops
// field 17 of the message in field 1 of b (every occurrence of field 1, so
// a repeated field at path is stripped in each element), and the lengths
// of the enclosing fields shrink to match. With no path, field drop of b
// itself is left out. It reports false, with dst as given, if b is not a
// well-formed message.
func AppendWithout(dst, b []byte, drop int, path ...int) ([]byte, bool) {
	out, ok := appendWithout(dst, b, drop, path)
	if !ok {
		return dst, false
	}
	return out, true
}

// field splits the field at the start of b into its number, wire type,
// value (for length-delimited fields, without the length) and the length
// of the whole field as encoded.
func field(b []byte) (num int, typ uint64, v []byte, n int, ok bool) {
	tag, tn := binary.Uvarint(b)
	if tn <= 0 {
		return 0, 0, nil, 0, false
	}
	num, typ = int(tag>>3), tag&7
	rest := b[tn:]
	switch typ {
	case wireVarint:
		_, vn := binary.Uvarint(rest)
		if vn <= 0 {
			return 0, 0, nil, 0, false
		}
		return num, typ, rest[:vn], tn + vn, true
	case wireFixed64:
		if len(rest) < 8 {
			return 0, 0, nil, 0, false
		}
		return num, typ, rest[:8], tn + 8, true
	case wireFixed32:
		if len(rest) < 4 {
			return 0, 0, nil, 0, false
		}
		return num, typ, rest[:4], tn + 4, true
	case wireBytes:
		l, ln := binary.Uvarint(rest)
		if ln <= 0 || l > uint64(len(rest)-ln) {
			return 0, 0, nil, 0, false
		}
		return num, typ, rest[ln : ln+int(l)], tn + ln + int(l), true
	}
	return 0, 0, nil, 0, false
}

func sizeWithout(b []byte, drop int, path []int) (int, bool) {
	size := 0
	for len(b) > 0 {
		num, typ, v, n, ok := field(b)
		if !ok {
			return 0, false
		}
		switch {
		case len(path) == 0 && num == drop:
		case len(path) > 0 && num == path[0] && typ == wireBytes:
			s, ok := sizeWithout(v, drop, path[1:])
			if !ok {
				return 0, false
			}
			size += uvarintLen(uint64(num)<<3|wireBytes) + uvarintLen(uint64(s)) + s
		default:
			size += n
		}
		b = b[n:]
	}
	return size, true
}

func appendWithout(dst, b []byte, drop int, path []int) ([]byte, bool) {
	for len(b) > 0 {
		num, typ, v, n, ok := field(b)
		if !ok {
			return dst, false
		}
		switch {
		case len(path) == 0 && num == drop:
		case len(path) > 0 && num == path[0] && typ == wireBytes:
			// The length comes first, so the stripped size is counted
			// before the stripped bytes are written.
			s, ok := sizeWithout(v, drop, path[1:])
			if !ok {
				return dst, false
			}
			dst = binary.AppendUvarint(dst, uint64(num)<<3|wireBytes)
			dst = binary.AppendUvarint(dst, uint64(s))
			dst, _ = appendWithout(dst, v, drop, path[1:]) // well formed: sizeWithout read it
		default:
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst, true
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
