package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// MalformedFrame is what InjectMalformedFrame writes into a watch: braces
// balance, so a framer delimits it as one value, but a trailing comma makes
// it invalid JSON.
const MalformedFrame = `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"faultproxy-malformed",}}}` + "\n"

// copyBody copies a response body to the client, flushing after every
// write and holding bytes while stalled. An upstream failure mid-body is
// passed on as a cut, so the client sees a broken body rather than a short
// one that ends cleanly.
func (p *Proxy) copyBody(ctx context.Context, w io.Writer, rc *http.ResponseController, body io.Reader, ex *exchange) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if !p.waitStall(ctx, ex) {
				return
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				p.cutConn(ex, FaultUpstream)
			}
			return
		}
	}
}

// frameOrErr is one frame read from the upstream, or why reading stopped.
type frameOrErr struct {
	frame []byte
	err   error
}

// copyFrames copies a watch stream frame by frame (next reads one: a line
// of JSON, or a length-prefixed protobuf message), applying the watch
// faults between frames.
func (p *Proxy) copyFrames(ctx context.Context, w io.Writer, rc *http.ResponseController, body io.ReadCloser, next func(*bufio.Reader) ([]byte, error), ex *exchange) {
	frames := make(chan frameOrErr)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		readFrames(quit, body, next, frames)
	}()
	defer func() {
		close(quit)
		body.Close() // unblocks the reader's upstream read
		wg.Wait()
	}()
	write := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ex.wake:
			if !p.waitStall(ctx, ex) {
				return
			}
			if n := p.takeInject(ex); n > 0 && !write(bytes.Repeat([]byte(MalformedFrame), n)) {
				return
			}
		case f := <-frames:
			if f.err != nil {
				if !errors.Is(f.err, io.EOF) && ctx.Err() == nil {
					p.cutConn(ex, FaultUpstream)
				}
				return
			}
			if !p.waitStall(ctx, ex) {
				return
			}
			// Injections armed while this frame was held go first.
			if n := p.takeInject(ex); n > 0 && !write(bytes.Repeat([]byte(MalformedFrame), n)) {
				return
			}
			if p.takeMidFrame(ex) {
				half := max(1, len(f.frame)/2)
				write(f.frame[:half])
				p.cutConn(ex, FaultMidFrame)
				return
			}
			if !write(f.frame) {
				return
			}
			p.setRecord(ex, func(rec *Record) { rec.Frames++ })
		}
	}
}

// readFrames sends each frame of body (as next reads them) on frames, then
// the error that ended the body (io.EOF at its clean end). It returns early
// when quit closes.
func readFrames(quit <-chan struct{}, body io.Reader, next func(*bufio.Reader) ([]byte, error), frames chan<- frameOrErr) {
	br := bufio.NewReaderSize(body, 64<<10)
	send := func(f frameOrErr) bool {
		select {
		case frames <- f:
			return true
		case <-quit:
			return false
		}
	}
	for {
		line, err := next(br)
		if len(line) > 0 && !send(frameOrErr{frame: line}) {
			return
		}
		if err != nil {
			send(frameOrErr{err: err})
			return
		}
	}
}

// readLine returns the next line with its newline (without one at the end
// of the stream), at most maxFrame bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxFrame {
			return nil, fmt.Errorf("faultproxy: a watch frame is larger than %d bytes", maxFrame)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// readLengthPrefixed returns the next frame of a protobuf watch stream: a
// 4-byte big-endian length and that many bytes, at most maxFrame in all.
func readLengthPrefixed(br *bufio.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(br, size[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return size[:], err
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if int64(n)+4 > maxFrame {
		return nil, fmt.Errorf("faultproxy: a watch frame is larger than %d bytes", maxFrame)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, size[:])
	m, err := io.ReadFull(br, frame[4:])
	if err != nil {
		return frame[:4+m], err
	}
	return frame, nil
}
