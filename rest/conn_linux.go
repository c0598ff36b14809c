package rest

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// maxRead caps one read, as package net does for stream sockets.
const maxRead = 1 << 30

// wrapConn returns c as a quietReadConn when it is a TCP connection, and c
// itself otherwise.
func wrapConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	q := &quietReadConn{TCPConn: tc, raw: rc}
	q.readFD = q.readOnce
	return q
}

// quietReadConn is a TCP connection whose reads call read(2) without telling
// the Go scheduler that a system call is starting.
//
// Why: a watch receives an event now and then, and between events every
// thread of an idle program parks, the runtime's monitor thread (sysmon)
// included. A read through package net enters the system call the way any
// blocking call does, and the first one after such a pause wakes sysmon,
// which then runs and parks again: about two context switches and a futex
// call per event, a third of the CPU an informer spends on a metadata-only
// event (see docs/benchmarks.md). The socket is non-blocking (package net
// made it so), so read(2) returns at once with data or EAGAIN and cannot hold
// its thread; there is nothing for the scheduler to hand over while it runs.
// Waiting for data is still the netpoller's, through syscall.RawConn.Read,
// so deadlines and Close work as on any net.Conn. Writes are package net's.
//
// In race builds each read also makes the race detector's note of it that
// syscall.Read makes (afterQuietRead).
type quietReadConn struct {
	*net.TCPConn
	raw    syscall.RawConn
	readFD func(fd uintptr) bool // q.readOnce, made once: a method value passed per Read would be allocated per Read

	mu    sync.Mutex // serializes Read, which shares buf, n and errno with readOnce
	buf   []byte
	n     int
	errno syscall.Errno
}

// readOnce reads once into c.buf. It returns false, to wait for the socket
// to become readable, on EAGAIN.
func (c *quietReadConn) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.buf))), uintptr(len(c.buf)))
		switch e {
		case 0:
			c.n, c.errno = int(n), 0
			if n > 0 {
				afterQuietRead(fd, c.buf[:n])
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			c.n, c.errno = 0, e
			return true
		}
	}
}

// Read reads as (*net.TCPConn).Read does, with the same errors: io.EOF at
// the end, and *net.OpError (Op "read") wrapping a deadline, a closed
// connection, or the system call's error.
func (c *quietReadConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if len(b) > maxRead {
		b = b[:maxRead]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = b
	err := c.raw.Read(c.readFD)
	c.buf = nil
	if err != nil {
		// RawConn.Read names its errors "raw-read"; the caller called Read.
		var op *net.OpError
		if errors.As(err, &op) {
			err = c.opError(op.Err)
		}
		return 0, err
	}
	if c.errno != 0 {
		return 0, c.opError(os.NewSyscallError("read", c.errno))
	}
	if c.n == 0 {
		return 0, io.EOF
	}
	return c.n, nil
}

func (c *quietReadConn) opError(err error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
