package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunks hands out its parts one Read at a time (each at most len(p)),
// then err.
type chunks struct {
	parts [][]byte
	err   error
	sizes []int // len(p) of each Read
}

func (c *chunks) Read(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	if len(c.parts) == 0 {
		return 0, c.err
	}
	n := copy(p, c.parts[0])
	if c.parts[0] = c.parts[0][n:]; len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// A burstReader passes every byte through in order; it reads into its
// small buffer until a read fills that, then into a large one until a read
// comes back short, and then into the small one again, the large one back
// in the pool.
func TestBurstReader(t *testing.T) {
	burst := bytes.Repeat([]byte("b"), 3*largeReadBuffer)
	src := &chunks{parts: [][]byte{[]byte("hello"), burst, []byte("tail")}, err: io.EOF}
	br := newBurstReader(src)
	var got []byte
	buf := make([]byte, 1000)
	var holding []bool
	for {
		n, err := br.Read(buf)
		got = append(got, buf[:n]...)
		holding = append(holding, br.large != nil)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := append(append([]byte("hello"), burst...), "tail"...)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d, or not the same", len(got), len(want))
	}
	// The reads: small (hello, short), small (filled: a burst begins),
	// large ×2 (filled), large (short, the burst's rest: it is over),
	// small (tail), small (EOF).
	wantSizes := []int{smallReadBuffer, smallReadBuffer, largeReadBuffer, largeReadBuffer, largeReadBuffer, smallReadBuffer, smallReadBuffer}
	if len(src.sizes) != len(wantSizes) {
		t.Fatalf("reads of %v, want %v", src.sizes, wantSizes)
	}
	for i := range wantSizes {
		if src.sizes[i] != wantSizes[i] {
			t.Fatalf("reads of %v, want %v", src.sizes, wantSizes)
		}
	}
	if br.large != nil || !holding[len(holding)/2] {
		t.Fatalf("the large buffer was held %v, and is held at the end: %v", holding, br.large != nil)
	}
}

// A reader that returns nothing, for ever, is an error, not a spin.
func TestBurstReaderNoProgress(t *testing.T) {
	br := newBurstReader(&chunks{parts: [][]byte{nil}})
	if _, err := br.Read(make([]byte, 10)); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("Read = %v, want io.ErrNoProgress", err)
	}
}
