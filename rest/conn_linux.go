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

// maxRW caps one read(2) or write(2), as package net does for stream
// sockets.
const maxRW = 1 << 30

// wrapConn returns c as a quietConn when it is a TCP connection, and c
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
	q := &quietConn{TCPConn: tc, raw: rc}
	q.readFD, q.writeFD = q.readOnce, q.writeSome
	return q
}

// quietConn is a TCP connection whose reads and writes call read(2) and
// write(2) without telling the Go scheduler that a system call is starting.
//
// Why: a watch receives an event now and then, and between events every
// thread of an idle program parks, the runtime's monitor thread (sysmon)
// included. A read or write through package net enters the system call the
// way any blocking call does, and the first one after such a pause wakes
// sysmon, which runs and parks again: about two context switches and a
// futex call per event (the HTTP/2 client also writes a WINDOW_UPDATE every
// 4 KiB it reads), a third of the CPU an informer spends on a metadata-only
// event (see docs/benchmarks.md). The socket is non-blocking (package net
// made it so), so each call returns at once, with data or EAGAIN, and cannot
// hold its thread; there is nothing for the scheduler to hand over while it
// runs. Waiting until the socket is ready is still the netpoller's, through
// syscall.RawConn, so deadlines and Close work as on any net.Conn.
//
// In race builds each call also makes the race detector's notes that
// syscall.Read and syscall.Write make (conn_race_linux.go).
type quietConn struct {
	*net.TCPConn
	raw syscall.RawConn
	// readFD and writeFD are c.readOnce and c.writeSome, made once: a method
	// value passed per call would be allocated per call.
	readFD, writeFD func(fd uintptr) bool

	rmu    sync.Mutex // serializes Read, which shares the fields below with readOnce
	rbuf   []byte
	rn     int
	rerrno syscall.Errno

	wmu  sync.Mutex // serializes Write, which shares the fields below with writeSome
	wbuf []byte     // what is left to write
	wn   int
	werr error // the system call's error, wrapped as package net wraps it
}

// readOnce reads once into c.rbuf. It returns false, to wait until the
// socket is readable, on EAGAIN.
func (c *quietConn) readOnce(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(c.rbuf))), uintptr(len(c.rbuf)))
		switch e {
		case 0:
			c.rn, c.rerrno = int(n), 0
			afterQuietRead(fd, c.rbuf[:n]) // at the end (n == 0) too, as syscall.Read
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			c.rn, c.rerrno = 0, e
			return true
		}
	}
}

// writeSome writes c.wbuf until it is all written or the socket's buffer is
// full. It returns false, to wait until the socket is writable, on EAGAIN.
func (c *quietConn) writeSome(fd uintptr) bool {
	beforeQuietWrite(fd, c.wbuf)
	for len(c.wbuf) > 0 {
		b := c.wbuf[:min(len(c.wbuf), maxRW)]
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		switch e {
		case 0:
			if n == 0 {
				// As package net: a stream write of no bytes and no
				// error would otherwise be retried forever.
				c.werr = io.ErrUnexpectedEOF
				return true
			}
			c.wn += int(n)
			c.wbuf = c.wbuf[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werr = os.NewSyscallError("write", e)
			return true
		}
	}
	return true
}

// Read reads as (*net.TCPConn).Read does, with the same errors: io.EOF at
// the end, and *net.OpError (Op "read") wrapping a deadline, a closed
// connection, or the system call's error.
func (c *quietConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return c.TCPConn.Read(b) // nil, or the closed connection's error
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.rbuf = b[:min(len(b), maxRW)]
	err := c.raw.Read(c.readFD)
	c.rbuf = nil
	if err != nil {
		return 0, c.opError("read", err)
	}
	if c.rerrno != 0 {
		return 0, c.opError("read", os.NewSyscallError("read", c.rerrno))
	}
	if c.rn == 0 {
		return 0, io.EOF
	}
	return c.rn, nil
}

// Write writes all of b as (*net.TCPConn).Write does, with the same errors:
// *net.OpError (Op "write") wrapping a deadline, a closed connection, or the
// system call's error, and the count of bytes written before it.
func (c *quietConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return c.TCPConn.Write(b) // the zero-length write(2) package net makes
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf, c.wn, c.werr = b, 0, nil
	err := c.raw.Write(c.writeFD)
	n := c.wn
	c.wbuf = nil
	if err != nil {
		return n, c.opError("write", err)
	}
	if werr := c.werr; werr != nil {
		c.werr = nil
		return n, c.opError("write", werr)
	}
	return n, nil
}

// opError names err as package net names the errors of Read and Write;
// syscall.RawConn's own errors are *net.OpError for "raw-read" and
// "raw-write", and the caller called Read or Write.
func (c *quietConn) opError(op string, err error) error {
	var raw *net.OpError
	if errors.As(err, &raw) {
		err = raw.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
