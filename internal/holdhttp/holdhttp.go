package holdhttp

import (
	"net/http"
	"sync"
)

// First holds the first answer for one path, after the server has sent it,
// until Release is called. Other requests pass straight through. Make it
// with NewFirst.
type First struct {
	// Next is the RoundTripper that sends the requests.
	Next http.RoundTripper

	path     string
	once     sync.Once
	held     chan struct{}
	release  chan struct{}
	released sync.Once
}

// NewFirst returns a First for path; set Next before use (for example in
// rest.Config.WrapTransport).
func NewFirst(path string) *First {
	return &First{path: path, held: make(chan struct{}), release: make(chan struct{})}
}

// RoundTrip sends r with Next and, for the first answer for the path, waits
// for Release before returning it.
func (f *First) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := f.Next.RoundTrip(r)
	if r.URL.Path == f.path {
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
