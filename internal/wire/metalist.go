package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadMetadataList reads a metadata-only list answer from body in
// whichever encoding the server chose (contentType) and calls each for
// every item, in order, as soon as the item has arrived: decoding overlaps
// the transfer and a protobuf list is never held whole, so memory stays at
// one item beyond what each keeps. It returns the list's metadata
// (resourceVersion, continue). An error from each stops the list and is
// returned as is. Items are *metav1.PartialObjectMetadata without
// managedFields unless keepManagedFields.
func ReadMetadataList(body io.Reader, contentType string, keepManagedFields bool, each func(*metav1.PartialObjectMetadata) error) (metav1.ListMeta, error) {
	if !IsProtobuf(contentType) {
		data, err := io.ReadAll(body)
		if err != nil {
			return metav1.ListMeta{}, fmt.Errorf("read metadata list: %w", err)
		}
		l, err := decodeMetadataListJSON(data, keepManagedFields)
		if err != nil {
			return metav1.ListMeta{}, err
		}
		for i := range l.Items {
			if err := each(&l.Items[i]); err != nil {
				return metav1.ListMeta{}, err
			}
		}
		return l.ListMeta, nil
	}
	lm, err := readProtobufList(bufio.NewReaderSize(body, 64<<10), func(raw []byte) error {
		p := &metav1.PartialObjectMetadata{}
		if err := unmarshalWithoutManagedFields(raw, keepManagedFields, p.Unmarshal, 1); err != nil {
			return fmt.Errorf("list item: %w", err)
		}
		p.SetGroupVersionKind(partialGVK)
		return each(p)
	})
	if se, ok := err.(stopError); ok {
		return metav1.ListMeta{}, se.err
	}
	if err != nil {
		return metav1.ListMeta{}, fmt.Errorf("read metadata list: %w", err)
	}
	return lm, nil
}

// ReadProtobufList reads a protobuf list answer (any List kind, in its
// "k8s\x00" envelope) from body and calls each with every item's encoding,
// in order, as soon as the item has arrived; the list is never held whole.
// The bytes each gets are reused for the next item: each must decode or
// copy them. An error from each stops the list and is returned as is.
func ReadProtobufList(body io.Reader, each func(raw []byte) error) (metav1.ListMeta, error) {
	lm, err := readProtobufList(bufio.NewReaderSize(body, 64<<10), each)
	if se, ok := err.(stopError); ok {
		return metav1.ListMeta{}, se.err
	}
	if err != nil {
		return metav1.ListMeta{}, fmt.Errorf("read protobuf list: %w", err)
	}
	return lm, nil
}

// stopError carries an error returned by the caller's each, to tell it
// from a malformed or broken stream.
type stopError struct{ err error }

func (s stopError) Error() string { return s.err.Error() }

// maxListItem bounds one encoded item of a protobuf list.
const maxListItem = 64 << 20

// readProtobufList reads a protobuf list (every Kubernetes List kind has
// the same layout) in its "k8s\x00" runtime.Unknown envelope from r, field
// by field: the envelope's raw field (2) holds the list, whose field 1 is
// the ListMeta and whose field 2 repeats once per item. item gets each
// item's encoding (reused for the next); its errors come back as
// stopError.
func readProtobufList(r *bufio.Reader, item func(raw []byte) error) (metav1.ListMeta, error) {
	var lm metav1.ListMeta
	magic := make([]byte, 4)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "k8s\x00" {
		return lm, fmt.Errorf("not a Kubernetes protobuf object (no k8s magic prefix)")
	}
	var buf []byte // one item or small field at a time, reused
	sawList := false
	for {
		num, typ, err := readTag(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return lm, err
		}
		if num == 2 && typ == 2 { // raw: the list
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return lm, unexpected(err)
			}
			if lm, buf, err = readList(&byteReader{r: r, n: int64(n)}, item, buf); err != nil {
				return lm, err
			}
			sawList = true
			continue
		}
		if num == 3 && typ == 2 { // contentEncoding
			if buf, err = readBytes(r, buf); err != nil {
				return lm, err
			}
			if len(buf) != 0 {
				return lm, fmt.Errorf("protobuf object with content encoding %q is not supported", buf)
			}
			continue
		}
		if err := skipField(r, typ); err != nil {
			return lm, err
		}
	}
	if !sawList {
		return lm, errors.New("protobuf envelope without an object")
	}
	return lm, nil
}

// readList reads the fields of a list from rd, which holds exactly the
// list's bytes.
func readList(rd *byteReader, item func(raw []byte) error, buf []byte) (metav1.ListMeta, []byte, error) {
	var lm metav1.ListMeta
	for rd.n > 0 {
		num, typ, err := readTag(rd)
		if err != nil {
			return lm, buf, unexpected(err)
		}
		switch {
		case num == 1 && typ == 2:
			if buf, err = readBytes(rd, buf); err != nil {
				return lm, buf, err
			}
			if err := lm.Unmarshal(buf); err != nil {
				return lm, buf, fmt.Errorf("list metadata: %w", err)
			}
		case num == 2 && typ == 2:
			if buf, err = readBytes(rd, buf); err != nil {
				return lm, buf, err
			}
			if err := item(buf); err != nil {
				return lm, buf, stopError{err}
			}
		default:
			if err := skipField(rd, typ); err != nil {
				return lm, buf, err
			}
		}
	}
	return lm, buf, nil
}

// byteReader reads at most n bytes of r (the rest of a length-delimited
// field) through r's buffer.
type byteReader struct {
	r *bufio.Reader
	n int64
}

func (b *byteReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

func (b *byteReader) ReadByte() (byte, error) {
	if b.n <= 0 {
		return 0, io.EOF
	}
	c, err := b.r.ReadByte()
	if err == nil {
		b.n--
	}
	return c, err
}

type byteReadReader interface {
	io.Reader
	io.ByteReader
}

func readTag(r byteReadReader) (num int, typ uint64, err error) {
	tag, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, err
	}
	return int(tag >> 3), tag & 7, nil
}

// readBytes reads a length-delimited value into buf (reused when it is
// large enough).
func readBytes(r byteReadReader, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return buf, unexpected(err)
	}
	if n > maxListItem {
		return buf, fmt.Errorf("a field of %d bytes is larger than %d", n, maxListItem)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, unexpected(err)
	}
	return buf, nil
}

func skipField(r byteReadReader, typ uint64) error {
	var n uint64
	switch typ {
	case 0:
		_, err := binary.ReadUvarint(r)
		return unexpected(err)
	case 1:
		n = 8
	case 5:
		n = 4
	case 2:
		var err error
		if n, err = binary.ReadUvarint(r); err != nil {
			return unexpected(err)
		}
	default:
		return fmt.Errorf("malformed protobuf: wire type %d", typ)
	}
	if n > math.MaxInt64 {
		return fmt.Errorf("malformed protobuf: a field of %d bytes", n)
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return unexpected(err)
}

// unexpected turns the end of the stream inside a value into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
