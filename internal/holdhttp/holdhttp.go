package holdhttp

import (
	"net/http"
	"sync"
	"sync/atomic"
)

// First holds the first answer for one path, after the server has sent it,
// until Release is called. Other requests pass straight through. Make it
// with NewFirst, or with NewFirstArmedLater to let answers through until
// Arm.
type First struct {
	// Next is the RoundTripper that sends the requests.
	Next http.RoundTripper

	disarmed atomic.Bool
	path     string
	once     sync.Once
	held     chan struct{}
	release  chan struct{}
	released sync.Once
}

// NewFirst returns a First for path; set Next before use (Wrap does, as
// rest.Config.WrapTransport).
func NewFirst(path string) *First {
	return &First{path: path, held: make(chan struct{}), release: make(chan struct{})}
}

// NewFirstArmedLater is NewFirst holding nothing until Arm: the answer held
// is the first for path after it.
func NewFirstArmedLater(path string) *First {
	f := NewFirst(path)
	f.disarmed.Store(true)
	return f
}

// Arm makes the next answer for the path the one held.
func (f *First) Arm() { f.disarmed.Store(false) }

// Wrap sets Next to rt and returns f, for rest.Config.WrapTransport.
func (f *First) Wrap(rt http.RoundTripper) http.RoundTripper {
	f.Next = rt
	return f
}

// RoundTrip sends r with Next and, for the first answer for the path (once
// armed), waits for Release before returning it.
func (f *First) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := f.Next.RoundTrip(r)
	if r.URL.Path == f.path && !f.disarmed.Load() {
		first := false
		f.once.Do(func() { first = true })
		if first {
			close(f.held)
			<-f.release
		}
	}
	return resp, err
}

// Held is closed once the first answer for the path is being held.
func (f *First) Held() <-chan struct{} { return f.held }

// Release lets the held answer through. It may be called more than once.
func (f *First) Release() { f.released.Do(func() { close(f.release) }) }
