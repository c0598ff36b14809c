package wire

import (
	"io"
	"sync"
)

// Watch read buffers. A watch reads a burst (a streaming list's initial
// events, a relist's) best through a large buffer — one read takes
// whatever has arrived, and HTTP/2 sends one flow-control update per read
// — but spends nearly all its life idle, blocked in a read. burstReader
// reads through a small buffer of its own while events trickle in, and
// through a large one from a pool shared by every watch of the process
// while a read fills its buffer: an informer with dozens of idle watches
// holds dozens of small buffers, not dozens of large ones.
const (
	smallReadBuffer = 4 << 10
	largeReadBuffer = 64 << 10
)

var largeBuffers = sync.Pool{New: func() any { b := make([]byte, largeReadBuffer); return &b }}

// burstReader is a buffered reader over r whose buffer grows for bursts
// and shrinks back when the stream catches up (see above). It is not safe
// for concurrent use.
type burstReader struct {
	r          io.Reader
	small      []byte
	large      *[]byte // held while bursting
	buf        []byte  // small or *large
	start, end int
	bursting   bool // the last fill filled its buffer
}

func newBurstReader(r io.Reader) *burstReader {
	return &burstReader{r: r}
}

// Read reads what is buffered, filling the buffer first when it is empty.
func (b *burstReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.start == b.end {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.start:b.end])
	b.start += n
	return n, nil
}

// fill reads once into an empty buffer: the large one while bursting
// (taken from the pool), else the small one (the large one goes back).
func (b *burstReader) fill() error {
	if b.bursting {
		if b.large == nil {
			b.large = largeBuffers.Get().(*[]byte)
		}
		b.buf = *b.large
	} else {
		b.release()
		if b.small == nil {
			b.small = make([]byte, smallReadBuffer)
		}
		b.buf = b.small
	}
	// As bufio: a reader may return nothing and no error now and then,
	// but not for ever.
	for range 100 {
		n, err := b.r.Read(b.buf)
		b.start, b.end = 0, n
		b.bursting = n == len(b.buf)
		if n > 0 {
			return nil // an error comes back with the next read
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// release gives the large buffer back to the pool, if held; the buffer
// must hold nothing unread.
func (b *burstReader) release() {
	if b.large != nil {
		largeBuffers.Put(b.large)
		b.large = nil
	}
}
