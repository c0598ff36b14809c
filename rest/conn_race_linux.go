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
// syscall.Read, whose annotation is the only way to reach that release; it
// returns at once. Race builds only: without it, every test whose server
// goroutine writes memory the client reads after the answer would report a
// race.
func afterQuietRead(fd uintptr, b []byte) {
	runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(b)), len(b))
	syscall.Read(int(fd), nil)
}
