//go:build linux && race

package rest

import (
	"runtime"
	"syscall"
	"unsafe"
)

// afterQuietRead tells the race detector what syscall.Read would have: that
// b was written, and that the read happens after the writes to the socket
// that syscall.Write released. The second half takes a zero-length
// syscall.Read, whose annotation is the only way to reach that release (the
// variable is syscall's own); it returns at once. Race builds only: without
// it, every test whose server goroutine writes memory the client reads after
// the answer would report a race.
//
// A zero-length read(2) on a socket returns 0 before the kernel looks at
// the socket, so it changes nothing: no pending error is taken, no EOF.
func afterQuietRead(fd uintptr, b []byte) {
	if len(b) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	}
	syscall.Read(int(fd), nil)
}

// beforeQuietWrite is afterQuietRead's counterpart for writes: b is read,
// and syscall.Write releases what the peer's read acquires. syscall.Write
// releases before it calls write(2), whatever the result, so it is given
// no descriptor (-1, EBADF): a zero-length write(2) on the socket would
// reach TCP, which takes the socket's pending error (the peer's reset, so
// that the real write reports EPIPE instead of ECONNRESET) and raises
// SIGPIPE on a connection that cannot send.
func beforeQuietWrite(_ uintptr, b []byte) {
	runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	syscall.Write(-1, nil)
}
