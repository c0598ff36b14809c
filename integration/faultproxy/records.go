package faultproxy

import (
	"slices"
	"time"
)

// Record is what the proxy saw of one request.
type Record struct {
	// Start is when the request arrived; End when the exchange ended (zero
	// while it runs).
	Start, End time.Time
	// Method, Path and Query are the request's.
	Method, Path, Query string
	// UserAgent is the request's User-Agent header.
	UserAgent string
	// Watch reports a watch request (watch=true or watch=1).
	Watch bool
	// Status is the HTTP status sent to the client; 0 when none was (the
	// exchange was cut, or ended, before).
	Status int
	// UpstreamStatus is the upstream's answer; 0 when the request was not
	// forwarded or no answer came.
	UpstreamStatus int
	// Faults are what the proxy did to the exchange, in order.
	Faults []Fault
	// Frames counts the watch frames delivered whole.
	Frames int
	// Stalled reports that Stall held some of the exchange.
	Stalled bool
	// ClientClosed reports that the client ended the exchange: neither the
	// upstream nor the proxy did.
	ClientClosed bool
}

// Has reports whether the exchange recorded fault f.
func (r Record) Has(f Fault) bool { return slices.Contains(r.Faults, f) }

// Records returns a copy of the record of every request so far, in the
// order they arrived.
func (p *Proxy) Records() []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Record, len(p.records))
	for i, r := range p.records {
		r.Faults = slices.Clone(r.Faults)
		out[i] = r
	}
	return out
}

// Counts maps a URL path to the number of requests per status sent (0: no
// status was sent).
type Counts map[string]map[int]int

// Total returns the number of requests counted.
func (c Counts) Total() int {
	n := 0
	for _, byStatus := range c {
		for _, k := range byStatus {
			n += k
		}
	}
	return n
}

// Requests counts every request so far by path and status.
func (p *Proxy) Requests() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := Counts{}
	for _, r := range p.records {
		if out[r.Path] == nil {
			out[r.Path] = map[int]int{}
		}
		out[r.Path][r.Status]++
	}
	return out
}
