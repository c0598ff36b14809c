package rest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection, the client's
// wrapped by wrapConn.
func tcpPair(t *testing.T) (client net.Conn, server *net.TCPConn) {
	t.Helper()
	c, s := plainTCPPair(t)
	client = wrapConn(c)
	if _, ok := client.(*quietConn); !ok {
		t.Fatalf("wrapConn(%T) = %T, want *quietConn", c, client)
	}
	t.Cleanup(func() { client.Close() })
	return client, s
}

func TestQuietConnReadsInOrderThenEOF(t *testing.T) {
	c, s := tcpPair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: many reads, some waiting for data
	go func() {
		for rest := want; len(rest) > 0; {
			n := min(len(rest), 4093)
			if _, err := s.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
		s.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written in order", len(got), len(want))
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the end = %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("zero-length Read = %d, %v; want 0, nil", n, err)
	}
}

func TestQuietConnDeadline(t *testing.T) {
	c, _ := tcpPair(t)
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline = %v; want a timeout wrapping os.ErrDeadlineExceeded", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("Read past the deadline = %#v; want *net.OpError with Op read", err)
	}
}

func TestQuietConnCloseEndsWaitingRead(t *testing.T) {
	c, _ := tcpPair(t)
	closeEndsWaiting(t, c, "Read", func() error {
		_, err := c.Read(make([]byte, 8))
		return err
	})
}

// closeEndsWaiting runs op (a Read or Write on c that waits) in a
// goroutine, closes c once op waits on the netpoller, and fails the test
// unless op then returns net.ErrClosed.
func closeEndsWaiting(t *testing.T, c net.Conn, what string, op func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	time.Sleep(20 * time.Millisecond) // let op wait on the netpoller
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("%s on a closed conn = %v; want net.ErrClosed", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Close did not end a waiting %s", what)
	}
}

func TestQuietConnReset(t *testing.T) {
	c, s := tcpPair(t)
	if _, err := c.Write([]byte("unread by the server")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s.SetLinger(0) // close with RST
	s.Close()
	_, err := c.Read(make([]byte, 8))
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Fatalf("Read after a reset = %v; want *net.OpError (read) wrapping ECONNRESET", err)
	}
}

func TestTransportDialsQuietConns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	rt := newHTTPTransport(&Config{Host: srv.URL}, nil, false)
	defer rt.CloseIdleConnections()
	var conn net.Conn
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { conn = info.Conn },
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "hello" {
		t.Fatalf("body = %q, %v", body, err)
	}
	if _, ok := conn.(*quietConn); !ok {
		t.Fatalf("the transport's connection is %T, want *quietConn", conn)
	}
}

func TestQuietConnWritesAllOfALargeBuffer(t *testing.T) {
	c, s := tcpPair(t)
	want := bytes.Repeat([]byte("kdyn-write-test."), 1<<19) // 8 MiB: more than the socket buffers hold
	read := make(chan []byte, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // read late, so that Write fills the buffers and waits for room
		got := make([]byte, len(want))
		n, _ := io.ReadFull(s, got)
		read <- got[:n]
	}()
	n, err := c.Write(want)
	if n != len(want) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if got := <-read; !bytes.Equal(got, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(got), len(want))
	}
	if n, err := c.Write(nil); n != 0 || err != nil {
		t.Fatalf("zero-length Write = %d, %v; want 0, nil", n, err)
	}
}

func TestQuietConnWriteDeadlineAndClose(t *testing.T) {
	c, _ := tcpPair(t) // the peer never reads: the buffers fill and Write waits
	big := make([]byte, 64<<20)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := c.Write(big)
	var op *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "write" || n >= len(big) {
		t.Fatalf("Write past the deadline = %d, %v; want a partial count and *net.OpError (write) wrapping os.ErrDeadlineExceeded", n, err)
	}
	c.SetWriteDeadline(time.Time{})
	closeEndsWaiting(t, c, "Write", func() error {
		_, err := c.Write(big)
		return err
	})
}

func TestQuietConnWriteToAResetPeer(t *testing.T) {
	c, s := tcpPair(t)
	s.SetLinger(0)
	s.Close()
	time.Sleep(20 * time.Millisecond)
	var err error
	for i := 0; i < 100 && err == nil; i++ { // the first write may still be accepted by the kernel
		_, err = c.Write([]byte("after the reset"))
	}
	var op *net.OpError
	if !(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) || !errors.As(err, &op) || op.Op != "write" {
		t.Fatalf("Write to a reset peer = %v; want *net.OpError (write) wrapping ECONNRESET or EPIPE", err)
	}
}

// plainTCPPair returns both ends of a loopback TCP connection, unwrapped
// (tcpPair wraps the client's; tests compare with what *net.TCPConn does).
func plainTCPPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// The first Write after the peer's RST reports ECONNRESET, as
// (*net.TCPConn).Write does: nothing else (the race build's annotation
// included) may take the socket's pending error first and leave EPIPE.
func TestQuietConnFirstWriteAfterResetIsECONNRESET(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		var c net.Conn
		var s *net.TCPConn
		if quiet {
			c, s = tcpPair(t)
		} else {
			c, s = plainTCPPair(t)
		}
		s.SetLinger(0)
		s.Close()
		time.Sleep(50 * time.Millisecond) // let the RST arrive
		_, err := c.Write([]byte("after the reset"))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("quiet=%v: first Write after a reset = %v; want ECONNRESET", quiet, err)
		}
	}
}

// Zero-length calls report a closed connection, as (*net.TCPConn) does.
func TestQuietConnZeroLengthOnClosedConn(t *testing.T) {
	c, _ := tcpPair(t)
	c.Close()
	if _, err := c.Read(nil); !errors.Is(err, net.ErrClosed) {
		t.Errorf("zero-length Read on a closed conn = %v; want net.ErrClosed", err)
	}
	if _, err := c.Write(nil); !errors.Is(err, net.ErrClosed) {
		t.Errorf("zero-length Write on a closed conn = %v; want net.ErrClosed", err)
	}
}

// In race builds, a Read that returns io.EOF orders the reader after
// earlier I/O writes, as syscall.Read does; here the peer's goroutine sets
// shared before writing to a pipe (a release) and closing.
func TestQuietConnEOFOrdersAfterPeerWrites(t *testing.T) {
	c, s := tcpPair(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	var shared int
	go func() {
		shared = 1
		pw.Write([]byte{0})
		s.CloseWrite()
	}()
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read = %d, %v; want 0, io.EOF", n, err)
	}
	if shared != 1 {
		t.Fatal("shared not set before EOF")
	}
}

// Concurrent Writes do not interleave (each waits for room holding the
// connection's write lock), and a concurrent Read is unaffected.
func TestQuietConnConcurrentWritesAndRead(t *testing.T) {
	c, s := tcpPair(t)
	const writers, chunks, size = 4, 32, 256 << 10
	toClient := bytes.Repeat([]byte("r"), 4<<20)
	go func() {
		s.Write(toClient)
	}()
	readDone := make(chan error, 1)
	go func() {
		got := make([]byte, len(toClient))
		_, err := io.ReadFull(c, got)
		if err == nil && !bytes.Equal(got, toClient) {
			err = errors.New("the client read other bytes than the server wrote")
		}
		readDone <- err
	}()
	for w := range writers {
		go func() {
			chunk := bytes.Repeat([]byte{byte('a' + w)}, size)
			for range chunks {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}()
	}
	buf := make([]byte, size)
	for i := range writers * chunks {
		if _, err := io.ReadFull(s, buf); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if n := bytes.Count(buf, buf[:1]); n != size {
			t.Fatalf("chunk %d interleaves writes: %d of %d bytes are %q", i, n, size, buf[:1])
		}
	}
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
}
