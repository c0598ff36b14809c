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
func afterQuietRead(fd uintptr, b []byte) {
	runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	syscall.Read(int(fd), nil)
}

// beforeQuietWrite is afterQuietRead's counterpart for writes: b is read,
// and a zero-length syscall.Write releases what the peer's read acquires.
func beforeQuietWrite(fd uintptr, b []byte) {
	runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	syscall.Write(int(fd), nil)
}
