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
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return false
		}
		b = b[n:]
		num, typ := int(tag>>3), tag&7
		switch typ {
		case wireVarint:
			if _, n = binary.Uvarint(b); n <= 0 {
				return false
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return false
			}
			b = b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return false
			}
			b = b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return false
			}
			v := b[n : n+int(l)]
			b = b[n+int(l):]
			if !fn(num, v) {
				return true
			}
		default:
			return false
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
