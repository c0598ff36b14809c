// Package holdhttp helps tests stage races with an HTTP client: a
// RoundTripper that holds the first answer for one path until the test lets
// it through, so that the test can act while a request is in flight (the
// server has answered; the caller has not yet seen the answer).
package holdhttp
