package rest

import (
	"strconv"
	"time"
)

// Metrics receives what a Client's requests do, for an exporter: package
// metrics adapts it to Prometheus under client-go's metric names
// (rest_client_requests_total and the like). Config.Metrics nil observes
// nothing. The methods are called from the goroutine sending the request:
// they must be cheap and safe for concurrent use.
type Metrics interface {
	// RequestDone is called once per attempt, watches included: verb is
	// the HTTP method, host the server's host[:port], code the answer's
	// HTTP status as a decimal string, or "<error>" when no answer came;
	// latency runs from sending the request to the answer's headers (or
	// the failure).
	RequestDone(verb, host, code string, latency time.Duration)
	// RateLimited is called for each attempt that passed the client-side
	// rate limiter (watches do not), with the time it waited there.
	RateLimited(verb, host string, wait time.Duration)
	// Retried is called each time a request is sent again: code is the
	// status of the answer that asked for it (a 429 or 5xx with
	// Retry-After) or "<error>" after a connection error.
	Retried(verb, host, code string)
}

// noMetrics is the Metrics of a Config without one.
type noMetrics struct{}

func (noMetrics) RequestDone(string, string, string, time.Duration) {}
func (noMetrics) RateLimited(string, string, time.Duration)         {}
func (noMetrics) Retried(string, string, string)                    {}

// errorCode is the code of an attempt that got no answer.
const errorCode = "<error>"

// statusCode is the Metrics code of an answer.
func statusCode(code int) string { return strconv.Itoa(code) }
