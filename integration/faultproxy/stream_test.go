package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// A protobuf watch stream is split into its length-prefixed messages, each
// delivered whole as soon as it has arrived (a line-based split would hold
// them until some message happened to contain a newline byte).
func TestReadLengthPrefixed(t *testing.T) {
	msg := func(b string) []byte {
		out := []byte{0, 0, 0, byte(len(b))}
		return append(out, b...)
	}
	stream := append(append(msg("first\x00"), msg("")...), msg("third")...)
	br := bufio.NewReader(bytes.NewReader(append(stream, 0, 0)))
	for _, want := range [][]byte{msg("first\x00"), msg(""), msg("third")} {
		got, err := readLengthPrefixed(br)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	if got, err := readLengthPrefixed(br); !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 4 {
		t.Fatalf("a cut length: got %q, %v", got, err)
	}
	if _, err := readLengthPrefixed(bufio.NewReader(bytes.NewReader(nil))); err != io.EOF {
		t.Fatalf("the clean end: %v", err)
	}
}
